-- KEYS: lock, fence counter, waiter queue. ARGV: token, the next holder's value head and tail (as
-- for acquire.lua), its ttl ms, this client's waiter id. Ends the lease of the token and gives the
-- lock to the next holder, a waiter of the same client, with the next fence, unless another client
-- is first in the queue: then it releases as release.lua does. Returns the next holder's fence, -1
-- if only released, 0 if the token did not hold the lock.
--#include held-by-token.lua
local first = redis.call('ZRANGE', KEYS[3], 0, 0)[1]
if first and first ~= ARGV[5] then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[3], first)
  redis.call('PUBLISH', KEYS[1] .. ':released', ARGV[1] .. ' ' .. first)
  return -1
end
if first then redis.call('ZREM', KEYS[3], first) end
--#include next-fence.lua
redis.call('SET', KEYS[1],
    ARGV[2] .. string.format('%d acquired_at=%d expires_at=%d', fence, now_ms, now_ms + ARGV[4]) .. ARGV[3],
    'PX', ARGV[4])
return fence
