-- Appends a record if the thread's head is at the expected version, atomically, and
-- files the thread under its owner, newest first.
-- KEYS[1]: the thread's versions (sorted set), KEYS[2]: the newest version it ever had,
-- KEYS[3]: its owner.
-- ARGV[1]: the prefix of its record keys, ARGV[2]: the expected version ("" for none),
-- ARGV[3]: the record, ARGV[4]: the expiry in ms ("0" for none), ARGV[5]: the owner (""
-- for none: the thread keeps the one it has), ARGV[6]: the prefix of the owners' sets of
-- threads, ARGV[7]: the thread.
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

-- The owner's threads: scored by minus the time of their head (ms, the server's clock),
-- so that the newest come first and those written at once by name, byte by byte.
local owner, before = ARGV[5], redis.call('GET', KEYS[3])
if owner == '' then
  owner = before
elseif owner ~= before then
  if before then redis.call('ZREM', ARGV[6] .. before, ARGV[7]) end
  redis.call('SET', KEYS[3], owner)
end
if owner then
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  local threads = ARGV[6] .. owner
  redis.call('ZADD', threads, string.format('%.0f', -now), ARGV[7])
  if ttl > 0 then
    -- Those whose head expired: written at least ttl ago.
    redis.call('ZREMRANGEBYSCORE', threads, string.format('%.0f', ttl - now), '+inf')
    redis.call('PEXPIRE', threads, ttl)
  else
    redis.call('PERSIST', threads)
  end
end
return {1, version}
