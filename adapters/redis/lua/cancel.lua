-- cancel: ARGV[5] slot id. A waiter leaves the queue; a holder means the handoff won the race.
-- Results: cancelled, granted + slot, unknown.
-- One operation alone; batch.lua applies several in one call.

local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end
load_group(p)
return finish(cancel_op(p, ARGV[5]))
