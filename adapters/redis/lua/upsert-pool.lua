-- upsertPool: ARGV[5] maxConcurrent, ARGV[6] queueSize, ARGV[7] termMs, ARGV[8]
-- requestTimeoutMs, ARGV[9] rpm ('' = none), ARGV[10] budget ('' = none), ARGV[11]
-- reservedConcurrent, ARGV[12] this group's tag, ARGV[13] ms the pool admits nobody new when
-- this call creates it ('0': none; a process defining again a pool Redis lost, so that every
-- process can adopt its slots before waiters are served: the `grace` field, an obstacle like a
-- learned pause), ARGV[14] '1' when completing a move
-- (then ARGV[15..17] are the learned concurrency, rpm and pausedUntil carried over and
-- ARGV[18..] the grant log, newest first). Holders and waiters survive; a raised limit serves
-- waiters.
local key = base .. K_POOL .. pool_enc
local existing = redis.call('HMGET', key, 'cfg', 'moved')
local completing_move = ARGV[14] == '1'
if not existing[1] and existing[2] and existing[2] ~= ARGV[12] and not completing_move then
  -- The pool lives in another group now: the caller moves it here first.
  return missing(existing[2])
end

local created = false
if not existing[1] then
  redis.call('DEL', key)
  -- `due` and `minwait` 0: the first script checks the holders set and the queue once (a
  -- pool hash lost on its own may leave holders or waiters behind; they must still run out
  -- and be served).
  redis.call('HSET', key, 'lrn', '::0:' .. MIN_LOG, 'due', 0, 'minwait', 0)
  -- Its own field, not the learned pause: a learner's setLearned must not end it early.
  local restore_grace = tonumber(ARGV[13])
  if restore_grace > 0 then redis.call('HSET', key, 'grace', fmt(now + restore_grace)) end
  if ARGV[10] ~= '' and not redis.call('LPOS', base .. K_MEMBERS, pool_enc) then
    redis.call('RPUSH', base .. K_MEMBERS, pool_enc)
  end
  created = true
end
-- The packed configuration (see load_pool in lib.lua).
redis.call('HSET', key, 'cfg', table.concat({ ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9],
  ARGV[11], ARGV[10] ~= '' and '1' or '0', ARGV[4] }, ':'))

if created and completing_move then
  local log_key = base .. K_LOG .. pool_enc
  redis.call('DEL', log_key)
  for i = 18, #ARGV do redis.call('RPUSH', log_key, ARGV[i]) end
  redis.call('HSET', key, 'lrn', ARGV[15] .. ':' .. ARGV[16] .. ':' .. ARGV[17] .. ':' ..
    math.max(MIN_LOG, #ARGV - 17))
end

local p = load_pool(pool_enc)
size_log(p)
load_group(p)
serve_around(p)
return finish({ 'ok', created and 1 or 0 })
