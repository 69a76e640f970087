--- @include "common"
-- KEYS[1] = tasks (ZSET, score createdAt), KEYS[2] = task expiry. ARGV[1] = limit, then optionally
-- ARGV[2] = createdAt and ARGV[3] = task id of the entry the page starts after.
-- Returns a flat member/score list, newest first; equal scores come by task id descending, which
-- is how ZREVRANGE orders them, so (createdAt, taskId) is a total order and a cursor position.
local now = now_ms()
local tasks, expiry = KEYS[1], KEYS[2]
expire_members(expiry, now, function(task_id)
  redis.call('ZREM', tasks, task_id)
end)
local limit = tonumber(ARGV[1])
if limit <= 0 then
  return {}
end
if not ARGV[2] then
  return redis.call('ZREVRANGE', tasks, 0, limit - 1, 'WITHSCORES')
end
local score, after_id = ARGV[2], ARGV[3]
local own = redis.call('ZSCORE', tasks, after_id)
if own and tonumber(own) == tonumber(score) then
  -- The usual case: the cursor entry is still indexed, so the page starts right below it.
  local rank = redis.call('ZREVRANK', tasks, after_id)
  return redis.call('ZREVRANGE', tasks, rank + 1, rank + limit, 'WITHSCORES')
end
-- The cursor entry is gone (it expired): the same-millisecond entries that sort below it, then older ones.
local page = {}
for _, task_id in ipairs(redis.call('ZREVRANGEBYSCORE', tasks, score, score)) do
  if #page >= 2 * limit then
    return page
  end
  if bytes_before(task_id, after_id) then
    page[#page + 1] = task_id
    page[#page + 1] = score
  end
end
local left = limit - #page / 2
if left > 0 then
  local older = redis.call('ZREVRANGEBYSCORE', tasks, '(' .. score, '-inf', 'WITHSCORES', 'LIMIT', 0, left)
  for _, value in ipairs(older) do
    page[#page + 1] = value
  end
end
return page
