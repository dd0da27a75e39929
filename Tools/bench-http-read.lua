-- wrk script for Tools/bench-http --readers: clients reading while the votes arrive, as fast as answers come back.
--
--   wrk -t 1 -c C -d MAX --latency -s Tools/bench-http-read.lua URL -- PLACE TOKENS EVENTS
--
-- Each request is the next of three, in turn: the place's tally (GET /api/v1/places/PLACE/tally), an inclusion
-- proof of a random event among the first EVENTS against the current head (GET /api/v1/proofs/inclusion?index=I),
-- and a voter's status (POST /api/v1/places/PLACE/status) with a token of the file TOKENS (one a line), taken in
-- turn. Every answer's status is counted; done() prints one JSON line for the harness, with the reads' latency
-- from wrk's histogram and their rate over the run (wrk's Requests/sec divides by the whole -d, and the harness
-- stops wrk with SIGINT when the votes are done).

local ffi = require("ffi")
ffi.cdef [[
    typedef struct { long tv_sec; long tv_nsec; } bench_read_timespec;
    int clock_gettime(int clock, bench_read_timespec *now);
]]
local now_spec = ffi.new("bench_read_timespec")

local function now_us()
    ffi.C.clock_gettime(1, now_spec) -- CLOCK_MONOTONIC
    return tonumber(now_spec.tv_sec) * 1e6 + tonumber(now_spec.tv_nsec) / 1e3
end

local threads = {}

function setup(thread)
    table.insert(threads, thread)
end

local place, events, tokens, turn, next_token = nil, 1, {}, 0, 0
local json = { ["Content-Type"] = "application/json" }
first_us, last_us, statuses = 0, 0, {}

function init(args)
    place = args[1]
    for token in io.lines(args[2]) do
        tokens[#tokens + 1] = token
    end
    events = tonumber(args[3])
    math.randomseed(os.time())
end

function request()
    if first_us == 0 then
        first_us = now_us()
    end
    turn = turn % 3 + 1
    if turn == 1 then
        return wrk.format("GET", "/api/v1/places/" .. place .. "/tally")
    elseif turn == 2 then
        return wrk.format("GET", "/api/v1/proofs/inclusion?index=" .. math.random(0, events - 1))
    end
    next_token = next_token % #tokens + 1
    return wrk.format("POST", "/api/v1/places/" .. place .. "/status", json,
        '{"token": "' .. tokens[next_token] .. '"}')
end

function response(status, headers, body)
    local key = tostring(status)
    statuses[key] = (statuses[key] or 0) + 1
    last_us = now_us()
end

function done(summary, latency, _)
    local merged, first, last = {}, math.huge, 0
    for _, thread in ipairs(threads) do
        for status, n in pairs(thread:get("statuses")) do
            merged[status] = (merged[status] or 0) + n
        end
        first = math.min(first, thread:get("first_us"))
        last = math.max(last, thread:get("last_us"))
    end
    local parts = {}
    for status, n in pairs(merged) do
        parts[#parts + 1] = string.format('"%s": %d', status, n)
    end
    local errors = summary.errors
    io.write(string.format(
        'BENCH-HTTP-READ {"requests": %d, "statuses": {%s}, "seconds": %.6f, ' ..
        '"latency_us": {"p50": %d, "p99": %d, "max": %d, "mean": %.1f}, ' ..
        '"socket_errors": {"connect": %d, "read": %d, "write": %d, "timeout": %d}}\n',
        summary.requests, table.concat(parts, ", "), (last - first) / 1e6,
        latency:percentile(50), latency:percentile(99), latency.max, latency.mean,
        errors.connect, errors.read, errors.write, errors.timeout))
end
