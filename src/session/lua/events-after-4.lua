--- @read-only
--- @include "common"
-- KEYS[1] = streams, KEYS[2] = this stream's log, KEYS[3] = seq, KEYS[4] = stream expiry.
-- ARGV[1] = stream id, ARGV[2] = the seq of the client's last event, ARGV[3] = how many events a
-- log keeps. Read-only.
-- Returns nil when the event cannot be one of this stream's (unknown stream, log expired, a seq
-- never issued, or a seq that another stream's event holds); else { stored meta, later events... }.
local stored = redis.call('HGET', KEYS[1], ARGV[1])
local open_until = redis.call('ZSCORE', KEYS[4], ARGV[1])
if not stored or not open_until or tonumber(open_until) <= now_ms() then
  return false
end
local after = tonumber(ARGV[2])
local issued = redis.call('GET', KEYS[3])
if not issued or after > tonumber(issued) then
  return false
end
local events = redis.call('LRANGE', KEYS[2], 0, -1)
if #events == 0 then
  return false
end
-- Scan back from the newest; stop at the client's event. When the scan passes the oldest kept
-- event, the client's event was trimmed away (a trimmed log is full) and every kept event is newer;
-- a log that was never trimmed starts with the stream's first event, so the id is not this stream's.
local first = 1
if seq_of(events[1]) > after and #events < tonumber(ARGV[3]) then
  return false
end
for i = #events, 1, -1 do
  local seq = seq_of(events[i])
  if seq <= after then
    if seq < after then
      return false
    end
    first = i + 1
    break
  end
end
local reply = { stored }
for i = first, #events do
  reply[#reply + 1] = events[i]
end
return reply
