-- snapshot: the pool as it stands after reclaiming run-out leases.
local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end
load_group(p)

local records = redis.call('HGETALL', p.skey)
local ordered = {}
for i = 1, #records, 2 do
  ordered[#ordered + 1] = { seq = tonumber(string.match(records[i + 1], '^(%d+):')), id = records[i] }
end
table.sort(ordered, function(a, b) return a.seq < b.seq end)
local slot_ids = {}
for i, entry in ipairs(ordered) do slot_ids[i] = entry.id end

return finish({
  t = 'snapshot', figures = figures(p), learned = learned_of(p), slotIds = slot_ids,
  waiterIds = redis.call('LRANGE', p.qkey, 0, -1),
})
