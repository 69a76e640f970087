-- The clients changed since a reader's last look at the table (clients-8.lua numbers each flush).
-- KEYS: 1 identities, 2 first-old, 3 last-old, 4 first-new, 5 last-new, 6 change sequence, 7 changed (zset id -> sequence)
-- ARGV[1] = the sequence the reader saw last.
-- Returns {clients in the table, the current sequence, then groups of 6: id, identity JSON, firstOld, lastOld,
-- firstNew, lastNew ('' when not seen)}.
local out = { redis.call('HLEN', KEYS[1]), tonumber(redis.call('GET', KEYS[6]) or '0') }
for _, id in ipairs(redis.call('ZRANGE', KEYS[7], '(' .. ARGV[1], '+inf', 'BYSCORE')) do
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', KEYS[1], id) or ''
  for k = 2, 5 do out[#out + 1] = redis.call('ZSCORE', KEYS[k], id) or '' end
end
return out
