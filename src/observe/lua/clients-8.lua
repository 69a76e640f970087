-- The bounded client table of the dashboard, updated with one flush's sightings.
-- KEYS: 1 identities (hash id -> JSON), 2 first-old, 3 last-old, 4 first-new, 5 last-new, 6 last seen (zsets id -> ms),
-- 7 change sequence (one step per flush), 8 changed (zset id -> the sequence of its last change), which lets a
-- reader take in only the clients changed since its last look (read-clients-7.lua).
-- ARGV[1] = most clients kept, ARGV[2] = clients last seen before this (ms) are dropped,
-- ARGV[3..] = groups of 6: id, identity JSON, firstOld, lastOld, firstNew, lastNew ('' when not seen).
local max = tonumber(ARGV[1])
local seq = redis.call('INCR', KEYS[7])

for i = 3, #ARGV, 6 do
  local id = ARGV[i]
  redis.call('HSETNX', KEYS[1], id, ARGV[i + 1])
  local seen = nil
  if ARGV[i + 2] ~= '' then redis.call('ZADD', KEYS[2], 'LT', ARGV[i + 2], id) end
  if ARGV[i + 3] ~= '' then
    redis.call('ZADD', KEYS[3], 'GT', ARGV[i + 3], id)
    seen = tonumber(ARGV[i + 3])
  end
  if ARGV[i + 4] ~= '' then redis.call('ZADD', KEYS[4], 'LT', ARGV[i + 4], id) end
  if ARGV[i + 5] ~= '' then
    redis.call('ZADD', KEYS[5], 'GT', ARGV[i + 5], id)
    local n = tonumber(ARGV[i + 5])
    if seen == nil or n > seen then seen = n end
  end
  if seen ~= nil then redis.call('ZADD', KEYS[6], 'GT', seen, id) end
  redis.call('ZADD', KEYS[8], seq, id)
end

local function forget(ids)
  for start = 1, #ids, 500 do
    local chunk = {}
    for j = start, math.min(start + 499, #ids) do chunk[#chunk + 1] = ids[j] end
    redis.call('HDEL', KEYS[1], unpack(chunk))
    for k = 2, 6 do redis.call('ZREM', KEYS[k], unpack(chunk)) end
    redis.call('ZREM', KEYS[8], unpack(chunk))
  end
end

forget(redis.call('ZRANGE', KEYS[6], '-inf', '(' .. ARGV[2], 'BYSCORE'))
local over = redis.call('ZCARD', KEYS[6]) - max
if over > 0 then forget(redis.call('ZRANGE', KEYS[6], 0, over - 1)) end
return 1
