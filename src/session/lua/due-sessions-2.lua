--- @include "common"
-- KEYS[1] = the due index, KEYS[2] = the clean-up meta. ARGV[1] = at most this many.
-- Returns id, meta pairs of the sessions whose deadline passed (meta '' when missing).
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', digits(now_ms()), 'LIMIT', 0, tonumber(ARGV[1]))
local out = {}
for _, id in ipairs(ids) do
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', KEYS[2], id) or ''
end
return out
