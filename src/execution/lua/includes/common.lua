-- Included by every queue script (src/execution/queue-keys.ts describes the keys). Leases and
-- heartbeats run on Redis's clock, so replicas whose clocks disagree never take each other's jobs.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
