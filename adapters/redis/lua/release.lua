-- release: ARGV[6] slot id. Idempotent; frees the slot and serves waiters in the same call.
local slot_id = ARGV[6]

local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end
-- A lease that ran out before the release arrived is reclaimed here: released stays false.
load_group(p)

local slot = held_slot(p, slot_id)
if not slot then return finish({ t = 'released', released = false }) end
drop_holder(p, slot_id)
serve_around(p)
return finish({ t = 'released', released = true, slot = slot })
