--- @include "common"
-- KEYS[1] = the due index, KEYS[2] = the clean-up meta. ARGV[1] = session id (deleted by its client).
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
