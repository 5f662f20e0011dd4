-- serve: reclaims run-out leases and serves the group's queues. Run by a process's local
-- timer at the earliest lease deadline or time-gate opening it learned of. ARGV[5] is '1'
-- for a budget's group: then every member is served, even when ARGV[3]'s pool is gone.
if ARGV[5] == '1' then
  load_members(nil)
  reclaim_group()
else
  local p, moved = load_pool(pool_enc)
  if not p then return missing(moved) end
  load_group(p)
end
serve_group()
return finish({ 'ok', 0 })
