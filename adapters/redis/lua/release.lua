-- release: ARGV[5] slot id. Idempotent; frees the slot and serves waiters in the same call.
-- Results: released + 1 + slot + held + queued (both before the release) + shared learned (7),
-- released + 0.
-- One operation alone; batch.lua applies several in one call.

local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end
load_group(p)
return finish(release_op(p, ARGV[5]))
