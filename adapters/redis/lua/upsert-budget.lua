-- upsertBudget / removeBudget: ARGV[6] origin ('' = no shared ceiling). Serves every member.
if ARGV[6] == '' then
  redis.call('DEL', base .. K_BUDGET)
  budget_origin = false
else
  redis.call('HSET', base .. K_BUDGET, 'origin', ARGV[6])
  budget_origin = tonumber(ARGV[6])
end
load_members(nil)
reclaim_group()
serve_group()
return finish({ 'ok', 0 })
