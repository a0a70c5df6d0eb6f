-- The thread's newest record that has not expired, as {version, bytes}, or nil.
-- KEYS[1]: the thread's versions (sorted set); ARGV[1]: the prefix of its record keys.
local i = 0
while true do
  local newest = redis.call('ZREVRANGE', KEYS[1], i, i)
  if #newest == 0 then return false end
  local bytes = redis.call('GET', ARGV[1] .. newest[1])
  if bytes then return {tonumber(newest[1]), bytes} end
  i = i + 1
end
