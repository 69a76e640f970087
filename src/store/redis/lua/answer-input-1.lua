--- @include "common"
-- ARGV[4] = principal, ARGV[5] = statuses that may still change, ARGV[6] = statuses that resume,
-- ARGV[7] = the status they resume to, ARGV[8..] = input key / answer (JSON) pairs.
-- Returns nil when not found (or foreign), else { applied keys, hash }.
-- One script settles all keys and decides on resuming, so racing partial answers cannot both resume.
local task = load_task()
if not task or task.principal ~= ARGV[4] then
  return false
end
local applied = {}
if one_of(ARGV[5], task.status) then
  for i = 8, #ARGV, 2 do
    local input_key = ARGV[i]
    if redis.call('HDEL', key, 'ir:' .. input_key) == 1 then
      redis.call('HSET', key, 'ans:' .. input_key, ARGV[i + 1])
      applied[#applied + 1] = input_key
    end
  end
end
if #applied > 0 then
  local status = task.status
  if one_of(ARGV[6], status) and not has_outstanding_input() then
    status = ARGV[7]
  end
  touch(task, status)
end
return { applied, redis.call('HGETALL', key) }
