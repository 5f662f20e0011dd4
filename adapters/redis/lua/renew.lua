-- renew: ARGV[5] slot id. Moves the lease to now + termMs, never past the request deadline.
-- Results: renewed + leaseDeadline, capped + requestDeadline, not_found.
-- One operation alone; batch.lua applies several in one call.

local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end
load_group(p)
return finish(renew_op(p, ARGV[5]))
