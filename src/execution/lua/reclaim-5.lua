--- @include "common"
-- KEYS[1] = waiting, KEYS[2] = leases, KEYS[3] = owners, KEYS[4] = lost, KEYS[5] = workers.
-- ARGV[1] = the prefix of claimed lists, ARGV[2] = at most this many leases and workers per call.
-- A lapsed lease means its worker died (or stalled past its lease): the job goes back to the front
-- of the queue with one more lost run, and the TaskRunner that takes it fails it or re-runs it.
-- A lapsed heartbeat means a dead worker's claimed list (a job its blocking wait took, not yet
-- leased, so never run) goes back as it is. A claimed list lies in the queue's slot: its key is
-- built here from the same hash tag. Returns { leases handed on, dead workers handled }.
local now = now_ms()
local limit = tonumber(ARGV[2])
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. now, 'LIMIT', 0, limit)
for _, id in ipairs(expired) do
  redis.call('ZREM', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
  redis.call('HINCRBY', KEYS[4], id, 1)
  redis.call('RPUSH', KEYS[1], id)
end
local dead = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', '(' .. now, 'LIMIT', 0, limit)
for _, token in ipairs(dead) do
  while redis.call('LMOVE', ARGV[1] .. token, KEYS[1], 'RIGHT', 'RIGHT') do
  end
  redis.call('ZREM', KEYS[5], token)
end
return { #expired, #dead }
