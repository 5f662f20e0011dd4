-- Shared core of every group script (scripts.ts prepends the key prelude from keys.ts and
-- appends one operation). The rules are src/store/SEMANTICS.md; the memory store is the
-- reference this code mirrors.
--
-- KEYS[1] group base. ARGV[1] now in ms, or '' to use the server's TIME; ARGV[2] id of the
-- calling process; ARGV[3] event channel prefix (a process listens on prefix .. its id);
-- ARGV[4] encoded pool name; ARGV[5] pool name.
-- Operation arguments start at ARGV[6].

local base = KEYS[1]
local caller = ARGV[2]
local channel_prefix = ARGV[3]
local pool_enc = ARGV[4]

local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  -- Effects replication (Redis >= 5 default, the only mode in 7) lets scripts read TIME.
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local RPM_WINDOW_MS = 60000
-- Grants kept in the log at least, so an RPM gate learned later counts the traffic so far.
local MIN_LOG = 1024
local POOL_FIELDS = { 'name', 'max', 'queue', 'term', 'timeout', 'rpm', 'budget', 'reserved',
  'lconc', 'lrpm', 'paused', 'logcap', 'moved', 'minwait' }

-- Handoffs and reclaims of this call, per process that owns the slot: the caller's come
-- back in the reply, the others' are published to their owners.
local events = {}
local owners = {}
-- Earliest instant this group needs serving again (a lease deadline or a time gate opening).
local wake = false
-- The loaded pools of the group, in budget join order.
local group = {}
-- Budget origin, read once per call: nil = not read yet, false = no shared ceiling.
local budget_origin = nil

local function fmt(n)
  return string.format('%.0f', n)
end

local function opt_num(value)
  if value == false or value == nil or value == '' then return false end
  return tonumber(value)
end

local function add_event(owner, event)
  local list = events[owner]
  if not list then
    list = {}
    events[owner] = list
    owners[#owners + 1] = owner
  end
  list[#list + 1] = event
end

local function note_wake(at)
  if not wake or at < wake then wake = at end
end

local function load_pool(enc)
  local key = base .. K_POOL .. enc
  local v = redis.call('HMGET', key, unpack(POOL_FIELDS))
  if not v[1] then return false, v[13] end
  local p = {
    enc = enc, key = key, name = v[1],
    max = tonumber(v[2]), queue = tonumber(v[3]), term = tonumber(v[4]), timeout = tonumber(v[5]),
    rpm = opt_num(v[6]), budget = v[7] or '', reserved = tonumber(v[8]) or 0,
    lconc = opt_num(v[9]), lrpm = opt_num(v[10]), paused = tonumber(v[11]) or 0,
    logcap = tonumber(v[12]) or MIN_LOG, minwait = opt_num(v[14]),
    hkey = base .. K_HOLDERS .. enc, skey = base .. K_SLOTS .. enc, qkey = base .. K_QUEUE .. enc,
    wkey = base .. K_WAITERS .. enc, lkey = base .. K_LOG .. enc,
  }
  p.held = redis.call('ZCARD', p.hkey)
  return p
end

local function effective_limit(p)
  if p.lconc and p.lconc < p.max then return p.lconc end
  return p.max
end

local function effective_rpm(p)
  if not p.rpm then return p.lrpm end
  if not p.lrpm then return p.rpm end
  return math.min(p.rpm, p.lrpm)
end

-- The grant log keeps max(MIN_LOG, the largest gate ever used) entries, so the rpm-th
-- newest grant is always at hand.
local function size_log(p)
  local rpm = effective_rpm(p)
  if rpm and rpm > p.logcap then
    p.logcap = rpm
    redis.call('HSET', p.key, 'logcap', rpm)
  end
end

local function rpm_wait(p)
  local rpm = effective_rpm(p)
  if not rpm or rpm < 1 or redis.call('LLEN', p.lkey) < rpm then return 0 end
  local leaves_at = tonumber(redis.call('LINDEX', p.lkey, rpm - 1)) + RPM_WINDOW_MS
  if leaves_at > now then return leaves_at - now end
  return 0
end

local function gate_opens_in(p)
  local paused_for = 0
  if p.paused > now then paused_for = p.paused - now end
  return math.max(paused_for, rpm_wait(p))
end

local function origin_of()
  if budget_origin == nil then
    budget_origin = opt_num(redis.call('HGET', base .. K_BUDGET, 'origin'))
  end
  return budget_origin
end

local function budget_admits(p)
  if p.budget == '' then return true end
  local cap = origin_of()
  if not cap then return true end
  local held_total, reserved_total, borrowed = 0, 0, 0
  for _, q in ipairs(group) do
    held_total = held_total + q.held
    reserved_total = reserved_total + q.reserved
    if q.held > q.reserved then borrowed = borrowed + q.held - q.reserved end
  end
  if held_total >= cap then return false end
  if p.held < p.reserved then return true end
  return borrowed < math.max(0, cap - reserved_total)
end

local function obstacle(p)
  if p.held >= effective_limit(p) then return 'concurrency' end
  if not budget_admits(p) then return 'budget' end
  if now < p.paused then return 'paused' end
  if rpm_wait(p) > 0 then return 'rpm' end
  return false
end

local function is_time_gate(reason)
  return reason == 'paused' or reason == 'rpm'
end

-- Replies carry slots, figures and learned limits as arrays (field order is fixed by the
-- reader in replies.ts; Lua tables have none).
local function figures(p)
  return { p.held, redis.call('HLEN', p.wkey), effective_limit(p) }
end

local function grant(p, slot_id, owner)
  local request_deadline = now + p.timeout
  local lease_deadline = math.min(now + p.term, request_deadline)
  p.held = p.held + 1
  local seq = redis.call('HINCRBY', p.key, 'seq', 1)
  redis.call('ZADD', p.hkey, lease_deadline, slot_id)
  redis.call('HSET', p.skey, slot_id,
    seq .. ':' .. fmt(now) .. ':' .. fmt(request_deadline) .. ':' .. p.held .. ':' .. owner)
  redis.call('LPUSH', p.lkey, fmt(now))
  redis.call('LTRIM', p.lkey, 0, p.logcap - 1)
  return { slot_id, now, lease_deadline, request_deadline, p.held }
end

-- The slot as held ({ id, acquiredAt, leaseDeadline, requestDeadline, heldAtGrant }), or
-- false. The lease deadline lives in the holders set (renew moves it).
local function held_slot(p, slot_id)
  local lease = redis.call('ZSCORE', p.hkey, slot_id)
  if not lease then return false end
  local record = redis.call('HGET', p.skey, slot_id)
  local _, acquired, request, held_at = string.match(record, '^(%d+):(%d+):(%d+):(%d+):')
  return { slot_id, tonumber(acquired), tonumber(lease), tonumber(request), tonumber(held_at) }
end

local function drop_holder(p, slot_id)
  redis.call('ZREM', p.hkey, slot_id)
  redis.call('HDEL', p.skey, slot_id)
  p.held = p.held - 1
end

local function reclaim(p)
  local expired = redis.call('ZRANGEBYSCORE', p.hkey, '-inf', now)
  if #expired == 0 then return false end
  redis.call('ZREMRANGEBYSCORE', p.hkey, '-inf', now)
  local by_owner, order = {}, {}
  for i = 1, #expired, 500 do
    local chunk = { unpack(expired, i, math.min(i + 499, #expired)) }
    local records = redis.call('HMGET', p.skey, unpack(chunk))
    redis.call('HDEL', p.skey, unpack(chunk))
    for j, slot_id in ipairs(chunk) do
      local owner = records[j] and string.match(records[j], ':([^:]*)$') or caller
      if not by_owner[owner] then
        by_owner[owner] = {}
        order[#order + 1] = owner
      end
      table.insert(by_owner[owner], slot_id)
    end
  end
  p.held = p.held - #expired
  for _, owner in ipairs(order) do add_event(owner, { 'r', p.name, by_owner[owner] }) end
  return true
end

-- A waiter record: enqueuedAt, waitDeadline and the id of the process that waits.
local function parse_waiter(record)
  local enqueued, deadline, owner = string.match(record, '^(%d+):(%d+):(.*)$')
  return tonumber(enqueued), tonumber(deadline), owner
end

local function drop_head(p, slot_id)
  redis.call('LPOP', p.qkey)
  redis.call('HDEL', p.wkey, slot_id)
end

-- Serves the queue head-first: expired waiters leave, the head is granted while it can be,
-- and a head blocked by a time gate asks for a wake-up when the gate opens.
local function serve(p)
  while true do
    local head = redis.call('LINDEX', p.qkey, 0)
    if not head then return end
    local record = redis.call('HGET', p.wkey, head)
    if not record then
      redis.call('LPOP', p.qkey)
    else
      local enqueued_at, wait_deadline, owner = parse_waiter(record)
      if wait_deadline < now then
        drop_head(p, head)
      else
        local blocked = obstacle(p)
        if blocked then
          if is_time_gate(blocked) then note_wake(now + gate_opens_in(p)) end
          return
        end
        drop_head(p, head)
        add_event(owner, { 'g', p.name, grant(p, head, owner), now - enqueued_at })
      end
    end
  end
end

-- Serves the pool, then the other pools of its budget (a freed budget share may fit them).
local function serve_around(p)
  serve(p)
  if p.budget == '' then return end
  for _, q in ipairs(group) do
    if q ~= p then serve(q) end
  end
end

local function serve_group()
  for _, q in ipairs(group) do serve(q) end
end

local function reclaim_group()
  local freed = {}
  for _, q in ipairs(group) do
    if reclaim(q) then freed[#freed + 1] = q end
  end
  for _, q in ipairs(freed) do serve_around(q) end
end

-- Loads the budget's member pools in join order (`known` stands in for its own entry).
local function load_members(known)
  group = {}
  for _, enc in ipairs(redis.call('LRANGE', base .. K_MEMBERS, 0, -1)) do
    if known and enc == known.enc then
      group[#group + 1] = known
    else
      local q = load_pool(enc)
      if q then group[#group + 1] = q end
    end
  end
end

-- Loads the pool's group (the budget's members, or the pool alone), reclaims every lease
-- that ran out and serves the pools that freed slots.
local function load_group(p)
  if p.budget == '' then
    group = { p }
  else
    load_members(p)
    local seen = false
    for _, q in ipairs(group) do
      if q == p then seen = true end
    end
    if not seen then group[#group + 1] = p end
  end
  reclaim_group()
end

local function waiter_count(p)
  return redis.call('HLEN', p.wkey)
end

-- Drops waiters past their wait deadline anywhere in the queue. Only needed when the queue
-- looks full: waiters of a crashed process are never cancelled and would hold places.
-- `minwait` is a lower bound of the waiters' deadlines, so the scan runs only when one of
-- them has really run out.
local function purge_expired_waiters(p)
  if not p.minwait or p.minwait >= now then return end
  local all = redis.call('HGETALL', p.wkey)
  local earliest = false
  for i = 1, #all, 2 do
    local _, wait_deadline = parse_waiter(all[i + 1])
    if wait_deadline < now then
      redis.call('HDEL', p.wkey, all[i])
      redis.call('LREM', p.qkey, 1, all[i])
    elseif not earliest or wait_deadline < earliest then
      earliest = wait_deadline
    end
  end
  p.minwait = earliest
  redis.call('HSET', p.key, 'minwait', earliest and fmt(earliest) or '')
end

local function enqueue_waiter(p, slot_id, wait_ms)
  local wait_deadline = now + wait_ms
  redis.call('RPUSH', p.qkey, slot_id)
  redis.call('HSET', p.wkey, slot_id, fmt(now) .. ':' .. fmt(wait_deadline) .. ':' .. caller)
  if not p.minwait or wait_deadline < p.minwait then
    p.minwait = wait_deadline
    redis.call('HSET', p.key, 'minwait', fmt(wait_deadline))
  end
end

local function delete_pool_state(p)
  redis.call('DEL', p.key, p.hkey, p.skey, p.qkey, p.wkey, p.lkey)
  redis.call('LREM', base .. K_MEMBERS, 0, p.enc)
end

local function learned_of(p)
  return { p.lconc or cjson.null, p.lrpm or cjson.null, p.paused }
end

-- Ends every script: adds the earliest lease deadline of the group to the wake-up time,
-- publishes other processes' events to them and encodes the reply with the caller's.
local function finish(result)
  for _, q in ipairs(group) do
    local first = redis.call('ZRANGE', q.hkey, 0, 0, 'WITHSCORES')
    if first[2] then note_wake(tonumber(first[2])) end
  end
  local reply = { r = result, n = now }
  if wake then reply.w = wake end
  for _, owner in ipairs(owners) do
    if owner == caller then
      reply.e = events[owner]
    else
      redis.call('PUBLISH', channel_prefix .. owner, cjson.encode(events[owner]))
    end
  end
  return cjson.encode(reply)
end

local function missing(moved)
  return finish({ t = 'missing', moved = moved or nil })
end
