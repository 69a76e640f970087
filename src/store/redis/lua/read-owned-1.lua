--- @read-only
-- The whole task hash, for its own principal only. KEYS[1] is the task's hash, ARGV[1] the caller's
-- principal. The principal is checked before the record is read, so that another principal's task,
-- however large, costs what an unknown id costs: one field (docs/security.md, "Foreign is unknown").
if redis.call('HGET', KEYS[1], 'principal') ~= ARGV[1] then
  return false
end
return redis.call('HGETALL', KEYS[1])
