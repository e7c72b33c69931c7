-- Benchmarks/lua/booking-storm.lua: wrk script for the booking storm (see Benchmarks/run).
--
-- Every request books one seat for an hour: POST /api/rooms/<prefix><k>/bookings as one signed-in
-- person (Authorization: Bearer <their session token>), body {"person": "<username>", "start": ...,
-- "minutes": 60} (Quad ignores "person": a booking belongs to the signed-in person); the start is one
-- of four quarter hours from tomorrow 10:00 UTC, all four overlapping at 10:45. A person holds at most one spot per room, so no
-- (person, room) pair may repeat: each thread takes its own share of the people (thread ids come
-- from setup()), and thread t's n-th request goes to room (n + offset_t) mod ROOMS with person
-- mine[n div ROOMS]: one person sweeps every room, then the next. Only once a thread has used
-- all its pairs (after every room is full, given enough people) do pairs repeat.
--
-- Env: STORM_TOKENS (file of "username token" lines, from booking_storm_setup.py),
--      STORM_ROOMS (250), STORM_PREFIX ("storm-"), STORM_THREADS (wrk -t).
--
-- It counts 201s, 409s and anything else per thread and takes the monotonic time of the first
-- request sent and of the last 201 received; done() prints one line that Benchmarks/run reads:
--   STORM created=<201s> conflicts=<409s> other=<others> first=<s> last201=<s> end=<s> wrapped=<s>
-- (wrapped: when a thread first reused a pair, 0 if never)

local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } quad_bench_timespec;
int clock_gettime(int clk_id, quad_bench_timespec *tp);
]]
local ts = ffi.new("quad_bench_timespec")
local function now()
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC: the same clock in every thread
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) / 1e9
end

local rooms = tonumber(os.getenv("STORM_ROOMS") or "250")
-- Tomorrow 10:00 UTC: every booking's range starts from there (see request()).
local base = (math.floor(os.time() / 86400) + 1) * 86400 + 10 * 3600
local prefix = os.getenv("STORM_PREFIX") or "storm-"
local nthreads = tonumber(os.getenv("STORM_THREADS") or "1")

-- Main thread: hand out ids, keep the threads for done().
local threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("id", #threads)
end

-- Worker threads (globals, so done() can read them with thread:get).
counter, created, conflicts, other, first, last201, lastResponse, wrapped = 0, 0, 0, 0, 0, 0, 0, 0
local mine, offset = {}, 0

function init(args)
  local path = os.getenv("STORM_TOKENS") or error("STORM_TOKENS is not set")
  local n = 0
  for line in io.lines(path) do
    local username, token = line:match("^(%S+)%s+(%S+)$")
    if username then
      n = n + 1
      if (n - 1) % nthreads == id - 1 then
        table.insert(mine, { username = username, auth = "Bearer " .. token })
      end
    end
  end
  if #mine == 0 then error("thread " .. id .. " got no people from " .. path) end
  offset = math.floor(rooms / nthreads) * (id - 1)
end

function request()
  local n = counter
  counter = counter + 1
  if first == 0 then first = now() end
  local pass = math.floor(n / rooms)
  if pass >= #mine and wrapped == 0 then wrapped = now() end
  local person = mine[pass % #mine + 1]
  local room = (n + offset) % rooms + 1
  -- A time range: tomorrow from 10:00 UTC plus (pass mod 4) quarter hours, for an hour. The four ranges
  -- overlap at 10:45, so a room takes exactly its spots in bookings, as before rooms had time.
  local start = os.date("!%Y-%m-%dT%H:%M:%SZ", base + (pass % 4) * 900)
  return wrk.format("POST", "/api/rooms/" .. prefix .. room .. "/bookings",
    { ["Content-Type"] = "application/json", ["Authorization"] = person.auth },
    '{"person": "' .. person.username .. '", "start": "' .. start .. '", "minutes": 60}')
end

function response(status, headers, body)
  local t = now()
  lastResponse = t
  if status == 201 then
    created = created + 1
    last201 = t
  elseif status == 409 then
    conflicts = conflicts + 1
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local c, x, o, f, l, e, w = 0, 0, 0, math.huge, 0, 0, math.huge
  for _, thread in ipairs(threads) do
    c = c + thread:get("created")
    x = x + thread:get("conflicts")
    o = o + thread:get("other")
    local tf = thread:get("first")
    if tf > 0 and tf < f then f = tf end
    l = math.max(l, thread:get("last201"))
    e = math.max(e, thread:get("lastResponse"))
    local tw = thread:get("wrapped")
    if tw > 0 and tw < w then w = tw end
  end
  if f == math.huge then f = 0 end
  if w == math.huge then w = 0 end
  io.write(string.format("STORM created=%d conflicts=%d other=%d first=%.6f last201=%.6f end=%.6f wrapped=%.6f\n",
    c, x, o, f, l, e, w))
end
