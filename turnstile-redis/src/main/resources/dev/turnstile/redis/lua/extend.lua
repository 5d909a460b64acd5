-- KEYS: lock. ARGV: token, ttl ms. Returns 1 if extended. The new expires_at, for people, is the
-- server's TIME plus the ttl; acquired_at stays as the acquire wrote it.
--#include held-by-token.lua
local t = redis.call('TIME')
local until_ms = string.format('%d', t[1] * 1000 + math.floor(t[2] / 1000) + ARGV[2])
local rest = string.gsub(string.sub(v, #mine + 1), '^(fence=%d+ acquired_at=%d+ expires_at=)%d+', '%1' .. until_ms)
redis.call('SET', KEYS[1], mine .. rest, 'PX', ARGV[2])
return 1
