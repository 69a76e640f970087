-- One bucket's counters as the flat reply of HGETALL (name, value, name, value, ...). A script, not
-- HGETALL itself: the client library turns an HGETALL reply into an object, which costs more than
-- the rest of a dashboard request for an hour bucket of a few thousand fields.
-- KEYS[1] = the bucket
return redis.call('HGETALL', KEYS[1])
