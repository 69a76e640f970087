--- @include "new-task"
--- @include "open-set"
-- One Redis only, never a Cluster: its keys lie in three slots. A task's whole creation in one step.
-- KEYS[1] = the task's hash (includes/common.lua), KEYS[2] = the work queue's waiting list
-- (src/execution/queue-keys.ts), KEYS[3] = the principal's open set (includes/open-set.lua).
-- ARGV[3] (the caller's clock) = the task's createdAt, ARGV[4] = expiry (epoch ms), ARGV[5] =
-- open-task limit (0: not counted, KEYS[3] untouched), ARGV[6] = principal, ARGV[7..] = field/value pairs.
-- Counts the task against the limit, writes it and queues its job (its id) in that order, or does
-- nothing. Returns { 1, open } created (open: the principal's open tasks now; absent when not
-- counted), { 0, open } at the limit, { 2 } when the id is another task's.
local state = creation_state(ARGV[6], ARGV[3])
if state == 'taken' then
  return { 2 }
end
-- Sent again after a dropped connection: counted and queued by the first run.
if state == 'again' then
  return { 1 }
end
local limit = tonumber(ARGV[5])
local held = { 1 }
if limit > 0 then
  held = hold_open(KEYS[3], now, limit, task_id, ARGV[4], true)
  if held[1] == 0 then
    return held
  end
end
write_new_task(ARGV[4], 7)
redis.call('LPUSH', KEYS[2], task_id)
return held
