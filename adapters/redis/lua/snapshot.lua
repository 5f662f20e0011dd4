-- snapshot: the pool as it stands after reclaiming run-out leases.
-- Result: snapshot + figures (3) + learned (3) + probe (3) + slot count + slot ids in grant order +
-- waiter count + waiter ids head first.
local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end
load_group(p)

local records = redis.call('HGETALL', p.skey)
local ordered = {}
for i = 1, #records, 2 do
  ordered[#ordered + 1] = { seq = tonumber(string.match(records[i + 1], '^(%d+):')), id = records[i] }
end
table.sort(ordered, function(a, b) return a.seq < b.seq end)

local result = { 'snapshot', holders(p), waiter_count(p), effective_limit(p) }
push_learned(result, p)
push_probe(result, p)
result[#result + 1] = #ordered
for _, entry in ipairs(ordered) do result[#result + 1] = entry.id end
local waiter_ids = redis.call('LRANGE', p.qkey, 0, -1)
result[#result + 1] = #waiter_ids
for _, id in ipairs(waiter_ids) do result[#result + 1] = id end
return finish(result)
