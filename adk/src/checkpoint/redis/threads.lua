-- An owner's threads whose head has not expired, the newest first, then by name (byte by
-- byte): up to a limit, those after an entry when one is given. Forgets those whose head
-- expired.
-- KEYS[1]: the owner's threads (sorted set, scored by minus the time of their head).
-- ARGV[1]: the prefix of thread keys, ARGV[2]: the time of the entry to list after (""
-- for none), ARGV[3]: its thread, ARGV[4]: the limit, ARGV[5]: the expiry in ms ("0"
-- for none).
-- Returns {thread, version of its head, time of its head} for each.
local threads, prefix, after, limit = KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[4])
local ttl = tonumber(ARGV[5])

if ttl > 0 then
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  redis.call('ZREMRANGEBYSCORE', threads, string.format('%.0f', ttl - now), '+inf')
end

-- Whether the name `a` comes after `b`, byte by byte (Lua's `>` follows the locale).
local function later(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = a:byte(i), b:byte(i)
    if x ~= y then return x > y end
  end
  return #a > #b
end

local min = '-inf'
if after ~= '' then min = string.format('%.0f', -tonumber(after)) end
local listed, stale, offset = {}, {}, 0
while #listed < limit do
  local count = math.min(limit - #listed, 1000)
  local page = redis.call('ZRANGEBYSCORE', threads, min, '+inf', 'WITHSCORES', 'LIMIT', offset, count)
  if #page == 0 then break end
  for i = 1, #page, 2 do
    local thread, written = page[i], -tonumber(page[i + 1])
    if after == '' or written < tonumber(after) or later(thread, ARGV[3]) then
      local base = prefix .. '{' .. thread .. '}'
      local last = redis.call('GET', base .. ':last')
      if last and redis.call('EXISTS', base .. ':v:' .. last) == 1 then
        table.insert(listed, {thread, tonumber(last), written})
        if #listed == limit then break end
      else
        table.insert(stale, thread)
      end
    end
  end
  offset = offset + #page / 2
end
for _, thread in ipairs(stale) do redis.call('ZREM', threads, thread) end
return listed
