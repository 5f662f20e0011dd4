-- removePool: forgets the pool (holders and waiters are dropped, never reported).
local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end
delete_pool_state(p)
if p.in_budget then
  -- Its share of the budget is free: siblings may fit now.
  load_members(nil)
  reclaim_group()
  serve_group()
end
return finish({ 'ok', 0 })
