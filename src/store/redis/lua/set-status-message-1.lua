--- @include "common"
-- ARGV[4] = statuses that may still change, ARGV[5] = the message. Returns 1 when it changed.
local task = load_task()
if not task or not one_of(ARGV[4], task.status) then
  return 0
end
if redis.call('HGET', key, 'statusMessage') == ARGV[5] then
  return 0
end
redis.call('HSET', key, 'statusMessage', ARGV[5])
touch(task, task.status)
return 1
