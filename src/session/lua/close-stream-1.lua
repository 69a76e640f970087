--- @include "common"
-- KEYS[1] = the session's open-stream marks. ARGV[1] = stream id. Its pushes become claimable.
redis.call('HDEL', KEYS[1], ARGV[1])
return 1
