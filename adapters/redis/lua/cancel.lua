-- cancel: ARGV[5] slot id. A waiter leaves the queue; a holder means the handoff won the race.
-- Results: cancelled, granted + slot, unknown.
local slot_id = ARGV[5]

local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end
load_group(p)

if redis.call('HDEL', p.wkey, slot_id) == 1 then
  redis.call('LREM', p.qkey, 1, slot_id)
  return finish({ 'cancelled' })
end
local slot = held_slot(p, slot_id)
if slot then
  local result = { 'granted' }
  push_slot(result, slot)
  return finish(result)
end
return finish({ 'unknown' })
