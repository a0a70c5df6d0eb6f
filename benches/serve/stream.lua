-- wrk script for benches/serve.rs and benches/peers/langgraph-serve: every request POSTs
-- one run and asks for its events as SSE; a 2xx response whose body does not hold the
-- marker of a finished run counts as `incomplete`. At the end it prints one JSON line with
-- the counts and the latency percentiles (microseconds, each from request sent to the
-- last byte of the streamed body).
--
-- Environment: SERVE_BODY (the JSON body of a run), SERVE_DONE (text that only the body of
-- a run that finished holds, e.g. "event: completed"), and optionally SERVE_HEADER, one
-- more request header as `Name: value` (A2A's `A2A-Version: 1.0`).
local body = os.getenv("SERVE_BODY") or error("SERVE_BODY is not set")
local done_marker = os.getenv("SERVE_DONE") or error("SERVE_DONE is not set")

wrk.method = "POST"
wrk.body = body
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "text/event-stream"
local extra = os.getenv("SERVE_HEADER")
if extra then
    local name, value = string.match(extra, "^([^:]+):%s*(.*)$")
    if not name then error("SERVE_HEADER is not `Name: value`: " .. extra) end
    wrk.headers[name] = value
end

-- Each wrk thread has a Lua state of its own: `setup` keeps them, `done` adds them up.
local threads = {}
function setup(thread)
    table.insert(threads, thread)
end

incomplete = 0
function response(status, headers, body)
    if status >= 200 and status < 300 and not string.find(body, done_marker, 1, true) then
        incomplete = incomplete + 1
    end
end

function done(summary, latency, requests)
    local bad = 0
    for _, thread in ipairs(threads) do
        bad = bad + thread:get("incomplete")
    end
    local e = summary.errors
    io.write(string.format(
        '{"requests": %d, "duration_us": %d, "bytes": %d, "connect": %d, "read": %d, ' ..
        '"write": %d, "status": %d, "timeout": %d, "incomplete": %d, "p50_us": %d, ' ..
        '"p90_us": %d, "p99_us": %d, "max_us": %d, "mean_us": %.1f}\n',
        summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write,
        e.status, e.timeout, bad, latency:percentile(50), latency:percentile(90),
        latency:percentile(99), latency.max, latency.mean))
end
