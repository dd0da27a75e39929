-- wrk script for Tools/bench-http: every request casts one vote with a token no other request uses.
--
--   [BENCH_HTTP_PORTS=PORT,…] wrk -t T -c C -d MAX --latency -s Tools/bench-http.lua URL -- PREFIX [RATE T]
--
-- Thread i reads PREFIX.i: one JSON body per line, made by Tools/bench-http from the tokens file, the
-- lines of all threads together holding every token once. wrk gives each thread one Lua state shared
-- by its connections, so a per-thread list is enough: each request() takes the next line.
--
-- Two things in wrk 4.1 would break "each token once", and are handled here:
-- - wrk calls request() once in thread 0 before the run to check that the request parses, and never
--   sends that one. delay() runs before every request() wrk sends, so it takes the line (a reservation)
--   and request() hands out only reserved lines; the check call finds none reserved and gets the first
--   line without using it up.
-- - request() cannot decline to send. When a thread's lines are all reserved, delay() holds the
--   connection for an hour instead, so nothing but votes is sent or timed.
-- A thread stops itself once every one of its lines has an answer, and says so on stderr; it keeps the
-- monotonic times of its first request and last answer, so the rate is counted over the votes alone
-- (wrk's own Requests/sec divides by the whole -d). done() prints one JSON line for the harness.
--
-- With RATE (votes a second over all T threads), the votes arrive on a fixed schedule instead of as fast
-- as answers come back: thread i's n-th vote is due at its start + (n + i / T) * T / RATE, and delay()
-- gives each free connection the next due vote and waits until it is due. A vote no connection is free
-- to send on time goes late; the harness reports how many went more than 5 ms late (C must exceed RATE
-- times the latency for the schedule to hold).

local ffi = require("ffi")
ffi.cdef [[
    typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
    int clock_gettime(int clock, bench_timespec *now);
]]
local now_spec = ffi.new("bench_timespec")

local function now_us()
    ffi.C.clock_gettime(1, now_spec) -- CLOCK_MONOTONIC: the same clock in every thread
    return tonumber(now_spec.tv_sec) * 1e6 + tonumber(now_spec.tv_nsec) / 1e3
end

-- Setup and done run in wrk's main Lua state.
local threads = {}

-- Several servers: $BENCH_HTTP_PORTS lists their loopback ports (PORT,PORT,…), and thread i sends all its
-- requests to the (i mod count)-th: with T a multiple of the count, each server gets C / count connections.
local ports = {}
for port in string.gmatch(os.getenv("BENCH_HTTP_PORTS") or "", "%d+") do
    ports[#ports + 1] = port
end

function setup(thread)
    if #ports > 0 then
        thread.addr = wrk.lookup("127.0.0.1", ports[#threads % #ports + 1])[1]
    end
    thread:set("id", #threads)
    table.insert(threads, thread)
end

-- The rest runs in each thread's own state.
local requests, reserved, sent, answered = {}, 0, 0, 0
first_us, last_us, statuses = 0, 0, {}
-- The trickle schedule: µs between this thread's votes, and when the next one is due.
local interval_us, next_due_us, threads_count = nil, nil, 1
late = 0

function init(args)
    local path = args[1] .. "." .. id
    local file = assert(io.open(path, "r"))
    local headers = { ["Content-Type"] = "application/json" }
    for body in file:lines() do
        requests[#requests + 1] = wrk.format("POST", nil, headers, body)
    end
    file:close()
    count = #requests
    if args[2] then
        threads_count = tonumber(args[3])
        interval_us = 1e6 * threads_count / tonumber(args[2])
    end
end

function delay()
    if reserved < #requests then
        reserved = reserved + 1
        if interval_us == nil then
            return 0
        end
        local now = now_us()
        if next_due_us == nil then
            next_due_us = now + interval_us * id / threads_count
        end
        local due = next_due_us
        next_due_us = next_due_us + interval_us
        if due > now then
            return math.floor((due - now) / 1000)
        end
        if now - due > 5000 then
            late = late + 1
        end
        return 0
    end
    return 3600 * 1000
end

function request()
    if sent == reserved then
        return requests[1] -- wrk's parse check before the run: not sent
    end
    sent = sent + 1
    if sent == 1 then
        first_us = now_us()
    end
    return requests[sent]
end

function response(status, headers, body)
    local key = tostring(status)
    statuses[key] = (statuses[key] or 0) + 1
    answered = answered + 1
    if answered == #requests then
        last_us = now_us()
        io.stderr:write("bench-http: thread " .. id .. " done\n")
        wrk.thread:stop()
    end
end

function done(summary, latency, _)
    local merged, first, last, lines, late_total = {}, math.huge, 0, 0, 0
    for _, thread in ipairs(threads) do
        late_total = late_total + thread:get("late")
        for status, n in pairs(thread:get("statuses")) do
            merged[status] = (merged[status] or 0) + n
        end
        first = math.min(first, thread:get("first_us"))
        last = math.max(last, thread:get("last_us"))
        lines = lines + thread:get("count")
    end
    local parts = {}
    for status, n in pairs(merged) do
        parts[#parts + 1] = string.format('"%s": %d', status, n)
    end
    local errors = summary.errors
    io.write(string.format(
        'BENCH-HTTP-RESULT {"requests": %d, "lines": %d, "statuses": {%s}, "seconds": %.6f, ' ..
        '"latency_us": {"p50": %d, "p90": %d, "p99": %d, "p999": %d, "max": %d, "mean": %.1f}, ' ..
        '"socket_errors": {"connect": %d, "read": %d, "write": %d, "timeout": %d}, "late": %d}\n',
        summary.requests, lines, table.concat(parts, ", "), (last - first) / 1e6,
        latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9),
        latency.max, latency.mean, errors.connect, errors.read, errors.write, errors.timeout, late_total))
end
