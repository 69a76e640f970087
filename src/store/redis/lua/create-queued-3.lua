--- @include "counted-creation"
-- One Redis only, never a Cluster: its keys lie in three slots. A task's whole creation in one step.
-- KEYS[1] = the task's hash (includes/common.lua), KEYS[2] = the work queue's waiting list
-- (src/execution/queue-keys.ts), KEYS[3] = the principal's open set (includes/open-set.lua).
-- ARGV[3] (the caller's clock) = the task's createdAt, ARGV[4] = expiry (epoch ms), ARGV[5] =
-- open-task limit (0: not counted, KEYS[3] untouched), ARGV[6] = principal, ARGV[7..] = field/value pairs.
-- Counts the task against the limit, writes it and queues its job (its id) in that order, or does
-- nothing. Returns { 1, open } created (open: the principal's open tasks now; absent when not
-- counted), { 0, open } at the limit, { 2 } when the id is another task's.
local created, reply = create_counted(KEYS[3], 7)
if created then
  redis.call('LPUSH', KEYS[2], task_id)
end
return reply
