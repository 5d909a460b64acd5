-- Returns 0 unless KEYS[1] is held by the token ARGV[1]; leaves the value in v, its prefix in mine.
-- The token comes first in the value so that it is compared exactly (a prefix match ending at the
-- space), whatever the owner text contains.
local v = redis.call('GET', KEYS[1])
local mine = 'token=' .. ARGV[1] .. ' '
if not v or string.sub(v, 1, #mine) ~= mine then return 0 end
