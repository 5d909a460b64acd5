-- Snapshot of RedisLockStore.ACQUIRE with NEXT_FENCE inlined (the fence floor), for redis-script-cost.sh.
-- Keep in step with RedisLockStore when its acquire script changes; the store's copy is the one that runs.
local waiter = ARGV[4]
local fence = redis.call('INCR', KEYS[2])
local t = redis.call('TIME')
local floor = t[1] * 1000000 + t[2]
if fence > 1 then floor = floor - t[2] % 1000 end
if fence < floor then
  fence = floor
  redis.call('SET', KEYS[2], string.format('%d', fence))
end
if not redis.call('SET', KEYS[1], ARGV[1] .. string.format('%d', fence) .. ARGV[2], 'NX', 'PX', ARGV[3]) then
  if waiter then
    local t = redis.call('TIME')
    redis.call('ZADD', KEYS[3], 'NX', t[1] * 1000000 + t[2], waiter)
    redis.call('PEXPIRE', KEYS[3], 60000)
  end
  return 0
end
if waiter then redis.call('ZREM', KEYS[3], waiter) end
return fence
