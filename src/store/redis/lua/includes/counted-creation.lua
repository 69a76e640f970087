--- @include "new-task"
--- @include "open-set"
-- Included by the scripts that create a task and its job in one step (create-queued, create-held).
-- Counts the new task against its principal's limit (ARGV[5], 0: not counted and `open_key`
-- untouched; ARGV[6] the principal, ARGV[3] createdAt, ARGV[4] expiry) and writes it (field/value
-- pairs from ARGV[first]). Returns { created, reply }: created false means the script answers
-- `reply` at once ({ 2 } the id is another task's, { 1 } this creation ran before, { 0, open } at
-- the limit); created true means the caller makes the job and answers `reply` ({ 1, open }).
local function create_counted(open_key, first)
  local state = creation_state(ARGV[6], ARGV[3])
  if state == 'taken' then
    return false, { 2 }
  end
  -- Sent again after a dropped connection: counted, written and its job made by the first run.
  if state == 'again' then
    return false, { 1 }
  end
  local limit = tonumber(ARGV[5])
  local held = { 1 }
  if limit > 0 then
    held = hold_open(open_key, now, limit, task_id, ARGV[4], true)
    if held[1] == 0 then
      return false, held
    end
  end
  write_new_task(ARGV[4], first)
  return true, held
end
