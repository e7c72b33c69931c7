-- Benchmarks/lua/follow-etag.lua: wrk script for the `conditional-follow` mode (see Benchmarks/run).
--
-- GET the URL with If-None-Match: <the newest ETag this wrk thread has received>, as a client
-- polling data that changes does. It starts from BENCH_ETAG; a 200 carries the new ETag, which
-- the thread's next requests send. So a server whose body changes (e.g. /api/schedules, whose
-- `generatedAt` gives it a new ETag each second) answers mostly 304s and a few 200s, and one whose
-- body does not (nginx's file) answers only 304s. Headers given with -H (the identity) are kept.
--
-- done() prints one line that Benchmarks/run reads:
--   FOLLOW s304=<304s> s200=<200s> other=<other statuses> changes=<ETag changes seen by threads>

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

s304, s200, other, changes = 0, 0, 0, 0
local etag, req

local function build()
  wrk.headers["If-None-Match"] = etag
  req = wrk.format("GET")
end

function init(args)
  etag = os.getenv("BENCH_ETAG") or error("BENCH_ETAG is not set")
  build()
end

function request()
  return req
end

function response(status, headers, body)
  if status == 304 then
    s304 = s304 + 1
  elseif status == 200 then
    s200 = s200 + 1
    local tag = headers["ETag"] or headers["Etag"] or headers["etag"]
    if tag and tag ~= etag then
      etag = tag
      changes = changes + 1
      build()
    end
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local a, b, o, c = 0, 0, 0, 0
  for _, thread in ipairs(threads) do
    a = a + thread:get("s304")
    b = b + thread:get("s200")
    o = o + thread:get("other")
    c = c + thread:get("changes")
  end
  io.write(string.format("FOLLOW s304=%d s200=%d other=%d changes=%d\n", a, b, o, c))
end
