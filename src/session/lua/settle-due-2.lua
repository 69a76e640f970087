--- @include "common"
-- KEYS[1] = the due index, KEYS[2] = the clean-up meta. ARGV[1] = session id, ARGV[2] = the
-- record's PTTL as read just before (-2: gone). Alive: due again when that TTL runs out; returns
-- the new deadline. Gone: claimed for clean-up, once fleet-wide; returns -1 to the one caller
-- that removed it, 0 to any other.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then
  return 0
end
local ttl = tonumber(ARGV[2])
if ttl > 0 then
  local at = now_ms() + ttl
  redis.call('ZADD', KEYS[1], digits(at), ARGV[1])
  return at
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return -1
