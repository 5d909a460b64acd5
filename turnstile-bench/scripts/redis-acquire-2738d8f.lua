-- Snapshot of RedisLockStore.ACQUIRE at commit 2738d8f (before the fence floor), for redis-script-cost.sh:
-- the baseline of the server-cost comparison in docs/benchmarks.md. Not used by the store.
local waiter = ARGV[4] ~= '' and ARGV[4]
local clock_fences = ARGV[5]
local fence = redis.call('INCR', KEYS[2])
if fence == 1 or clock_fences then
  local t = redis.call('TIME')
  local micros = t[1] * 1000000 + t[2]
  if fence < micros then
    fence = micros
    redis.call('SET', KEYS[2], string.format('%d', fence))
  end
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
