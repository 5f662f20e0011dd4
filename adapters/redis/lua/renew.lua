-- renew: ARGV[5] slot id. Moves the lease to now + termMs, never past the request deadline.
-- Results: renewed + leaseDeadline, capped + requestDeadline, not_found.
local slot_id = ARGV[5]

local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end
load_group(p)

local slot = held_slot(p, slot_id)
if not slot then return finish({ 'not_found' }) end
local current_lease, request_deadline = slot[3], slot[4]
if current_lease >= request_deadline then
  return finish({ 'capped', request_deadline })
end
local lease_deadline = math.min(now + p.term, request_deadline)
-- A renewed lease only moves later, so the pool's `due` (a lower bound of its leases)
-- stays one.
redis.call('ZADD', p.hkey, 'XX', lease_deadline, slot_id)
-- The record keeps the lease deadline too (seq:acquiredAt:leaseDeadline:...).
local record = redis.call('HGET', p.skey, slot_id)
local renewed = string.gsub(record, '^(%d+:%d+:)%d+', '%1' .. fmt(lease_deadline), 1)
redis.call('HSET', p.skey, slot_id, renewed)
return finish({ 'renewed', lease_deadline })
