-- The group a pool lives in: KEYS[1] the pool's home pointer, ARGV[1] the group the caller
-- wants. Claims it when no group is recorded; otherwise answers the recorded one.
local current = redis.call('GET', KEYS[1])
if not current then
  redis.call('SET', KEYS[1], ARGV[1])
  return ARGV[1]
end
return current
