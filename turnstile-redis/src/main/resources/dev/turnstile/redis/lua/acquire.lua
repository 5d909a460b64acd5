-- KEYS: lock, fence counter, and the waiter queue if a waiter id is given. ARGV: the value's head
-- up to the fence ('token=<token> fence='), its tail after the times (' owner=<owner>'), ttl ms,
-- the waiter id of a caller that will wait (absent if it will not). The script writes the fence,
-- acquired_at and expires_at in between, from the server's TIME. Returns the fence, or 0 if busy (a
-- busy attempt still bumps the counter: fences may skip numbers, never repeat). A busy waiter joins
-- the queue (keeping its place if it is in it already); a waiter that gets the lock leaves it.
local waiter = ARGV[4]
--#include next-fence.lua
if not redis.call('SET', KEYS[1],
    ARGV[1] .. string.format('%d acquired_at=%d expires_at=%d', fence, now_ms, now_ms + ARGV[3]) .. ARGV[2],
    'NX', 'PX', ARGV[3]) then
  if waiter then
    local t = redis.call('TIME')
    redis.call('ZADD', KEYS[3], 'NX', t[1] * 1000000 + t[2], waiter)
    redis.call('PEXPIRE', KEYS[3], 60000)
  end
  return 0
end
if waiter then redis.call('ZREM', KEYS[3], waiter) end
return fence
