--- @include "common"
-- KEYS[1] = the session's hash. ARGV[1] = idle TTL (ms). Refreshes the TTL and returns the hash;
-- nil when unknown, expired or deleted.
if redis.call('PEXPIRE', KEYS[1], ARGV[1]) == 0 then
  return false
end
return redis.call('HGETALL', KEYS[1])
