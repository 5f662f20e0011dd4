-- retirePool: ARGV[5] the tag of the group the pool moves to. Moves happen only while the
-- pool is idle (no holders, no live waiters): the state left here would otherwise split
-- the limit. Leaves a forwarding record and hands back what was learned and the grant log.
-- Results: retired + learned (3) + log length + log, busy + held + queued, absent + moved.
local p, moved = load_pool(pool_enc)
if not p then return finish({ 'absent', moved or '' }) end
load_group(p)
serve(p)
purge_expired_waiters(p)
local queued = waiter_count(p)
if holders(p) > 0 or queued > 0 then
  return finish({ 'busy', p.held, queued })
end

local result = { 'retired' }
push_learned(result, p)
local log = redis.call('LRANGE', p.lkey, 0, p.logcap - 1)
result[#result + 1] = #log
for _, at in ipairs(log) do result[#result + 1] = at end
delete_pool_state(p)
redis.call('HSET', p.key, 'moved', ARGV[5])
local rest = {}
for _, q in ipairs(group) do
  if q ~= p then rest[#rest + 1] = q end
end
group = rest
-- Its reserved share no longer counts: siblings may fit now.
serve_group()
return finish(result)
