-- A fenced write: applies only if ARGV[1] is at least the fence recorded in KEYS[2], and records it.
-- KEYS[1]  the data key; KEYS[2]  its fence key (same hash slot)
-- ARGV[1]  the fence, a positive decimal without leading zeros (compared as text, so any 64-bit
--          value compares exactly: Lua numbers are doubles)
-- ARGV[2]  'set' (ARGV[3] the value), 'hset' (ARGV[3] the field, ARGV[4] the value) or 'admit'
--          (nothing but the record, for a gate)
-- Returns nil when applied, or the higher recorded fence (a string) when refused: nothing written.
local seen = redis.call('GET', KEYS[2])
local f = ARGV[1]
if seen and (#seen > #f or (#seen == #f and seen > f)) then
  return seen
end
redis.call('SET', KEYS[2], f)
if ARGV[2] == 'set' then
  redis.call('SET', KEYS[1], ARGV[3])
elseif ARGV[2] == 'hset' then
  redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])
end
return false
