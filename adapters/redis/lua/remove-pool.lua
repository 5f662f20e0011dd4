-- removePool: forgets the pool (holders and waiters are dropped). Every other process with
-- waiters or holders in it is told (`x` event), so its callers stop waiting or working now
-- rather than at their wait's end or their next renewal.
local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end
local told = {}
for _, hash in ipairs({ p.wkey, p.skey }) do
  local records = redis.call('HVALS', hash)
  for _, record in ipairs(records) do
    local owner = string.match(record, ':([^:]*)$')
    if owner and owner ~= caller and not told[owner] then
      told[owner] = true
      local list = events_of(owner)
      list[#list + 1] = 'x'
      list[#list + 1] = p.name
    end
  end
end
delete_pool_state(p)
if p.in_budget then
  -- Its share of the budget is free: siblings may fit now.
  load_members(nil)
  reclaim_group()
  serve_group()
end
return finish({ 'ok', 0 })
