-- KEYS[1] = one principal's open set: members are task or stream ids, scores the time each lapses
-- (epoch ms), so that a member nobody released (a lost replica) stops counting on its own.
-- ARGV[1] = now, ARGV[2] = limit (-1: none), ARGV[3] = member, ARGV[4] = when it lapses.
-- A member already held is renewed, never refused. Returns { held (0|1), members held now }.
local key = KEYS[1]
redis.call('ZREMRANGEBYSCORE', key, '-inf', ARGV[1])
local open = redis.call('ZCARD', key)
if not redis.call('ZSCORE', key, ARGV[3]) then
  local limit = tonumber(ARGV[2])
  if limit >= 0 and open >= limit then
    return { 0, open }
  end
  open = open + 1
end
redis.call('ZADD', key, ARGV[4], ARGV[3])
-- The set lives as long as its latest member, so an abandoned one leaves nothing behind.
local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', key, last[2])
return { 1, open }
