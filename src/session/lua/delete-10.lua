--- @include "common"
-- KEYS[1] = the session's hash, KEYS[2..7] = its tasks, task expiry, watch, seq, streams and
-- stream expiry keys, KEYS[9..10] = its open-stream marks and push claims, KEYS[8] = the common beginning of its stream logs' keys (a name, not a key:
-- passed as one so that it carries the hash tag and any client key prefix).
-- The logs' keys are built here from KEYS[8] and the index, not declared: they carry the same hash
-- tag, so the node that runs the script holds them. No KEYS/SCAN. Returns 1 when the session itself still existed.
local existed = redis.call('EXISTS', KEYS[1])
local streams = redis.call('HKEYS', KEYS[6])
for _, stream_id in ipairs(redis.call('ZRANGE', KEYS[7], 0, -1)) do
  streams[#streams + 1] = stream_id
end
for _, stream_id in ipairs(streams) do
  redis.call('DEL', KEYS[8] .. stream_id)
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[9], KEYS[10])
return existed
