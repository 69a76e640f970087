--- @include "common"
-- ARGV[4] = statuses that may still change, ARGV[5] = the message. Returns 1 when it changed.
-- A requested cancel keeps its message until the task ends: it is what the client waits on.
local task = load_task()
if not task or not one_of(ARGV[4], task.status) then
  return 0
end
local fields = redis.call('HMGET', key, 'statusMessage', 'cancelRequested')
if fields[1] == ARGV[5] or fields[2] == '1' then
  return 0
end
redis.call('HSET', key, 'statusMessage', ARGV[5])
touch(task, task.status)
return 1
