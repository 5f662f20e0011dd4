-- acquire: ARGV[5] slot id, ARGV[6] waitMs. See SEMANTICS.md "acquire" and acquire_op in lib.lua.
-- Results: granted + slot + figures, queued + figures, rejected + reason + retryAfterMs
-- (false: none) + figures. Figures are held, queued, limit.
-- One operation alone; batch.lua applies several in one call.

local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end
load_group(p)
return finish(acquire_op(p, ARGV[5], tonumber(ARGV[6])))
