-- acquire: ARGV[5] slot id, ARGV[6] waitMs. See SEMANTICS.md "acquire".
-- Results: granted + slot + figures, queued + figures, rejected + reason + retryAfterMs
-- (false: none) + figures. Figures are held, queued, limit.
local slot_id = ARGV[5]
local wait_ms = tonumber(ARGV[6])

local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end
load_group(p)

local function answer(kind, waiting, reason, retry_after, slot)
  local result = { kind }
  if slot then push_slot(result, slot) end
  if reason then
    result[#result + 1] = reason
    result[#result + 1] = retry_after
  end
  result[#result + 1] = holders(p)
  result[#result + 1] = waiting
  result[#result + 1] = effective_limit(p)
  return finish(result)
end

local function enqueue(waiting)
  enqueue_waiter(p, slot_id, wait_ms)
  return answer('queued', waiting + 1)
end

-- Nobody waits while `minwait` is absent (see serve in lib.lua).
local waiting = p.minwait and waiter_count(p) or 0
if waiting > 0 then waiting = waiting - serve(p) end
if waiting > 0 then
  -- A newcomer never overtakes waiters; behind them no turn can be estimated.
  if wait_ms == 0 then return answer('rejected', waiting, 'concurrency', false) end
  if waiting >= p.queue then
    purge_expired_waiters(p)
    waiting = waiter_count(p)
  end
  if waiting < p.queue then return enqueue(waiting) end
  return answer('rejected', waiting, 'queue_full', false)
end

local blocked = obstacle(p)
if not blocked then
  return answer('granted', 0, false, false, grant(p, slot_id, caller))
end
local can_queue = wait_ms > 0 and p.queue > 0
if not is_time_gate(blocked) then
  if can_queue then return enqueue(0) end
  return answer('rejected', 0, blocked, false)
end
local opens_in = gate_opens_in(p)
if can_queue and opens_in <= wait_ms then
  note_wake(now + opens_in)
  return enqueue(0)
end
return answer('rejected', 0, blocked, opens_in)
