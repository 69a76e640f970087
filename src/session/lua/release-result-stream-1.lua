--- @include "common"
-- KEYS[1] = the task's result-stream marks. ARGV[1] = holder. Removes this holder's mark only;
-- the key then lives as long as the longest remaining mark, and goes when none is left.
local now = now_ms()
local marks = KEYS[1]
redis.call('HDEL', marks, ARGV[1])
local last = nil
local flat = redis.call('HGETALL', marks)
for i = 1, #flat, 2 do
  local until_at = tonumber(flat[i + 1])
  if until_at <= now then
    redis.call('HDEL', marks, flat[i])
  elseif not last or until_at > last then
    last = until_at
  end
end
if last then
  redis.call('PEXPIREAT', marks, digits(last))
end
return 1
