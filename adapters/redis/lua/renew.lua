-- renew: ARGV[6] slot id. Moves the lease to now + termMs, never past the request deadline.
local slot_id = ARGV[6]

local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end
load_group(p)

local slot = held_slot(p, slot_id)
if not slot then return finish({ t = 'not_found' }) end
local current_lease, request_deadline = slot[3], slot[4]
if current_lease >= request_deadline then
  return finish({ t = 'capped', requestDeadline = request_deadline })
end
local lease_deadline = math.min(now + p.term, request_deadline)
redis.call('ZADD', p.hkey, 'XX', lease_deadline, slot_id)
return finish({ t = 'renewed', leaseDeadline = lease_deadline })
