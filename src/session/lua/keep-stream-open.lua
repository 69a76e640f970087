-- KEYS[1] = the session's open-stream marks (HASH stream id -> until, epoch ms). ARGV[1] = stream
-- id, ARGV[2] = TTL (ms). Drops lapsed marks; the key lives as long as its longest mark.
local now = now_ms()
local live = KEYS[1]
local until_at = now + tonumber(ARGV[2])
local last = until_at
local flat = redis.call('HGETALL', live)
for i = 1, #flat, 2 do
  local stream_id, other = flat[i], tonumber(flat[i + 1])
  if other <= now then
    redis.call('HDEL', live, stream_id)
  elseif stream_id ~= ARGV[1] and other > last then
    last = other
  end
end
redis.call('HSET', live, ARGV[1], digits(until_at))
redis.call('PEXPIREAT', live, digits(last))
return 1
