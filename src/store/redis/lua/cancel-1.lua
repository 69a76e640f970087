--- @include "common"
-- ARGV[4] = principal, ARGV[5] = statuses it may cancel from, ARGV[6] = the cancelled status,
-- ARGV[7] = status message, ARGV[8] = status message while an upstream task that backs the task
-- has not answered the cancel. Returns nil when not found (or foreign), else { changed (0|1), hash }.
local task = load_task()
if not task or task.principal ~= ARGV[4] then
  return false
end
local changed = 0
if one_of(ARGV[5], task.status) then
  local fields = redis.call('HMGET', key, 'upstreamTaskId', 'cancelRequested')
  if not fields[1] then
    redis.call('HSET', key, 'cancelRequested', '1', 'statusMessage', ARGV[7])
    touch(task, ARGV[6])
    changed = 1
  elseif fields[2] ~= '1' then
    -- Backed by an upstream task: its mirror forwards the cancel and ends the record with the answer.
    redis.call('HSET', key, 'cancelRequested', '1', 'statusMessage', ARGV[8])
    touch(task, task.status, ',"cancelRequested":true')
    changed = 1
  end
end
return { changed, redis.call('HGETALL', key) }
