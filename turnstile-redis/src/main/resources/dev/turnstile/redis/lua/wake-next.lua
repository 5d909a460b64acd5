-- A release wakes the waiters with a message "<token> <waiter id>" on <lock>:released, naming the
-- longest-queued waiter (taken off the queue), or "<token>" when none is queued. The named one
-- tries at once; the others a moment later, in case it is gone. So one process, not all of them,
-- races for the lock, and the lock goes round the waiting processes in turn. The message goes out
-- even when nobody is queued: a client that has just released and wants the lock again is not
-- queued while it lets the others go first, and listens for their release. Returns 1.
if redis.call('EXISTS', KEYS[2]) == 1 then
  local next = redis.call('ZPOPMIN', KEYS[2])[1]
  if next then
    redis.call('PUBLISH', KEYS[1] .. ':released', ARGV[1] .. ' ' .. next)
    return 1
  end
end
redis.call('PUBLISH', KEYS[1] .. ':released', ARGV[1])
return 1
