-- Deletes the thread: its records, its versions, its newest version and its owner, and
-- takes it out of its owner's threads; returns how many records had not expired.
-- KEYS[1]: the thread's versions, KEYS[2]: its newest version, KEYS[3]: its owner;
-- ARGV[1]: the prefix of its record keys, ARGV[2]: the prefix of the owners' sets of
-- threads, ARGV[3]: the thread.
local deleted = 0
for _, version in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  deleted = deleted + redis.call('DEL', ARGV[1] .. version)
end
local owner = redis.call('GET', KEYS[3])
if owner then redis.call('ZREM', ARGV[2] .. owner, ARGV[3]) end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return deleted
