-- adopt: ARGV[5] slot id of a slot this process granted on its own while Redis was unreachable
-- (failure policy "open"), ARGV[6] ms left to its request deadline. Sent once Redis is back,
-- before this process admits anything through Redis again: the slot is in use, so from now on
-- it counts against the shared limit (even past it) and lives here, with a fresh lease, until
-- it is released. Results: adopted, held (already here).

local slot_id = ARGV[5]
local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end
load_group(p)
if redis.call('HEXISTS', p.skey, slot_id) == 1 then return finish({ 'held' }) end
grant(p, slot_id, caller, math.max(1, tonumber(ARGV[6])))
return finish({ 'adopted' })
