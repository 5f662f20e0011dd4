-- adopt: ARGV[5] slot id of a slot this process granted on its own while Redis was unreachable
-- (failure policy "open"), ARGV[6] ms left to its request deadline. Sent once Redis is back,
-- before this process admits anything through Redis again: the slot is in use, so from now on
-- it counts against the shared limit (even past it) and lives here, with a fresh lease, until
-- it is released. Also sent for this process's own Redis slots whose lease still runs, in case
-- Redis restarted without them. Results: adopted or held (already here), then the slot.

local slot_id = ARGV[5]
local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end
load_group(p)
local result
local slot = held_slot(p, slot_id)
if slot then
  result = { 'held' }
else
  result = { 'adopted' }
  slot = grant(p, slot_id, caller, math.max(1, tonumber(ARGV[6])))
end
push_slot(result, slot)
return finish(result)
