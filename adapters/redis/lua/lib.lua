-- Shared core of every group script. The rules are src/store/SEMANTICS.md; the memory store
-- is the reference this code mirrors.
--
-- It runs two ways (scripts.ts builds both): as one Redis Functions library, loaded once,
-- where every operation is a function and the `local function`s below are built once per
-- load; or, where Functions are unavailable, as one EVALSHA script per operation (key
-- prelude + the functions below that the operation reaches + the operation), which builds a
-- closure for every `local function` it holds on every call, so unused ones are left out.
-- Each function therefore starts with `local function` at column 0 and ends with `end` at
-- column 0; everything else at the top level is always included.
--
-- Every operation starts with begin(KEYS, ARGV): KEYS[1] group base. ARGV[1] now in ms, or ''
-- to use the server's TIME; ARGV[2] id of the calling process; ARGV[3] encoded pool name;
-- ARGV[4] pool name. Operation arguments start at ARGV[5].
--
-- Each process listens to the group's events on the sharded channel base .. K_EVENTS .. its
-- id (same hash tag as the group's keys, so on Redis Cluster it lives where they do).
--
-- Replies are flat arrays (no JSON; replies.ts reads them): now, the wake-up instant (false:
-- none), the number of event fields that follow, the caller's events, then the result,
-- whose first field is its type.

-- The call's state: a library's top-level locals outlive a call, so begin sets every one.
local base, caller, pool_enc, now

local RPM_WINDOW_MS = 60000
-- Grants kept in the log at least, so an RPM gate learned later counts the traffic so far.
local MIN_LOG = 1024
-- The log is trimmed back to its capacity only once it is this much longer (one LTRIM per
-- LOG_SLACK grants instead of one per grant); a longer log never changes a gate's answer.
local LOG_SLACK = 128

-- Handoffs and reclaims of this call as flat field lists, per process that owns the slot:
-- the caller's come back in the reply, the others' are published to their owners.
local events
local owners
-- Whether a process listens to this group (see listening), per process id, for this call.
local listeners
-- Earliest instant this group needs serving again (a lease deadline or a time gate opening).
local wake
-- The loaded pools of the group, in budget join order.
local group
-- Budget origin, read once per call: nil = not read yet, false = no shared ceiling.
local budget_origin
-- Loaded pools by encoded name, kept across the operations of one batch (batch.lua sets it;
-- false: every load reads Redis). Each operation keeps a loaded pool's fields in step with
-- what it writes, so a later operation of the batch may reuse the table.
local pool_cache

-- Starts a call: its keys, arguments and clock, and empty state.
local function begin(keys, argv)
  base, caller, pool_enc = keys[1], argv[2], argv[3]
  if argv[1] ~= '' then
    now = tonumber(argv[1])
  else
    -- Effects replication (Redis >= 5 default, the only mode in 7) lets scripts read TIME.
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  events, owners, listeners, group = {}, {}, {}, {}
  wake, budget_origin, pool_cache = false, nil, false
end

-- An instant or a count as Redis stores it (Lua's own number-to-string keeps 14 digits).
local function fmt(n)
  return string.format('%d', n)
end

local function opt_num(value)
  if value == false or value == nil or value == '' then return false end
  return tonumber(value)
end

-- The caller's or another process's event list (created on first use).
local function events_of(owner)
  local list = events[owner]
  if not list then
    list = {}
    events[owner] = list
    owners[#owners + 1] = owner
  end
  return list
end

local function note_wake(at)
  if not wake or at < wake then wake = at end
end

-- Parsed pool fields and key names by their text, read-only once made. In a Functions library
-- they outlive the call (a library's top level runs once per load), so a pool's `cfg` is
-- parsed once, not on every call; a script's top level runs again on every call. Parsing is
-- a pure function of the text: a hit is what parsing would answer. Each table is dropped
-- once it holds PARSED_MAX entries, which bounds the memory of pools that come and go.
local PARSED_MAX = 4096
local parsed_by = { {}, {}, {}, {} }
local parsed_count = { 0, 0, 0, 0 }

local function parsed(kind, text, parse, a, b)
  local hit = parsed_by[kind][text]
  if hit then return hit end
  hit = parse(text, a, b)
  if parsed_count[kind] >= PARSED_MAX then
    parsed_by[kind] = {}
    parsed_count[kind] = 0
  end
  parsed_by[kind][text] = hit
  parsed_count[kind] = parsed_count[kind] + 1
  return hit
end

-- `cfg` = max:queue:term:timeout:rpm:reserved:inBudget(0/1):name (see load_pool).
local function parse_cfg(text)
  local max, queue, term, timeout, rpm, reserved, in_budget, name =
    string.match(text, '^([^:]*):([^:]*):([^:]*):([^:]*):([^:]*):([^:]*):([^:]*):(.*)$')
  return {
    max = tonumber(max), queue = tonumber(queue), term = tonumber(term),
    timeout = tonumber(timeout), rpm = opt_num(rpm), reserved = tonumber(reserved),
    in_budget = in_budget == '1', name = name,
  }
end

-- `lrn` = learned concurrency:rpm:pausedUntil:log capacity.
local function parse_lrn(text)
  local lconc, lrpm, paused, logcap = string.match(text, '^([^:]*):([^:]*):([^:]*):([^:]*)$')
  return {
    lconc = opt_num(lconc), lrpm = opt_num(lrpm), paused = tonumber(paused),
    logcap = tonumber(logcap),
  }
end

-- `shr` = version:probe level:failures:failedAt ('' = version 0, no probe backoff).
local function parse_shr(text)
  local lver, plevel, pfail, pat = string.match(text, '^([^:]*):([^:]*):([^:]*):([^:]*)$')
  return { lver = tonumber(lver) or 0, plevel = opt_num(plevel), pfail = opt_num(pfail),
    pat = opt_num(pat) }
end

-- The keys of a pool (memoized by its hash's key, which names its base and pool).
local function pool_keys(_, group_base, enc)
  return {
    hkey = group_base .. K_HOLDERS .. enc, skey = group_base .. K_SLOTS .. enc,
    qkey = group_base .. K_QUEUE .. enc, wkey = group_base .. K_WAITERS .. enc,
    lkey = group_base .. K_LOG .. enc,
  }
end

-- A pool loaded by this call, kept for the next operations of a batch (see pool_cache).
local function remember_pool(p)
  if pool_cache then pool_cache[p.enc] = p end
  return p
end

-- The pool hash packs what every script reads into two fields, so loading a pool is one
-- short HMGET: `cfg` = max:queue:term:timeout:rpm:reserved:inBudget(0/1):name (written by
-- upsert-pool; the name comes last as it may hold ':'), `lrn` = learned concurrency:rpm:
-- pausedUntil:log capacity ('' = none). `due` is a lower bound of the earliest lease
-- deadline (absent: no lease can be held): while it lies ahead no lease can have run out, so
-- no script looks at the holders set to reclaim; it is also the group's next wake-up. A
-- release leaves it early, which only wakes the group early (one serve, which moves it
-- on); a grant earlier than it moves it (a wake-up too late would leave a dead process's
-- slots held). `trim` counts the grants trimmed off the log (see grant), `minwait` is a
-- lower bound of the waiters' deadlines (see serve), `grace` the end of the pause of a pool
-- re-created after Redis lost it (see upsert-pool). `shr` = version of the learned limits
-- (one more per set-learned):probe level:failures:failedAt ('' = no probe backoff), the part
-- of the learner every process adopts (see SharedLearned in src/store/types.ts); absent:
-- version 0. `moved` is read only where needed.
local function load_pool(enc)
  if pool_cache and pool_cache[enc] then return pool_cache[enc] end
  local key = base .. K_POOL .. enc
  local v = redis.call('HMGET', key, 'cfg', 'lrn', 'due', 'trim', 'minwait', 'grace', 'shr')
  if not v[1] then return false, redis.call('HGET', key, 'moved') end
  local c = parsed(1, v[1], parse_cfg)
  local l = parsed(2, v[2], parse_lrn)
  local s = parsed(3, v[7] or '', parse_shr)
  local k = parsed(4, key, pool_keys, base, enc)
  return remember_pool({
    enc = enc, key = key, name = c.name,
    max = c.max, queue = c.queue, term = c.term, timeout = c.timeout, rpm = c.rpm,
    reserved = c.reserved, in_budget = c.in_budget, lconc = l.lconc, lrpm = l.lrpm,
    paused = l.paused, logcap = l.logcap, due = opt_num(v[3]),
    trimmed = tonumber(v[4]) or 0, minwait = opt_num(v[5]), grace = tonumber(v[6]) or 0,
    lver = s.lver, plevel = s.plevel, pfail = s.pfail, pat = s.pat,
    hkey = k.hkey, skey = k.skey, qkey = k.qkey, wkey = k.wkey, lkey = k.lkey,
  })
end

-- The number of holders, counted on first use (a release nobody waits for never needs it).
-- Once counted, every change to the holders set updates it; before, ZCARD sees the changes.
local function holders(p)
  if not p.held then p.held = redis.call('ZCARD', p.hkey) end
  return p.held
end

-- The number of waiters, counted on first use; every change this call makes to the waiters
-- hash then updates it (by what HSET/HDEL answer), so the operations of a batch on one pool
-- count them once, not once per acquire and release (see holders).
local function waiter_count(p)
  if not p.waiting then p.waiting = redis.call('HLEN', p.wkey) end
  return p.waiting
end

-- `by`: waiters the call just added (+) or removed (-); nothing to do before a count.
local function waiters_changed(p, by)
  if p.waiting then p.waiting = p.waiting + by end
end

-- Writes `lrn` back (%.17g: learned values are kept exactly, fractions included).
local function save_learned(p)
  local function num(x) return x and string.format('%.17g', x) or '' end
  redis.call('HSET', p.key, 'lrn',
    num(p.lconc) .. ':' .. num(p.lrpm) .. ':' .. num(p.paused) .. ':' .. num(p.logcap))
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
    save_learned(p)
  end
end

local function rpm_wait(p)
  local rpm = effective_rpm(p)
  if not rpm or rpm < 1 or redis.call('LLEN', p.lkey) < rpm then return 0 end
  local leaves_at = tonumber(redis.call('LINDEX', p.lkey, rpm - 1)) + RPM_WINDOW_MS
  if leaves_at > now then return leaves_at - now end
  return 0
end

-- A learned pause (429 Retry-After) and the restore grace both hold admissions back.
local function paused_until(p)
  return math.max(p.paused, p.grace)
end

local function gate_opens_in(p)
  local paused_for = 0
  local until_at = paused_until(p)
  if until_at > now then paused_for = until_at - now end
  return math.max(paused_for, rpm_wait(p))
end

local function origin_of()
  if budget_origin == nil then
    budget_origin = opt_num(redis.call('HGET', base .. K_BUDGET, 'origin'))
  end
  return budget_origin
end

-- How many more slots the budget lets p take now (see budgetRoom in memory-pool-state.ts),
-- or false when no budget binds.
local function budget_room(p)
  if not p.in_budget then return false end
  local cap = origin_of()
  if not cap then return false end
  local held_total, reserved_total, borrowed = 0, 0, 0
  for _, q in ipairs(group) do
    local held = holders(q)
    held_total = held_total + held
    reserved_total = reserved_total + q.reserved
    if held > q.reserved then borrowed = borrowed + held - q.reserved end
  end
  local own_reserved = math.max(0, p.reserved - holders(p))
  local borrowable = math.max(0, cap - reserved_total - borrowed)
  return math.max(0, math.min(cap - held_total, own_reserved + borrowable))
end

local function budget_admits(p)
  return budget_room(p) ~= 0
end

local function obstacle(p)
  if holders(p) >= effective_limit(p) then return 'concurrency' end
  if not budget_admits(p) then return 'budget' end
  if now < paused_until(p) then return 'paused' end
  if rpm_wait(p) > 0 then return 'rpm' end
  return false
end

local function is_time_gate(reason)
  return reason == 'paused' or reason == 'rpm'
end

-- Appends the fields of a slot ({ id, acquiredAt, leaseDeadline, requestDeadline,
-- heldAtGrant, budgetRoom }) to a flat list.
local function push_slot(list, slot)
  for i = 1, 6 do list[#list + 1] = slot[i] end
end

-- A holder's record in the slots hash: seq:acquiredAt:leaseDeadline:requestDeadline:
-- heldAtGrant:owner (`request_left`: ms to the request deadline, when not the pool's whole
-- request timeout: an adopted slot). `seq` orders holders by grant: it is the number of grants ever logged
-- (the log's length plus what was trimmed off it), so no counter is written per grant. The
-- lease deadline is also the holder's score in the holders set (reclaim reads that one).
-- `lease_until`: a lease that may not run past this (adopt: the slot's own lease).
local function grant(p, slot_id, owner, request_left, lease_until)
  local request_deadline = now + (request_left or p.timeout)
  local lease_deadline = math.min(now + p.term, request_deadline, lease_until or math.huge)
  p.held = holders(p) + 1
  if not p.due or lease_deadline < p.due then
    p.due = lease_deadline
    redis.call('HSET', p.key, 'due', fmt(lease_deadline))
  end
  local logged = redis.call('LPUSH', p.lkey, fmt(now))
  local seq = p.trimmed + logged
  if logged > p.logcap + LOG_SLACK then
    redis.call('LTRIM', p.lkey, 0, p.logcap - 1)
    p.trimmed = p.trimmed + logged - p.logcap
    redis.call('HSET', p.key, 'trim', fmt(p.trimmed))
  end
  redis.call('ZADD', p.hkey, lease_deadline, slot_id)
  redis.call('HSET', p.skey, slot_id, string.format('%d:%d:%d:%d:%d:%s', seq, now,
    lease_deadline, request_deadline, p.held, owner))
  -- -1: no budget binds.
  return { slot_id, now, lease_deadline, request_deadline, p.held, budget_room(p) or -1 }
end

-- The slot as held ({ id, acquiredAt, leaseDeadline, requestDeadline, heldAtGrant, -1:
-- budget room not known after the grant, owner }), or false. push_slot sends the first six.
local function held_slot(p, slot_id)
  local record = redis.call('HGET', p.skey, slot_id)
  if not record then return false end
  local _, acquired, lease, request, held_at, owner =
    string.match(record, '^(%d+):(%d+):(%d+):(%d+):(%d+):(.*)$')
  return { slot_id, tonumber(acquired), tonumber(lease), tonumber(request), tonumber(held_at), -1,
    owner }
end

-- A renew or release of another process's slot (a Lock API call sent to another server):
-- its owner hears of it, so its record of what it holds (re-adopted after Redis lost its
-- data) keeps the lease Redis gave, and forgets a slot released elsewhere.
-- Events: `n, pool, slot id, leaseDeadline` (renewed), `d, pool, slot id` (released).
local function tell_owner(p, slot, kind, lease_deadline)
  local owner = slot[7]
  if owner == caller or owner == nil or owner == '' then return end
  local list = events_of(owner)
  list[#list + 1] = kind
  list[#list + 1] = p.name
  list[#list + 1] = slot[1]
  if lease_deadline then list[#list + 1] = lease_deadline end
end

local function drop_holder(p, slot_id)
  redis.call('ZREM', p.hkey, slot_id)
  redis.call('HDEL', p.skey, slot_id)
  if p.held then p.held = p.held - 1 end
end

-- Reclaims the leases that ran out (deadline <= now); free while `due` lies ahead. Then
-- moves `due` to the earliest lease deadline left.
local function reclaim(p)
  if not p.due or p.due > now then return false end
  local expired = redis.call('ZRANGEBYSCORE', p.hkey, '-inf', now)
  if #expired > 0 then
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
    if p.held then p.held = p.held - #expired end
    for _, owner in ipairs(order) do
      local list, ids = events_of(owner), by_owner[owner]
      list[#list + 1] = 'r'
      list[#list + 1] = p.name
      list[#list + 1] = #ids
      for _, id in ipairs(ids) do list[#list + 1] = id end
    end
  end
  p.due = false
  if holders(p) > 0 then
    p.due = tonumber(redis.call('ZRANGE', p.hkey, 0, 0, 'WITHSCORES')[2])
    redis.call('HSET', p.key, 'due', fmt(p.due))
  else
    redis.call('HDEL', p.key, 'due')
  end
  return #expired > 0
end

-- A waiter record: enqueuedAt, waitDeadline and the id of the process that waits.
local function parse_waiter(record)
  local enqueued, deadline, owner = string.match(record, '^(%d+):(%d+):(.*)$')
  return tonumber(enqueued), tonumber(deadline), owner
end

-- Whether the process that queued a waiter still listens to this group's events. A process
-- subscribes before its first call in a group and stays subscribed while it lives; when it
-- dies, Redis drops its connection and with it the subscription. Its waiters are then
-- skipped: a slot handed to them would sit unused until its lease ran out.
local function listening(owner)
  if owner == caller then return true end
  local known = listeners[owner]
  if known == nil then
    known = redis.call('PUBSUB', 'SHARDNUMSUB', base .. K_EVENTS .. owner)[2] > 0
    listeners[owner] = known
  end
  return known
end

-- Serves the queue head-first: waiters whose wait ran out or whose process stopped
-- listening (see listening) leave, the head is granted while it can be, and a head blocked
-- by a time gate asks for a wake-up when the gate opens. Answers how many waiters left the
-- queue.
--
-- `minwait` is a lower bound of the waiters' deadlines, set whenever a waiter may be queued
-- (enqueue sets it; only an empty queue clears it). Absent, nobody waits: nothing to read.
-- While it lies ahead, no waiter has run out, so a blocked pool ends the turn without
-- reading the queue.
local function serve(p)
  local served = 0
  while true do
    if not p.minwait then return served end
    -- `free`: the pool can grant now, so the head leaves the queue whatever it turns out to be
    -- (taken with one LPOP instead of a look and a pop).
    local free = false
    if p.minwait >= now then
      local blocked = obstacle(p)
      if blocked then
        if is_time_gate(blocked) then note_wake(now + gate_opens_in(p)) end
        return served
      end
      free = true
    end
    local head
    if free then
      head = redis.call('LPOP', p.qkey)
    else
      head = redis.call('LINDEX', p.qkey, 0)
    end
    if not head then
      p.minwait = false
      redis.call('HDEL', p.key, 'minwait')
      return served
    end
    local record = redis.call('HGET', p.wkey, head)
    if not record then
      if not free then redis.call('LPOP', p.qkey) end
    else
      local enqueued_at, wait_deadline, owner = parse_waiter(record)
      local leaves = wait_deadline < now or not listening(owner)
      if not leaves and not free then
        local blocked = obstacle(p)
        if blocked then
          if is_time_gate(blocked) then note_wake(now + gate_opens_in(p)) end
          return served
        end
      end
      if not free then redis.call('LPOP', p.qkey) end
      waiters_changed(p, -redis.call('HDEL', p.wkey, head))
      served = served + 1
      if not leaves then
        local slot = grant(p, head, owner)
        local list = events_of(owner)
        list[#list + 1] = 'g'
        list[#list + 1] = p.name
        push_slot(list, slot)
        list[#list + 1] = now - enqueued_at
      end
    end
  end
end

-- Serves the pool, then the other pools of its budget (a freed budget share may fit them).
local function serve_around(p)
  serve(p)
  if not p.in_budget then return end
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
  if not p.in_budget then
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
      waiters_changed(p, -redis.call('HDEL', p.wkey, all[i]))
      redis.call('LREM', p.qkey, 1, all[i])
    elseif not earliest or wait_deadline < earliest then
      earliest = wait_deadline
    end
  end
  p.minwait = earliest
  if earliest then
    redis.call('HSET', p.key, 'minwait', fmt(earliest))
  else
    redis.call('HDEL', p.key, 'minwait')
  end
end

-- `enqueued_at`: when the waiter first queued (default now; a rejoining waiter keeps its own).
local function enqueue_waiter(p, slot_id, wait_ms, enqueued_at)
  local wait_deadline = now + wait_ms
  redis.call('RPUSH', p.qkey, slot_id)
  waiters_changed(p, redis.call('HSET', p.wkey, slot_id,
    string.format('%d:%d:%s', enqueued_at or now, wait_deadline, caller)))
  if not p.minwait or wait_deadline < p.minwait then
    p.minwait = wait_deadline
    redis.call('HSET', p.key, 'minwait', fmt(wait_deadline))
  end
end

local function delete_pool_state(p)
  redis.call('DEL', p.key, p.hkey, p.skey, p.qkey, p.wkey, p.lkey)
  p.waiting = 0
  redis.call('LREM', base .. K_MEMBERS, 0, p.enc)
end

-- Learned limits as reply fields: concurrency, rpm (false: none), pausedUntil.
local function push_learned(list, p)
  list[#list + 1] = p.lconc
  list[#list + 1] = p.lrpm
  list[#list + 1] = p.paused
end

-- The probe backoff as reply fields: level, failures, failedAt (false: none).
local function push_probe(list, p)
  list[#list + 1] = p.plevel
  list[#list + 1] = p.pfail
  list[#list + 1] = p.pat
end

-- The learned limits with their version, as releases and inspections tell them (7 fields).
local function push_shared(list, p)
  list[#list + 1] = p.lver
  push_learned(list, p)
  push_probe(list, p)
end

-- Ends every script: adds the group's earliest lease deadline to the wake-up time,
-- publishes other processes' events to them (JSON: the same flat fields) and builds the
-- reply (see the top of this file) around `result`, a flat list that starts with its type.
local function finish(result)
  for _, q in ipairs(group) do
    if q.due then note_wake(q.due) end
  end
  local reply = { now, wake, 0 }
  for _, owner in ipairs(owners) do
    local list = events[owner]
    if owner == caller then
      reply[3] = #list
      for i = 1, #list do reply[3 + i] = list[i] end
    else
      redis.call('SPUBLISH', base .. K_EVENTS .. owner, cjson.encode(list))
    end
  end
  for i = 1, #result do reply[#reply + 1] = result[i] end
  return reply
end

local function missing(moved)
  return finish({ 'missing', moved or '' })
end

-- The operations a process sends most, as functions of a loaded pool (after load_group) that
-- answer their result list (without `finish`): the one-operation scripts (acquire.lua ...)
-- and batch.lua share them. SEMANTICS.md gives the rules.

-- acquire's answer: its type, the slot (granted), reason and retryAfterMs (rejected), then
-- the figures held, queued, limit.
local function acquire_answer(p, kind, waiting, reason, retry_after, slot)
  local result = { kind }
  if slot then push_slot(result, slot) end
  if reason then
    result[#result + 1] = reason
    result[#result + 1] = retry_after
  end
  result[#result + 1] = holders(p)
  result[#result + 1] = waiting
  result[#result + 1] = effective_limit(p)
  return result
end

local function acquire_op(p, slot_id, wait_ms)
  -- Nobody waits while `minwait` is absent (see serve).
  local waiting = p.minwait and waiter_count(p) or 0
  if waiting > 0 then waiting = waiting - serve(p) end
  if waiting > 0 then
    -- A newcomer never overtakes waiters; behind them no turn can be estimated. A time gate
    -- that holds everyone back is named, its opening the earliest retry.
    if wait_ms == 0 then
      local blocked = obstacle(p)
      if blocked and is_time_gate(blocked) then
        return acquire_answer(p, 'rejected', waiting, blocked, gate_opens_in(p))
      end
      return acquire_answer(p, 'rejected', waiting, 'concurrency', false)
    end
    if waiting >= p.queue then
      purge_expired_waiters(p)
      waiting = waiter_count(p)
    end
    if waiting < p.queue then
      enqueue_waiter(p, slot_id, wait_ms)
      return acquire_answer(p, 'queued', waiting + 1)
    end
    return acquire_answer(p, 'rejected', waiting, 'queue_full', false)
  end
  local blocked = obstacle(p)
  if not blocked then
    local slot = grant(p, slot_id, caller)
    return acquire_answer(p, 'granted', 0, false, false, slot)
  end
  local can_queue = wait_ms > 0 and p.queue > 0
  if not is_time_gate(blocked) then
    if can_queue then
      enqueue_waiter(p, slot_id, wait_ms)
      return acquire_answer(p, 'queued', 1)
    end
    return acquire_answer(p, 'rejected', 0, blocked, false)
  end
  local opens_in = gate_opens_in(p)
  if can_queue and opens_in <= wait_ms then
    note_wake(now + opens_in)
    enqueue_waiter(p, slot_id, wait_ms)
    return acquire_answer(p, 'queued', 1)
  end
  return acquire_answer(p, 'rejected', 0, blocked, opens_in)
end

-- A lease that ran out before the release arrived was reclaimed by load_group: released
-- stays 0.
local function release_op(p, slot_id)
  local slot = held_slot(p, slot_id)
  if not slot then return { 'released', 0 } end
  -- Read before the handoff: the learner judges how busy the pool was at this release
  -- (nobody waits while `minwait` is absent, see serve).
  local held_before = holders(p)
  local queued_before = p.minwait and waiter_count(p) or 0
  drop_holder(p, slot_id)
  tell_owner(p, slot, 'd')
  serve_around(p)
  local result = { 'released', 1 }
  push_slot(result, slot)
  result[#result + 1] = held_before
  result[#result + 1] = queued_before
  push_shared(result, p)
  return result
end

local function renew_op(p, slot_id)
  local slot = held_slot(p, slot_id)
  if not slot then return { 'not_found' } end
  local current_lease, request_deadline = slot[3], slot[4]
  if current_lease >= request_deadline then return { 'capped', request_deadline } end
  local lease_deadline = math.min(now + p.term, request_deadline)
  -- A renewed lease only moves later, so the pool's `due` (a lower bound of its leases)
  -- stays one.
  redis.call('ZADD', p.hkey, 'XX', lease_deadline, slot_id)
  -- The record keeps the lease deadline too (seq:acquiredAt:leaseDeadline:...).
  local record = redis.call('HGET', p.skey, slot_id)
  local renewed = string.gsub(record, '^(%d+:%d+:)%d+', '%1' .. fmt(lease_deadline), 1)
  redis.call('HSET', p.skey, slot_id, renewed)
  tell_owner(p, slot, 'n', lease_deadline)
  return { 'renewed', lease_deadline }
end

local function cancel_op(p, slot_id)
  if redis.call('HDEL', p.wkey, slot_id) == 1 then
    waiters_changed(p, -1)
    redis.call('LREM', p.qkey, 1, slot_id)
    return { 'cancelled' }
  end
  local slot = held_slot(p, slot_id)
  if slot then
    local result = { 'granted' }
    push_slot(result, slot)
    return result
  end
  return { 'unknown' }
end
