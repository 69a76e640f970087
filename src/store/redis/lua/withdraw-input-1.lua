--- @include "common"
-- ARGV[4] = statuses that may still change, ARGV[5] = statuses that resume, ARGV[6] = the status
-- they resume to, ARGV[7] = input key. The key is remembered as withdrawn so that it is never reused.
local task = load_task()
if not task or not one_of(ARGV[4], task.status) then
  return 0
end
local input_key = ARGV[7]
if redis.call('HDEL', key, 'ir:' .. input_key) == 0 then
  return 0
end
redis.call('HSET', key, 'wd:' .. input_key, '1')
local status = task.status
if one_of(ARGV[5], status) and not has_outstanding_input() then
  status = ARGV[6]
end
touch(task, status)
return 1
