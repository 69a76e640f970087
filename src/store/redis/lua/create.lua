-- ARGV[4] = expiry (epoch ms), ARGV[5..] = field/value pairs. Returns 0 when the id is taken.
-- Fields and TTL are set in one step, so no replica ever sees a task that could outlive its TTL.
if redis.call('EXISTS', key) == 1 then
  return 0
end
redis.call('HSET', key, unpack(ARGV, 5))
redis.call('PEXPIREAT', key, ARGV[4])
return 1
