-- Included by the scripts that count what a principal holds open (hold-open, counted-creation).
-- `key` is one principal's open set: members are task or stream ids, scores the time each lapses
-- (epoch ms), so that a member nobody released (a lost replica) stops counting on its own.
-- `limit` -1: none. A member already held is renewed, never refused; `fresh` says the member was
-- just made (a new task's id), so it cannot be held yet. Returns { held (0|1), members held now }.
local function hold_open(key, now, limit, member, lapses_at, fresh)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  local open = redis.call('ZCARD', key)
  if fresh or not redis.call('ZSCORE', key, member) then
    if limit >= 0 and open >= limit then
      return { 0, open }
    end
    open = open + 1
  end
  redis.call('ZADD', key, lapses_at, member)
  -- The set lives as long as its latest member, so an abandoned one leaves nothing behind. GT only
  -- ever moves the expiry later; a set that ZADD just made has none, which GT takes for forever.
  if redis.call('PEXPIREAT', key, lapses_at, 'GT') == 0 and redis.call('PTTL', key) == -1 then
    redis.call('PEXPIREAT', key, lapses_at)
  end
  return { 1, open }
end
