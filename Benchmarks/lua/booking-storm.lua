-- Benchmarks/lua/booking-storm.lua: wrk script for the booking storm (see Benchmarks/run).
--
-- Every request books one spot: POST /api/rooms/<prefix><k>/bookings {"person": "P<thread>-<n>"},
-- rotating over rooms 1..STORM_ROOMS. Each thread has its own id (given in setup) and counter, so
-- no person repeats. Env: STORM_ROOMS (25), STORM_PREFIX ("storm-").
--
-- It counts 201s, 409s and anything else per thread and takes the monotonic time of the first
-- request sent and of the last 201 received; done() prints one line that Benchmarks/run reads:
--   STORM created=<201s> conflicts=<409s> other=<others> first=<s> last201=<s> end=<s>

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

local rooms = tonumber(os.getenv("STORM_ROOMS") or "25")
local prefix = os.getenv("STORM_PREFIX") or "storm-"
local headers = { ["Content-Type"] = "application/json" }

-- Main thread: hand out ids, keep the threads for done().
local threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("id", #threads)
end

-- Worker threads (globals, so done() can read them with thread:get).
counter, created, conflicts, other, first, last201, lastResponse = 0, 0, 0, 0, 0, 0, 0

function request()
  counter = counter + 1
  if first == 0 then first = now() end
  local room = (counter + id) % rooms + 1
  return wrk.format("POST", "/api/rooms/" .. prefix .. room .. "/bookings", headers,
    '{"person": "P' .. id .. "-" .. counter .. '"}')
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
  local c, x, o, f, l, e = 0, 0, 0, math.huge, 0, 0
  for _, thread in ipairs(threads) do
    c = c + thread:get("created")
    x = x + thread:get("conflicts")
    o = o + thread:get("other")
    local tf = thread:get("first")
    if tf > 0 and tf < f then f = tf end
    l = math.max(l, thread:get("last201"))
    e = math.max(e, thread:get("lastResponse"))
  end
  if f == math.huge then f = 0 end
  io.write(string.format("STORM created=%d conflicts=%d other=%d first=%.6f last201=%.6f end=%.6f\n",
    c, x, o, f, l, e))
end
