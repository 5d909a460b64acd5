-- KEYS: lock, waiter queue. ARGV: token, lockAtLeastFor ms. Keeps the lock until lockAtLeastFor
-- after it was taken, or releases it as release.lua does if that is past. Both ends are the
-- server's clock: acquired_at as the acquire's TIME wrote it (an extend never rewrites it), and now
-- from TIME here; no client clock takes part, whatever it did since the acquire. Returns 2 if kept
-- (RedisScripts.KEPT), 1 if released, 0 if the token did not hold it.
--#include held-by-token.lua
local rest = string.sub(v, #mine + 1)
local until_ms = string.match(rest, '^fence=%d+ acquired_at=(%d+)') + ARGV[2]
local t = redis.call('TIME')
local keep = until_ms - (t[1] * 1000 + math.floor(t[2] / 1000))
if keep > 0 then
  rest = string.gsub(rest, '^(fence=%d+ acquired_at=%d+ expires_at=)%d+', '%1' .. string.format('%d', until_ms))
  redis.call('SET', KEYS[1], mine .. rest, 'PX', string.format('%d', keep))
  return 2
end
redis.call('DEL', KEYS[1])
--#include wake-next.lua
