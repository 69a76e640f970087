--- @include "counted-creation"
-- One Redis only, never a Cluster: its keys lie in three slots. The creation of a task whose job
-- the creating replica runs itself, never queued (docs/decisions/0032-durable-when-it-must-be.md).
-- KEYS[1] = the task's hash (includes/common.lua), KEYS[2] = the principal's open set
-- (includes/open-set.lua), KEYS[3] = the work queue's leases, KEYS[4] = its owners, KEYS[5] = its
-- workers (src/execution/queue-keys.ts).
-- ARGV[3] (the caller's clock) = the task's createdAt, ARGV[4] = expiry (epoch ms), ARGV[5] =
-- open-task limit (0: not counted, KEYS[2] untouched), ARGV[6] = principal, ARGV[7] = the worker's
-- token, ARGV[8] = lease length (ms), ARGV[9..] = field/value pairs.
-- Counts the task against the limit, writes it and leases its job to the worker, in that order, or
-- does nothing. Returns { 1, open } created (open: the principal's count, absent when not counted),
-- { 0, open } at the limit, { 2 } when the id is another task's.
local created, reply = create_counted(KEYS[2], 9)
if created then
  -- Leases run on Redis's clock, as in every queue script (src/execution/lua/includes/common.lua).
  local time = redis.call('TIME')
  local deadline = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) + tonumber(ARGV[8])
  redis.call('ZADD', KEYS[5], deadline, ARGV[7])
  redis.call('HSET', KEYS[4], task_id, ARGV[7])
  redis.call('ZADD', KEYS[3], deadline, task_id)
end
return reply
