-- setLearned: ARGV[6] concurrency ('' = none), ARGV[7] rpm ('' = none), ARGV[8] pausedUntil.
local p, moved = load_pool(pool_enc)
if not p then return missing(moved) end

p.lconc = opt_num(ARGV[6])
p.lrpm = opt_num(ARGV[7])
p.paused = tonumber(ARGV[8])
redis.call('HSET', p.key, 'lconc', ARGV[6], 'lrpm', ARGV[7], 'paused', ARGV[8])
size_log(p)
-- A looser limit may admit waiters at once; a tighter one never revokes held slots.
load_group(p)
serve_around(p)
return finish({ t = 'ok' })
