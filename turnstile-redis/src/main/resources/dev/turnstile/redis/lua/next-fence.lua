-- Bumps the counter KEYS[2] into `fence`, floored by the server's clock: the fence is
-- max(counter + 1, TIME in µs rounded down to the millisecond), and the counter keeps it. Leaves
-- `t` (the server's TIME) and `now_ms` (the same instant in ms) for the lock's value.
--
-- Why the floor is on every acquire, and why a millisecond floor is enough. Redis replicates
-- asynchronously, so a failover (Sentinel, Cluster, or a hand-made REPLICAOF NO ONE) can lose the
-- last writes: the promoted replica's counter is present but stale, and a bare INCR would hand out
-- a fence that was already issued. The floor prevents that, under two conditions:
--
-- 1. Fences do not run ahead of the clock. Within one millisecond the counter moves by one per
--    acquire from the millisecond's start; a script takes microseconds, so fewer than 1000
--    acquires of one name fit in a millisecond, and every fence issued at server time t is at most
--    t in µs. (A server clock stepped back lets the counter run ahead by the step; on that server
--    the fences still increase, by the counter.)
-- 2. A failover takes longer than the clocks disagree, plus 1 ms. Writes lost in a failover were
--    made before the replica was promoted: Sentinel promotes a replica only after
--    down-after-milliseconds (30 s by default) and Cluster after cluster-node-timeout (15 s by
--    default). The first fence the new master issues is at least its clock, to the millisecond
--    below; every fence lost with the old master was at most the old master's clock when it was
--    issued. So the new fence is greater whenever the two servers' clocks disagree by less than
--    the failover took, less 1 ms: with NTP, milliseconds against seconds.
--
-- What it does not cover: a forced or manual failover (CLUSTER FAILOVER TAKEOVER, SENTINEL
-- FAILOVER) that promotes a replica within milliseconds of a lost write, and servers whose clocks
-- disagree by more than the failover takes. The replica acknowledgement (WAIT) makes a lost
-- acquire rarer still; see RedisLockStore.Builder#replicaAcks.
--
-- Cost: TIME and a comparison on every acquire (about 0.6 µs of server time); the counter is
-- rewritten at most once per millisecond per name. A missing counter (a new name, a restart
-- without persistence, eviction) restarts at the clock to the microsecond, not to the millisecond
-- below: a fence issued earlier in the same millisecond, from the floor or the counter, is at most
-- its own issue time in µs, and a script takes more than a microsecond, so the new fence is still
-- greater. Lua prints numbers with 14 significant digits, so the fence (16 digits: it follows the
-- clock in µs) is formatted with %d.
local fence = redis.call('INCR', KEYS[2])
local t = redis.call('TIME')
local floor = t[1] * 1000000 + t[2]
if fence > 1 then floor = floor - t[2] % 1000 end
if fence < floor then
  fence = floor
  redis.call('SET', KEYS[2], string.format('%d', fence))
end
local now_ms = t[1] * 1000 + math.floor(t[2] / 1000)
