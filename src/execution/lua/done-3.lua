--- @include "common"
-- KEYS[1] = leases, KEYS[2] = owners, KEYS[3] = lost. ARGV[1] = the worker's token, ARGV[2] = the task id.
-- Ends a job, if this worker still holds its lease; a job handed on to another worker is that
-- worker's to end. Returns 1 when it ended the job.
if redis.call('HGET', KEYS[2], ARGV[2]) ~= ARGV[1] then
  return 0
end
redis.call('ZREM', KEYS[1], ARGV[2])
redis.call('HDEL', KEYS[2], ARGV[2])
redis.call('HDEL', KEYS[3], ARGV[2])
return 1
