--- @include "common"
-- KEYS[1] = this worker's claimed list, KEYS[2] = waiting. A draining worker hands back what its
-- blocking wait took but it never leased, to the front of the queue. Returns how many.
local returned = 0
while redis.call('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'RIGHT') do
  returned = returned + 1
end
return returned
