-- setLearned: ARGV[5] concurrency ('' = none), ARGV[6] rpm ('' = none), ARGV[7] pausedUntil,
-- ARGV[8..10] probe level, failures, failedAt ('' = no probe backoff). Moves the version on.
local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end

p.lconc = opt_num(ARGV[5])
p.lrpm = opt_num(ARGV[6])
p.paused = tonumber(ARGV[7])
local rpm = effective_rpm(p)
if rpm and rpm > p.logcap then p.logcap = rpm end
save_learned(p)
p.lver = p.lver + 1
redis.call('HSET', p.key, 'shr', p.lver .. ':' .. ARGV[8] .. ':' .. ARGV[9] .. ':' .. ARGV[10])
-- A looser limit may admit waiters at once; a tighter one never revokes held slots.
load_group(p)
serve_around(p)
return finish({ 'ok', 0 })
