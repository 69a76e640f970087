-- KEYS[1] = leases, KEYS[2] = workers. ARGV[1] = the worker's token, ARGV[2] = lease length (ms),
-- ARGV[3..] = the task ids it runs. One call per worker per interval, however many jobs it runs.
-- A lease that is gone was handed on to another worker: it is not renewed (that would take the job
-- back), and its id is returned so that the worker stops renewing it.
local token = ARGV[1]
local deadline = now_ms() + tonumber(ARGV[2])
redis.call('ZADD', KEYS[2], deadline, token)
local gone = {}
for i = 3, #ARGV do
  local member = lease_member(token, ARGV[i])
  if redis.call('ZSCORE', KEYS[1], member) then
    redis.call('ZADD', KEYS[1], deadline, member)
  else
    gone[#gone + 1] = ARGV[i]
  end
end
return gone
