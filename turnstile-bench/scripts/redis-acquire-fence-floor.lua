-- Snapshot of RedisLockStore.ACQUIRE with NEXT_FENCE inlined (the fence floor), for redis-script-cost.sh.
-- Keep in step with RedisLockStore when its acquire script changes; the store's copy is the one that runs.
-- Since issue 22 (lockAtLeastFor on the server's clock) the script writes acquired_at and expires_at from
-- TIME: ARGV[2] is the value's tail after them (' owner=<owner>').
local waiter = ARGV[4]
local fence = redis.call('INCR', KEYS[2])
local t = redis.call('TIME')
local floor = t[1] * 1000000 + t[2]
if fence > 1 then floor = floor - t[2] % 1000 end
if fence < floor then
  fence = floor
  redis.call('SET', KEYS[2], string.format('%d', fence))
end
if not redis.call('SET', KEYS[1], ARGV[1] .. string.format('%d acquired_at=%d expires_at=%d', fence, t[1] * 1000 + math.floor(t[2] / 1000), t[1] * 1000 + math.floor(t[2] / 1000) + ARGV[3])
 .. ARGV[2], 'NX', 'PX', ARGV[3]) then
  if waiter then
    local t = redis.call('TIME')
    redis.call('ZADD', KEYS[3], 'NX', t[1] * 1000000 + t[2], waiter)
    redis.call('PEXPIRE', KEYS[3], 60000)
  end
  return 0
end
if waiter then redis.call('ZREM', KEYS[3], waiter) end
return fence
