-- retirePool: ARGV[6] the tag of the group the pool moves to. Moves happen only while the
-- pool is idle (no holders, no live waiters): the state left here would otherwise split
-- the limit. Leaves a forwarding record and hands back what was learned and the grant log.
local p, moved = load_pool(pool_enc)
if not p then return finish({ t = 'absent', moved = moved or nil }) end
load_group(p)
serve(p)
purge_expired_waiters(p)
local queued = waiter_count(p)
if p.held > 0 or queued > 0 then
  return finish({ t = 'busy', held = p.held, queued = queued })
end

local learned = learned_of(p)
local log = redis.call('LRANGE', p.lkey, 0, -1)
delete_pool_state(p)
redis.call('HSET', p.key, 'moved', ARGV[6])
local rest = {}
for _, q in ipairs(group) do
  if q ~= p then rest[#rest + 1] = q end
end
group = rest
-- Its reserved share no longer counts: siblings may fit now.
serve_group()
return finish({ t = 'retired', learned = learned, log = log })
