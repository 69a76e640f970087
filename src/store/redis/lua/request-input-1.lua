--- @include "common"
-- ARGV[4] = statuses that accept a request, ARGV[5] = the status it leads to, ARGV[6] = input key,
-- ARGV[7] = the request (JSON). Returns 1 when added; 0 when refused or the key was ever used.
local task = load_task()
if not task or not one_of(ARGV[4], task.status) then
  return 0
end
local input_key = ARGV[6]
for _, prefix in ipairs({ 'ir:', 'ans:', 'wd:' }) do
  if redis.call('HEXISTS', key, prefix .. input_key) == 1 then
    return 0
  end
end
redis.call('HSET', key, 'ir:' .. input_key, ARGV[7])
touch(task, ARGV[5])
return 1
