--- @include "common"
-- KEYS[1] = streams (HASH stream id -> stored meta), KEYS[2] = stream expiry (ZSET), KEYS[3] = seq,
-- KEYS[4] = this stream's log, KEYS[5] = the common beginning of the logs' keys (see delete-10.lua).
-- ARGV[1] = stream id, ARGV[2] = stored meta (JSON starting with retentionMs), ARGV[3] = retention.
-- Expired streams leave the index here, so a long session's index holds only live streams.
local now = now_ms()
local streams, expiry = KEYS[1], KEYS[2]
expire_members(expiry, now, function(stream_id)
  redis.call('HDEL', streams, stream_id)
  redis.call('DEL', KEYS[5] .. stream_id)
end)
local expires_at = now + tonumber(ARGV[3])
redis.call('HSET', streams, ARGV[1], ARGV[2])
redis.call('ZADD', expiry, digits(expires_at), ARGV[1])
for _, key in ipairs({ streams, expiry, KEYS[3], KEYS[4] }) do
  keep_until(key, now, expires_at)
end
return 1
