-- Included by every session script. Every key a script touches is named in KEYS and carries the
-- session's hash tag (or, for result-stream marks, the task's), so a Redis Cluster runs it on one
-- node. Times come from Redis's own clock, the one its key expiry runs on, so replicas agree.

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Epoch ms as digits (Lua would print a large number in exponent form).
local function digits(ms)
  return string.format('%.0f', ms)
end

-- Makes an existing `key` live at least until `at` (epoch ms); never shortens its life. A key
-- without any TTL (just created by a write) gets one, so nothing outlives its retention.
local function keep_until(key, now, at)
  local ttl = redis.call('PTTL', key)
  if ttl == -2 then
    return
  end
  if ttl == -1 or now + ttl < at then
    redis.call('PEXPIREAT', key, digits(at))
  end
end

-- Removes the members of `index` (a ZSET scored by expiry, epoch ms) that expired by `now`,
-- calling `drop(member)` for each first, so the data they index goes with them.
local function expire_members(index, now, drop)
  local gone = redis.call('ZRANGEBYSCORE', index, '-inf', digits(now))
  if #gone == 0 then
    return
  end
  for _, member in ipairs(gone) do
    drop(member)
  end
  redis.call('ZREMRANGEBYSCORE', index, '-inf', digits(now))
end

-- Byte order, as Redis orders ZSET members. (Lua's `<` on strings follows the server's locale.)
local function bytes_before(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then
      return x < y
    end
  end
  return #a < #b
end

-- The seq of a logged event: elements are JSON that our appendEvent writes, always starting so.
local function seq_of(event)
  return tonumber(string.match(event, '^{"seq":(%d+),'))
end


-- Sets `holder`'s mark in `marks` (a HASH holder -> until, epoch ms) to now + `ttl_ms`, drops
-- lapsed marks, and keeps the key alive exactly as long as its longest mark.
local function hold_mark(marks, holder, ttl_ms)
  local now = now_ms()
  local expires_at = now + ttl_ms
  local last = expires_at
  local flat = redis.call('HGETALL', marks)
  for i = 1, #flat, 2 do
    local other, until_at = flat[i], tonumber(flat[i + 1])
    if until_at <= now then
      redis.call('HDEL', marks, other)
    elseif other ~= holder and until_at > last then
      last = until_at
    end
  end
  redis.call('HSET', marks, holder, digits(expires_at))
  redis.call('PEXPIREAT', marks, digits(last))
end
