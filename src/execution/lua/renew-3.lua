--- @include "common"
-- KEYS[1] = leases, KEYS[2] = owners, KEYS[3] = workers. ARGV[1] = the worker's token,
-- ARGV[2] = lease length (ms), ARGV[3..] = the task ids it runs. One call per worker per interval,
-- however many jobs it runs.
-- A lease that lapsed is lost, whether or not a reclaim has handed its job on yet, and one another
-- worker holds is not ours: neither is renewed (that would take the job back from its next
-- worker), and their ids are returned so that the worker stops renewing them.
local token = ARGV[1]
local now = now_ms()
local deadline = now + tonumber(ARGV[2])
redis.call('ZADD', KEYS[3], deadline, token)
local gone = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  local ends = redis.call('ZSCORE', KEYS[1], id)
  if ends and tonumber(ends) >= now and redis.call('HGET', KEYS[2], id) == token then
    redis.call('ZADD', KEYS[1], deadline, id)
  else
    gone[#gone + 1] = id
  end
end
return gone
