--- @read-only
--- @include "common"
-- KEYS[1] = the task's result-stream marks. Returns 1 while any mark is unexpired. Read-only.
local now = now_ms()
for _, until_at in ipairs(redis.call('HVALS', KEYS[1])) do
  if tonumber(until_at) > now then
    return 1
  end
end
return 0
