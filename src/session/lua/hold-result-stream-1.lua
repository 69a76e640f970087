--- @include "common"
-- KEYS[1] = the task's result-stream marks (HASH holder -> until, epoch ms). ARGV[1] = holder,
-- ARGV[2] = TTL (ms).
hold_mark(KEYS[1], ARGV[1], tonumber(ARGV[2]))
return 1
