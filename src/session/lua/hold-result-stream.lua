-- KEYS[1] = the task's result-stream marks (HASH holder -> until, epoch ms). ARGV[1] = holder,
-- ARGV[2] = TTL (ms). Drops expired marks; the key lives as long as its longest mark.
local now = now_ms()
local marks = KEYS[1]
local expires_at = now + tonumber(ARGV[2])
local last = expires_at
local flat = redis.call('HGETALL', marks)
for i = 1, #flat, 2 do
  local holder, until_at = flat[i], tonumber(flat[i + 1])
  if until_at <= now then
    redis.call('HDEL', marks, holder)
  elseif holder ~= ARGV[1] and until_at > last then
    last = until_at
  end
end
redis.call('HSET', marks, ARGV[1], digits(expires_at))
redis.call('PEXPIREAT', marks, digits(last))
return 1
