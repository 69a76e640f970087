--- @include "common"
-- ARGV[4] = statuses it may finish from, ARGV[5] = the terminal status, ARGV[6..] = field/value
-- pairs of the outcome. Returns the task's principal when finished (whose open-task count the
-- caller releases), 0 when refused (e.g. already terminal).
local task = load_task()
if not task or not one_of(ARGV[4], task.status) then
  return 0
end
redis.call('HSET', key, unpack(ARGV, 6))
touch(task, ARGV[5])
return task.principal
