-- KEYS: lock, fence counter. ARGV: unusedFor in µs. Deletes the fence counter of a free lock whose
-- fence is more than unusedFor below the server's clock (in µs); returns 1 if it did, else 0.
--
-- Why that keeps fences rising. Every fence is floored by the clock when issued (next-fence.lua), so
-- a counter below now - unusedFor was last bumped at least unusedFor ago, and the lock key is gone,
-- so no lease (nor a lockAtLeastFor hold) runs. A name used again after its counter is deleted
-- restarts at the clock in µs, above the deleted counter as long as this server's clock has not
-- stepped back by more than unusedFor since. A counter that ran ahead of the clock (more than 1000
-- acquires in a millisecond, or a clock stepped back) is simply kept: the condition is the safety
-- check itself, not an estimate of when the name was used.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local fence = tonumber(redis.call('GET', KEYS[2]))
if not fence then return 0 end
local t = redis.call('TIME')
if fence < t[1] * 1000000 + t[2] - tonumber(ARGV[1]) then
  redis.call('DEL', KEYS[2])
  return 1
end
return 0
