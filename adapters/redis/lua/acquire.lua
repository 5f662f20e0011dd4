-- acquire: ARGV[6] slot id, ARGV[7] waitMs. See SEMANTICS.md "acquire".
local slot_id = ARGV[6]
local wait_ms = tonumber(ARGV[7])

local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end
load_group(p)

local function rejected(reason, retry_after)
  return finish({ t = 'rejected', reason = reason, retryAfterMs = retry_after or cjson.null,
    figures = figures(p) })
end

local function enqueue()
  enqueue_waiter(p, slot_id, wait_ms)
  return finish({ t = 'queued', figures = figures(p) })
end

if waiter_count(p) > 0 then serve(p) end
local waiting = waiter_count(p)
if waiting > 0 then
  -- A newcomer never overtakes waiters; behind them no turn can be estimated.
  if wait_ms == 0 then return rejected('concurrency', false) end
  if waiting >= p.queue then
    purge_expired_waiters(p)
    waiting = waiter_count(p)
  end
  if waiting < p.queue then return enqueue() end
  return rejected('queue_full', false)
end

local blocked = obstacle(p)
if not blocked then
  return finish({ t = 'granted', slot = grant(p, slot_id, caller), figures = figures(p) })
end
local can_queue = wait_ms > 0 and p.queue > 0
if not is_time_gate(blocked) then
  if can_queue then return enqueue() end
  return rejected(blocked, false)
end
local opens_in = gate_opens_in(p)
if can_queue and opens_in <= wait_ms then
  note_wake(now + opens_in)
  return enqueue()
end
return rejected(blocked, opens_in)
