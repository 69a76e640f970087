--- @include "common"
-- KEYS[1] = the session's push claims (HASH push id -> stream id), KEYS[2] = its open-stream
-- marks. ARGV[1] = push id, ARGV[2] = stream id, ARGV[3] = retention (ms). Returns 1 when the
-- stream may deliver the push (and now holds it), 0 while another open stream holds it.
local now = now_ms()
local owner = redis.call('HGET', KEYS[1], ARGV[1])
if owner and owner ~= ARGV[2] then
  local until_at = tonumber(redis.call('HGET', KEYS[2], owner) or '0')
  if until_at > now then
    return 0
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIREAT', KEYS[1], digits(now + tonumber(ARGV[3])))
return 1
