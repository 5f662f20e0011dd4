-- batch: several acquire, release, renew and cancel calls of one process on one group, applied
-- in the order given, all in this one atomic call (each exactly as its own script would do
-- it, see acquire_op ... in lib.lua). ARGV[3] and ARGV[4] are empty; from ARGV[5], five
-- fields per operation: kind (a acquire, r release, n renew, c cancel), its now ('' in TIME
-- mode: the call's), encoded pool name, slot id, waitMs (acquire; else '').
-- Result: 'batch', the number of operations, then per operation its field count and its
-- result as its own script answers it ('missing' + moved when the pool is not here). The
-- caller's events of every operation come first in the reply, in the order they happened.

-- Pools loaded by one operation are reused by the next ones (see pool_cache in lib.lua).
pool_cache = {}
local result = { 'batch', 0 }
local count = 0
-- The pool and instant of the previous operation: the next one on the same pool at the same
-- instant has its group loaded, and needs no reclaim while no lease of the group is due.
local last_p, last_now = false, false
local function nothing_due()
  for _, q in ipairs(group) do
    if q.due and q.due <= now then return false end
  end
  return true
end
for i = 5, #ARGV, 5 do
  if ARGV[i + 1] ~= '' then now = tonumber(ARGV[i + 1]) end
  local kind, slot_id = ARGV[i], ARGV[i + 3]
  local p, moved = load_pool(ARGV[i + 2])
  local answer
  if not p then
    answer = { 'missing', moved or '' }
  else
    if p ~= last_p or now ~= last_now or not nothing_due() then
      load_group(p)
      last_p, last_now = p, now
    end
    if kind == 'a' then
      answer = acquire_op(p, slot_id, tonumber(ARGV[i + 4]))
    elseif kind == 'r' then
      answer = release_op(p, slot_id)
    elseif kind == 'n' then
      answer = renew_op(p, slot_id)
    else
      answer = cancel_op(p, slot_id)
    end
    -- The wake-up covers every pool an operation left behind (finish sees the last group).
    for _, q in ipairs(group) do
      if q.due then note_wake(q.due) end
    end
  end
  count = count + 1
  result[#result + 1] = #answer
  for j = 1, #answer do result[#result + 1] = answer[j] end
end
result[2] = count
return finish(result)
