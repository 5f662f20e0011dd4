-- release: ARGV[5] slot id. Idempotent; frees the slot and serves waiters in the same call.
-- Results: released + 1 + slot, released + 0.
local slot_id = ARGV[5]

local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end
-- A lease that ran out before the release arrived is reclaimed here: released stays false.
load_group(p)

local slot = held_slot(p, slot_id)
if not slot then return finish({ 'released', 0 }) end
drop_holder(p, slot_id)
serve_around(p)
local result = { 'released', 1 }
push_slot(result, slot)
return finish(result)
