-- upsertPool: ARGV[6] maxConcurrent, ARGV[7] queueSize, ARGV[8] termMs, ARGV[9]
-- requestTimeoutMs, ARGV[10] rpm ('' = none), ARGV[11] budget ('' = none), ARGV[12]
-- reservedConcurrent, ARGV[13] this group's tag, ARGV[14] '1' when completing a move (then
-- ARGV[15..17] are the learned concurrency, rpm and pausedUntil carried over and ARGV[18..]
-- the grant log, newest first). Holders and waiters survive; a raised limit serves waiters.
local key = base .. K_POOL .. pool_enc
local existing = redis.call('HMGET', key, 'cfg', 'moved')
local completing_move = ARGV[14] == '1'
if not existing[1] and existing[2] and existing[2] ~= ARGV[13] and not completing_move then
  -- The pool lives in another group now: the caller moves it here first.
  return missing(existing[2])
end

local created = false
if not existing[1] then
  redis.call('DEL', key)
  redis.call('HSET', key, 'lrn', '::0:' .. MIN_LOG)
  if ARGV[11] ~= '' and not redis.call('LPOS', base .. K_MEMBERS, pool_enc) then
    redis.call('RPUSH', base .. K_MEMBERS, pool_enc)
  end
  created = true
end
-- The packed configuration (see load_pool in lib.lua).
redis.call('HSET', key, 'cfg', table.concat({ ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10],
  ARGV[12], ARGV[11] ~= '' and '1' or '0', ARGV[5] }, ':'))

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
