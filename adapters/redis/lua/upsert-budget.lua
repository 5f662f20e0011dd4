-- upsertBudget / removeBudget: ARGV[5] origin ('' = no shared ceiling). Serves every member.
if ARGV[5] == '' then
  redis.call('DEL', base .. K_BUDGET)
  budget_origin = false
else
  redis.call('HSET', base .. K_BUDGET, 'origin', ARGV[5])
  budget_origin = tonumber(ARGV[5])
end
load_members(nil)
reclaim_group()
serve_group()
return finish({ 'ok', 0 })
