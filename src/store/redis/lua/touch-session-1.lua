--- @include "common"
-- ARGV[4] = principal, ARGV[5] = the session id. Returns nil when not found (or foreign), else the hash.
-- Rebinding a task's pushes to a session is no status or content change: terminal tasks take it too,
-- and lastUpdatedAt stays. A change is announced only when the session actually changed.
local task = load_task()
if not task or task.principal ~= ARGV[4] then
  return false
end
if task.session_id ~= ARGV[5] then
  redis.call('HSET', key, 'sessionId', ARGV[5])
  task.session_id = ARGV[5]
  publish(task, task.status, string.format('%.0f', task.last_updated_at))
end
return redis.call('HGETALL', key)
