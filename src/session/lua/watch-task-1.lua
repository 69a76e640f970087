--- @include "common"
-- KEYS[1] = watched tasks (ZSET, score = until when the session watches it). ARGV[1] = task id,
-- ARGV[2] = retention (ms). Watching again extends the watch, never shortens it.
local now = now_ms()
local watch = KEYS[1]
redis.call('ZREMRANGEBYSCORE', watch, '-inf', digits(now))
local expires_at = now + tonumber(ARGV[2])
local current = redis.call('ZSCORE', watch, ARGV[1])
if not current or tonumber(current) < expires_at then
  redis.call('ZADD', watch, digits(expires_at), ARGV[1])
end
keep_until(watch, now, expires_at)
return 1
