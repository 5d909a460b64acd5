-- KEYS: lock, waiter queue. ARGV: '' (no token). Returns 1 if a lease was ended, else 0.
if redis.call('DEL', KEYS[1]) == 0 then return 0 end
--#include wake-next.lua
