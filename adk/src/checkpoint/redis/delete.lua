-- Deletes the thread: its records, its versions and its newest version; returns how many
-- records had not expired.
-- KEYS[1]: the thread's versions, KEYS[2]: its newest version; ARGV[1]: the prefix of
-- its record keys.
local deleted = 0
for _, version in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  deleted = deleted + redis.call('DEL', ARGV[1] .. version)
end
redis.call('DEL', KEYS[1], KEYS[2])
return deleted
