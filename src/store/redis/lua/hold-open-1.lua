--- @include "open-set"
-- KEYS[1] = one principal's open set (see includes/open-set.lua).
-- ARGV[1] = now, ARGV[2] = limit (-1: none), ARGV[3] = member, ARGV[4] = when it lapses.
return hold_open(KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], false)
