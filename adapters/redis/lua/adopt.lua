-- adopt: ARGV[5] slot id of a slot this process holds but Redis may not: granted on its own
-- while Redis was unreachable (failure policy "open"), or held here before Redis restarted
-- without its data. ARGV[6] ms left to its request deadline, ARGV[7] its lease deadline ('':
-- none yet, a local slot). Sent once Redis is back, before this process admits anything
-- through Redis again: the slot is in use, so from now on it counts against the shared limit
-- (even past it) and lives here until it is released. Its lease never runs past the one it
-- had: a slot its caller stopped renewing is not kept alive by restarts, and one whose lease
-- ran out (reclaimed meanwhile, its owner told) is not granted again.
-- Results: adopted or held (already here), then the slot; or expired.

local slot_id = ARGV[5]
local lease_until = opt_num(ARGV[7])
local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end
load_group(p)
local result
local slot = held_slot(p, slot_id)
if slot then
  result = { 'held' }
elseif lease_until and lease_until <= now then
  return finish({ 'expired' })
else
  result = { 'adopted' }
  slot = grant(p, slot_id, caller, math.max(1, tonumber(ARGV[6])), lease_until)
end
push_slot(result, slot)
return finish(result)
