--- @read-only
--- @include "common"
-- KEYS[1] = watched tasks. Returns the ids still watched. Read-only.
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. digits(now_ms()), '+inf')
