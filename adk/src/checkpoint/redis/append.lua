-- Appends a record if the thread's head is at the expected version, atomically.
-- KEYS[1]: the thread's versions (sorted set), KEYS[2]: the newest version it ever had.
-- ARGV[1]: the prefix of its record keys, ARGV[2]: the expected version ("" for none),
-- ARGV[3]: the record, ARGV[4]: the expiry in ms ("0" for none).
-- Returns {1, version} when written, {0, head} or {0} (no head) on a conflict.
local versions, last, records = KEYS[1], KEYS[2], ARGV[1]

-- Forget versions whose record expired, oldest first.
while true do
  local oldest = redis.call('ZRANGE', versions, 0, 0)
  if #oldest == 0 or redis.call('EXISTS', records .. oldest[1]) == 1 then break end
  redis.call('ZREM', versions, oldest[1])
end

-- The head: the newest version whose record is still there.
local head = nil
local i = 0
while true do
  local newest = redis.call('ZREVRANGE', versions, i, i)
  if #newest == 0 then break end
  if redis.call('EXISTS', records .. newest[1]) == 1 then
    head = tonumber(newest[1])
    break
  end
  i = i + 1
end

if head ~= tonumber(ARGV[2]) then
  return {0, head}
end

local version = redis.call('INCR', last)
local ttl = tonumber(ARGV[4])
if ttl > 0 then
  redis.call('SET', records .. version, ARGV[3], 'PX', ttl)
  redis.call('ZADD', versions, version, version)
  redis.call('PEXPIRE', versions, ttl)
else
  redis.call('SET', records .. version, ARGV[3])
  redis.call('ZADD', versions, version, version)
  redis.call('PERSIST', versions)
end
return {1, version}
