-- inspect: ARGV[5] slot id. Reads a held slot and the pool's figures; changes no slot (run-out
-- leases are reclaimed first, as in every script). The governor learns from an outcome that
-- tightens the limits before it releases the slot, so the handoff already obeys them.
-- Results: inspected + 1 + slot + held + queued + shared learned (7), inspected + 0.

local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end
load_group(p)
local slot = held_slot(p, ARGV[5])
if not slot then return finish({ 'inspected', 0 }) end
local result = { 'inspected', 1 }
push_slot(result, slot)
result[#result + 1] = holders(p)
result[#result + 1] = waiter_count(p)
push_shared(result, p)
return finish(result)
