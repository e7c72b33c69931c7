-- Benchmarks/lua/mixed-people.lua: wrk script for mixed-200-people (see Benchmarks/run).
--
-- Many signed-in people (Authorization: Bearer <their session token>) doing what the apps do, in
-- a fixed cycle of 20 requests per thread, each request as the next person:
--   16 of 20 (80 %)  GET /api/rooms with If-None-Match: <the newest /api/rooms ETag the thread got>
--                    (304 until a booking changes the rooms; the 200 then carries the new ETag)
--    3 of 20 (15 %)  GET /api/rooms, GET /api/books, GET /api/specials, without If-None-Match
--    1 of 20  (5 %)  POST /api/rooms/<prefix><k>/bookings, body {}, Idempotency-Key unique per
--                    request (201, or 409 when the room is full or the person holds a spot there);
--                    the rooms in turn, a new person after each round of rooms
--
-- Env: MIXED_TOKENS (file of "username token" lines, from booking_storm_setup.py), MIXED_ETAG
--      (/api/rooms' ETag at the start), MIXED_ROOMS (count), MIXED_PREFIX ("mixed-").
--
-- done() prints one line that Benchmarks/run reads:
--   MIXED people=<n> s200=<> s201=<> s304=<> s409=<> other=<> (other: any other status, an error)

local threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("id", #threads)
end

counter, s200, s201, s304, s409, other, people = 0, 0, 0, 0, 0, 0, 0
local auths, etag, rooms, prefix, nonce = {}, nil, 1, "mixed-", ""
local reads = { "/api/rooms", "/api/books", "/api/specials" }

function init(args)
  local path = os.getenv("MIXED_TOKENS") or error("MIXED_TOKENS is not set")
  for line in io.lines(path) do
    local token = line:match("^%S+%s+(%S+)$")
    if token then table.insert(auths, "Bearer " .. token) end
  end
  if #auths == 0 then error("no people in " .. path) end
  people = #auths
  etag = os.getenv("MIXED_ETAG") or error("MIXED_ETAG is not set")
  rooms = tonumber(os.getenv("MIXED_ROOMS") or "1")
  prefix = os.getenv("MIXED_PREFIX") or "mixed-"
  -- Idempotency keys must differ between wrk runs too (warm-up, measured run): a random prefix.
  local f = assert(io.open("/dev/urandom", "rb"))
  nonce = f:read(8):gsub(".", function(c) return string.format("%02x", c:byte()) end)
  f:close()
end

function request()
  local n = counter
  counter = counter + 1
  -- The threads start at different people, and each request goes to the next one.
  local auth = auths[(n + (id - 1) * 97) % #auths + 1]
  local slot = n % 20
  if slot < 16 then
    return wrk.format("GET", "/api/rooms", { ["Authorization"] = auth, ["If-None-Match"] = etag })
  elseif slot < 19 then
    return wrk.format("GET", reads[slot - 15], { ["Authorization"] = auth })
  end
  -- The k-th booking: room k mod ROOMS, person k div ROOMS: no (person, room) pair repeats
  -- within a thread until every person has tried every room.
  local k = math.floor(n / 20)
  local room = k % rooms + 1
  return wrk.format("POST", "/api/rooms/" .. prefix .. room .. "/bookings", {
    ["Authorization"] = auths[(math.floor(k / rooms) + (id - 1) * 97) % #auths + 1],
    ["Content-Type"] = "application/json",
    ["Idempotency-Key"] = string.format("bench-%s-%d-%d", nonce, id, n),
  }, "{}")
end

function response(status, headers, body)
  if status == 304 then
    s304 = s304 + 1
  elseif status == 200 then
    s200 = s200 + 1
    -- Only /api/rooms' answer is an object with "rooms" first; /api/books is an array and
    -- /api/specials starts with another key.
    if body and body:sub(1, 9) == '{"rooms":' then
      local tag = headers["ETag"] or headers["Etag"] or headers["etag"]
      if tag then etag = tag end
    end
  elseif status == 201 then
    s201 = s201 + 1
  elseif status == 409 then
    s409 = s409 + 1
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local t = { s200 = 0, s201 = 0, s304 = 0, s409 = 0, other = 0 }
  local n = 0
  for _, thread in ipairs(threads) do
    for k in pairs(t) do t[k] = t[k] + thread:get(k) end
    n = math.max(n, thread:get("people"))
  end
  io.write(string.format("MIXED people=%d s200=%d s201=%d s304=%d s409=%d other=%d\n",
    n, t.s200, t.s201, t.s304, t.s409, t.other))
end
