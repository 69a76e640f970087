-- KEYS[1] = leases, KEYS[2] = workers. ARGV[1] = the worker's token, ARGV[2] = lease length (ms),
-- ARGV[3..] = the task ids it runs. One call per worker per interval, however many jobs it runs.
-- A lease that lapsed is lost, whether or not a reclaim has handed its job on yet: it is not renewed
-- (that would take the job back from its next worker), and its id is returned so that the worker
-- stops renewing it.
local token = ARGV[1]
local now = now_ms()
local deadline = now + tonumber(ARGV[2])
redis.call('ZADD', KEYS[2], deadline, token)
local gone = {}
for i = 3, #ARGV do
  local member = lease_member(token, ARGV[i])
  local ends = redis.call('ZSCORE', KEYS[1], member)
  if ends and tonumber(ends) >= now then
    redis.call('ZADD', KEYS[1], deadline, member)
  else
    gone[#gone + 1] = ARGV[i]
  end
end
return gone
