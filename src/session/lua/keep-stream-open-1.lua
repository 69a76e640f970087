--- @include "common"
-- KEYS[1] = the session's open-stream marks (HASH stream id -> until, epoch ms). ARGV[1] = stream
-- id, ARGV[2] = TTL (ms).
hold_mark(KEYS[1], ARGV[1], tonumber(ARGV[2]))
return 1
