--- @include "common"
-- ARGV[4] = statuses that may still change. Returns the hash, or nil when not found.
local task = load_task()
if not task then
  return false
end
if one_of(ARGV[4], task.status) and redis.call('HEXISTS', key, 'startedAt') == 0 then
  redis.call('HSET', key, 'startedAt', ARGV[3])
  touch(task, task.status)
end
return redis.call('HGETALL', key)
