--- @include "common"
-- Included by the scripts that write a new task (create, counted-creation); uses common's `key`.

-- 'new', 'again' when this very creation is there already, else 'taken'. Ids are random, so a hash
-- with this id, principal and creation time is ours: the script sent again after a dropped
-- connection (ioredis resends what had no answer), which must answer like the first run, not fail.
local function creation_state(principal, created_at)
  local existing = redis.call('HMGET', key, 'principal', 'createdAt')
  if not existing[1] then
    return 'new'
  end
  return (existing[1] == principal and existing[2] == created_at) and 'again' or 'taken'
end

-- Writes ARGV[first..] as field/value pairs of `key` and its expiry (epoch ms). Fields and TTL are
-- set in one step, so no replica ever sees a task that could outlive its TTL.
local function write_new_task(expiry, first)
  redis.call('HSET', key, unpack(ARGV, first))
  redis.call('PEXPIREAT', key, expiry)
end
