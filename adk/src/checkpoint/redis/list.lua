-- The versions of the thread's records that have not expired, oldest first.
-- KEYS[1]: the thread's versions (sorted set); ARGV[1]: the prefix of its record keys.
local live = {}
for _, version in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if redis.call('EXISTS', ARGV[1] .. version) == 1 then
    table.insert(live, tonumber(version))
  end
end
return live
