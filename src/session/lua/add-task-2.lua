--- @include "common"
-- KEYS[1] = tasks (ZSET, score createdAt), KEYS[2] = task expiry (ZSET, score createdAt + retention).
-- ARGV[1] = task id, ARGV[2] = createdAt, ARGV[3] = retention (ms).
-- Returns 0 when the entry is already past its retention (and so not added).
local now = now_ms()
local tasks, expiry = KEYS[1], KEYS[2]
expire_members(expiry, now, function(task_id)
  redis.call('ZREM', tasks, task_id)
end)
local expires_at = tonumber(ARGV[2]) + tonumber(ARGV[3])
if expires_at <= now then
  return 0
end
redis.call('ZADD', tasks, ARGV[2], ARGV[1])
redis.call('ZADD', expiry, digits(expires_at), ARGV[1])
keep_until(tasks, now, expires_at)
keep_until(expiry, now, expires_at)
return 1
