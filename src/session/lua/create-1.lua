--- @include "common"
-- KEYS[1] = the session's hash. ARGV[1] = idle TTL (ms), ARGV[2..] = field/value pairs.
-- Returns 0 when the id is taken. Fields and TTL are set in one step, so no session lives forever.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
