-- ARGV[4] = expiry (epoch ms), ARGV[5..] = field/value pairs (see new-task.lua). Returns 0 when the id is taken.
if not write_new_task(ARGV[4], 5) then
  return 0
end
return 1
