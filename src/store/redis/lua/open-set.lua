-- Prepended to the scripts that count what a principal holds open (hold-open, create-queued).
-- `key` is one principal's open set: members are task or stream ids, scores the time each lapses
-- (epoch ms), so that a member nobody released (a lost replica) stops counting on its own.
-- `limit` -1: none. A member already held is renewed, never refused. Returns { held (0|1), members held now }.
local function hold_open(key, now, limit, member, lapses_at)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  local open = redis.call('ZCARD', key)
  if not redis.call('ZSCORE', key, member) then
    if limit >= 0 and open >= limit then
      return { 0, open }
    end
    open = open + 1
  end
  redis.call('ZADD', key, lapses_at, member)
  -- The set lives as long as its latest member, so an abandoned one leaves nothing behind.
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  redis.call('PEXPIREAT', key, last[2])
  return { 1, open }
end
