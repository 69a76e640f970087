-- Prepended (after common.lua) to the scripts that write a new task (create, create-queued).
-- Writes ARGV[first..] as field/value pairs of `key` and its expiry (epoch ms); false when the id
-- is taken. Fields and TTL are set in one step, so no replica ever sees a task that could outlive its TTL.
local function write_new_task(expiry, first)
  if redis.call('EXISTS', key) == 1 then
    return false
  end
  redis.call('HSET', key, unpack(ARGV, first))
  redis.call('PEXPIREAT', key, expiry)
  return true
end
