--- @include "common"
-- ARGV[4] = statuses that may still change, ARGV[5] = the upstream task id, ARGV[6] = the upstream
-- session id. Returns 1 when bound. Binds once: a second upstream task for one task is a bug.
-- No touch and no publish: nothing a client reads changes.
local task = load_task()
if not task or not one_of(ARGV[4], task.status) then
  return 0
end
if redis.call('HEXISTS', key, 'upstreamTaskId') == 1 then
  return 0
end
redis.call('HSET', key, 'upstreamTaskId', ARGV[5], 'upstreamSessionId', ARGV[6])
return 1
