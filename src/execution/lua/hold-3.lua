--- @include "common"
-- KEYS[1] = leases, KEYS[2] = owners, KEYS[3] = workers. ARGV[1] = the worker's token,
-- ARGV[2] = lease length (ms), ARGV[3] = the task id.
-- Leases a job to the worker that runs it from its task's creation (it was never queued), and
-- refreshes the worker's heartbeat. A job some worker holds already stays that worker's.
-- Returns 1 when the lease is the caller's.
local deadline = now_ms() + tonumber(ARGV[2])
redis.call('ZADD', KEYS[3], deadline, ARGV[1])
if redis.call('HSETNX', KEYS[2], ARGV[3], ARGV[1]) == 0 then
  return 0
end
redis.call('ZADD', KEYS[1], deadline, ARGV[3])
return 1
