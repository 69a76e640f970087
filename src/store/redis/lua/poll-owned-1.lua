--- @read-only
-- What a status poll shows of a task, for its own principal only. KEYS[1] is the task's hash;
-- ARGV holds the fields a poll reads (POLL_FIELDS in codec.ts), then the caller's principal.
-- The principal is checked before anything else is read, as in read-owned-1.lua. A task waiting on
-- input answers its whole hash, wrapped in a one-element array: its outstanding requests are fields
-- of their own, which no field list can name.
local owner = redis.call('HMGET', KEYS[1], 'principal', 'status')
if owner[1] ~= ARGV[#ARGV] then
  return false
end
if owner[2] == 'input_required' then
  return { redis.call('HGETALL', KEYS[1]) }
end
return redis.call('HMGET', KEYS[1], unpack(ARGV, 1, #ARGV - 1))
