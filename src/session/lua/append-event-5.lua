--- @include "common"
-- KEYS[1] = streams, KEYS[2] = stream expiry, KEYS[3] = seq, KEYS[4] = this stream's log,
-- KEYS[5] = the session's hash. ARGV[1] = stream id, ARGV[2] = the data as a JSON string,
-- ARGV[3] = how many events the log keeps. Returns the event's seq.
-- A stream is open from openStream until its retention passes without an append. An event of an
-- open stream is logged and renews that retention; an event of a stream that is not open (never
-- opened, expired or deleted) still gets a fresh seq but is not logged: it cannot be replayed.
local now = now_ms()
local streams, expiry, seq_key, log = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local seq = redis.call('INCR', seq_key)
local stored = redis.call('HGET', streams, ARGV[1])
local open_until = redis.call('ZSCORE', expiry, ARGV[1])
if stored and open_until and tonumber(open_until) > now then
  local expires_at = now + tonumber(string.match(stored, '^{"retentionMs":(%d+),'))
  redis.call('RPUSH', log, '{"seq":' .. digits(seq) .. ',"data":' .. ARGV[2] .. '}')
  redis.call('LTRIM', log, -tonumber(ARGV[3]), -1)
  redis.call('ZADD', expiry, digits(expires_at), ARGV[1])
  for _, key in ipairs({ log, streams, expiry, seq_key }) do
    keep_until(key, now, expires_at)
  end
end
-- The counter outlives every log whose seqs it must not reuse, and the session while it lives.
local session_ttl = redis.call('PTTL', KEYS[5])
if session_ttl > 0 then
  keep_until(seq_key, now, now + session_ttl)
end
if redis.call('PTTL', seq_key) == -1 then
  -- Neither an open stream nor the session: nothing left whose ids could collide.
  redis.call('DEL', seq_key)
end
return seq
