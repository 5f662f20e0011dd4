-- rejoin: ARGV[5] slot id of a waiter of this process, ARGV[6] ms it has waited so far, ARGV[7]
-- ms of its wait left. Sent after this process's event subscription came back: while it was
-- gone, other processes skipped and dropped this process's waiters (see `listening` in lib.lua).
-- A waiter still queued stays where it is; one already handed a slot gets it (the handoff
-- message was lost); one dropped joins the queue again at its tail (it lost its place, not its
-- wait) and is served at once if it can be, its grant then coming back as an event.
-- Results: waiting, held + slot + queuedMs, rejoined, expired.

local slot_id = ARGV[5]
local waited_ms = tonumber(ARGV[6])
local wait_left_ms = tonumber(ARGV[7])

local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end
load_group(p)

if redis.call('HEXISTS', p.wkey, slot_id) == 1 then return finish({ 'waiting' }) end
local slot = held_slot(p, slot_id)
if slot then
  local result = { 'held' }
  push_slot(result, slot)
  result[#result + 1] = math.max(0, slot[2] - (now - waited_ms))
  return finish(result)
end
if wait_left_ms <= 0 then return finish({ 'expired' }) end
enqueue_waiter(p, slot_id, wait_left_ms, now - waited_ms)
serve(p)
return finish({ 'rejoined' })
