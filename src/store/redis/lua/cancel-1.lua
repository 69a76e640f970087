--- @include "common"
-- ARGV[4] = principal, ARGV[5] = statuses it may cancel from, ARGV[6] = the cancelled status,
-- ARGV[7] = status message. Returns nil when not found (or foreign), else { changed (0|1), hash }.
local task = load_task()
if not task or task.principal ~= ARGV[4] then
  return false
end
local changed = 0
if one_of(ARGV[5], task.status) then
  redis.call('HSET', key, 'cancelRequested', '1', 'statusMessage', ARGV[7])
  touch(task, ARGV[6])
  changed = 1
end
return { changed, redis.call('HGETALL', key) }
