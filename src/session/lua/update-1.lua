--- @include "common"
-- KEYS[1] = the session's hash. ARGV[1] = n, ARGV[2 .. 1+2n] = field/value pairs to set, the rest
-- = fields to remove. Returns 0 (changing nothing) when the session is gone: an update never
-- brings back a session that expired or was deleted. HSET keeps the idle TTL.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
local n = tonumber(ARGV[1])
if n > 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV, 2, 1 + 2 * n))
end
if #ARGV > 1 + 2 * n then
  redis.call('HDEL', KEYS[1], unpack(ARGV, 2 + 2 * n))
end
return 1
