--- @include "common"
-- KEYS[1] = the due index, KEYS[2] = the clean-up meta. ARGV[1] = session id, ARGV[2] = idle TTL
-- (ms), ARGV[3] = meta JSON. The session is due when its idle TTL would run out untouched.
redis.call('ZADD', KEYS[1], digits(now_ms() + tonumber(ARGV[2])), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return 1
