-- Included by every task script. KEYS[1] is the task's hash. ARGV[1] is the events channel,
-- ARGV[2] the task id, ARGV[3] the caller's clock (epoch ms); the operation's own arguments follow.
-- Status lists arrive from src/mapping/transitions.ts, so no script knows the transition table.
local key = KEYS[1]
local channel = ARGV[1]
local task_id = ARGV[2]
local now = tonumber(ARGV[3])

-- The fields every operation checks; nil when the task is unknown or expired at `now`.
local function load_task()
  local f = redis.call('HMGET', key, 'status', 'createdAt', 'ttlMs', 'lastUpdatedAt', 'principal', 'sessionId')
  if not f[1] then
    return nil
  end
  if now >= tonumber(f[2]) + tonumber(f[3]) then
    return nil
  end
  -- HMGET answers a missing field with false; session_id stays nil then.
  return { status = f[1], last_updated_at = tonumber(f[4]), principal = f[5], session_id = f[6] or nil }
end

-- `list` is comma-separated.
local function one_of(list, status)
  return string.find(',' .. list .. ',', ',' .. status .. ',', 1, true) ~= nil
end

local function has_outstanding_input()
  for _, field in ipairs(redis.call('HKEYS', key)) do
    if string.sub(field, 1, 3) == 'ir:' then
      return true
    end
  end
  return false
end

-- Announces a change (a TaskChange, see src/store/task-store.ts). `at` is lastUpdatedAt as digits;
-- the task's session, when it has one, rides along so that replicas route pushes without a read.
-- `extra` (optional) is more members of the change, as JSON text starting with a comma.
local function publish(task, status, at, extra)
  local session = ''
  if task.session_id then
    session = ',"sessionId":' .. cjson.encode(task.session_id)
  end
  redis.call('PUBLISH', channel,
    '{"taskId":' .. cjson.encode(task_id) .. ',"status":' .. cjson.encode(status) .. ',"lastUpdatedAt":' .. at
      .. session .. (extra or '') .. '}')
end

-- Sets the status and lastUpdatedAt and announces the change. lastUpdatedAt strictly increases even
-- for two changes within one millisecond, so that it orders changes. HSET keeps the key's TTL.
local function touch(task, status, extra)
  local at = string.format('%.0f', math.max(now, task.last_updated_at + 1))
  redis.call('HSET', key, 'status', status, 'lastUpdatedAt', at)
  publish(task, status, at, extra)
end

