--- @include "common"
-- KEYS[1] = waiting, KEYS[2] = this worker's claimed list, KEYS[3] = leases, KEYS[4] = owners,
-- KEYS[5] = lost, KEYS[6] = workers. ARGV[1] = the worker's token, ARGV[2] = lease length (ms),
-- ARGV[3] = how many.
-- Leases up to ARGV[3] jobs to the worker: first what its blocking wait moved to its claimed list,
-- then the oldest waiting ones. A job that runs already (queued twice: a command resent after a
-- dropped connection) is dropped, so that a job never runs on two workers at once. Refreshes the
-- worker's heartbeat, so that its claimed list is not handed on while it lives.
-- Returns { task id, runs lost so far, ... }.
local token = ARGV[1]
local deadline = now_ms() + tonumber(ARGV[2])
local max = tonumber(ARGV[3])
redis.call('ZADD', KEYS[6], deadline, token)
local ids = {}
while #ids < max do
  local id = redis.call('RPOP', KEYS[2])
  if not id then
    break
  end
  ids[#ids + 1] = id
end
if #ids < max then
  local more = redis.call('RPOP', KEYS[1], max - #ids)
  if more then
    for _, id in ipairs(more) do
      ids[#ids + 1] = id
    end
  end
end
local reply = {}
for _, id in ipairs(ids) do
  if redis.call('HSETNX', KEYS[4], id, token) == 1 then
    redis.call('ZADD', KEYS[3], deadline, id)
    reply[#reply + 1] = id
    reply[#reply + 1] = tonumber(redis.call('HGET', KEYS[5], id) or '0')
  end
end
return reply
