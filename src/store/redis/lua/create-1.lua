--- @include "new-task"
-- ARGV[4] = expiry (epoch ms), ARGV[5] = principal, ARGV[6..] = field/value pairs (see
-- includes/new-task.lua); the caller's clock (ARGV[3]) is the task's createdAt. Returns 0 when the id is
-- taken by another task.
local state = creation_state(ARGV[5], ARGV[3])
if state == 'taken' then
  return 0
end
if state == 'new' then
  write_new_task(ARGV[4], 6)
end
return 1
