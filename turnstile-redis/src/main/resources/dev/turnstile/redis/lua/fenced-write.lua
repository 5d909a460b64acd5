-- A fenced write: applies only if ARGV[1] is at least the fence recorded in KEYS[2], and records it.
-- KEYS[1]  the data key; KEYS[2]  its fence key (same hash slot)
-- ARGV[1]  the fence, a positive decimal without leading zeros (compared as text, so any 64-bit
--          value compares exactly: Lua numbers are doubles)
-- ARGV[2]  'set' (ARGV[3] the value), 'hset' (ARGV[3] the field, ARGV[4] the value) or 'admit'
--          (nothing but the record, for a gate)
-- Returns {0} when applied; {1, the higher recorded fence} when refused; {2, 'fence' or 'type',
-- what} when the keys hold something a fenced write cannot judge or write: nothing written then.
-- Every check comes before the first write: a script is not rolled back when a later call fails.
local seen = redis.call('GET', KEYS[2])
local f = ARGV[1]
if seen and not string.find(seen, '^[1-9]%d*$') then
  return {2, 'fence', seen}
end
if seen and (#seen > #f or (#seen == #f and seen > f)) then
  return {1, seen}
end
if ARGV[2] == 'hset' then
  local t = redis.call('TYPE', KEYS[1])['ok']
  if t ~= 'hash' and t ~= 'none' then
    return {2, 'type', t}
  end
end
redis.call('SET', KEYS[2], f)
if ARGV[2] == 'set' then
  redis.call('SET', KEYS[1], ARGV[3])
elseif ARGV[2] == 'hset' then
  redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])
end
return {0}
