-- KEYS: lock, waiter queue. ARGV: token. Deletes the lock (the fence lives on in its own key) and
-- wakes the next waiter. Returns 1 if the token held it, else 0.
--#include held-by-token.lua
redis.call('DEL', KEYS[1])
--#include wake-next.lua
