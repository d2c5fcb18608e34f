-- Shared by the suite's wrk scripts (scripts/bench/run.sh): every thread counts the statuses it saw, and
-- done() prints one `RESULT {json}` line with wrk's totals, the latency percentiles and those counts.
local ffi = require("ffi")
ffi.cdef [[
    typedef struct { long tv_sec; long tv_usec; } bench_timeval;
    int gettimeofday(bench_timeval *tv, void *tz);
]]

function now_us()
    local tv = ffi.new("bench_timeval")
    ffi.C.gettimeofday(tv, nil)
    return tonumber(tv.tv_sec) * 1e6 + tonumber(tv.tv_usec)
end

threads = {}
statuses = {}
-- When the thread began and when its last counted response came: a script that runs out of work stops
-- its thread early, and wrk's own duration still covers the whole -d.
began_us = now_us()
last_us = began_us

function setup(thread)
    thread:set("tid", #threads)
    table.insert(threads, thread)
end

function count_status(status)
    statuses[status] = (statuses[status] or 0) + 1
    last_us = now_us()
end

function done(summary, latency, requests)
    local seen = {}
    local first, last = nil, nil
    for _, thread in ipairs(threads) do
        local b, l = thread:get("began_us"), thread:get("last_us")
        if b and (not first or b < first) then first = b end
        if l and (not last or l > last) then last = l end
        local counts = thread:get("statuses") or {}
        for status, n in pairs(counts) do
            seen[tostring(status)] = (seen[tostring(status)] or 0) + n
        end
    end
    local parts = {}
    for status, n in pairs(seen) do
        table.insert(parts, string.format('"%s": %d', status, n))
    end
    local seconds = summary.duration / 1e6
    local active = (first and last and last > first) and (last - first) / 1e6 or seconds
    if active > seconds then active = seconds end
    local counted = 0
    for status, n in pairs(seen) do
        if status ~= "404" then counted = counted + n end
    end
    local errors = summary.errors
    io.write(string.format(
        'RESULT {"requests": %d, "seconds": %.3f, "rps": %.1f, "counted": %d, "active_seconds": %.3f, "active_rps": %.1f, "p50_ms": %.3f, "p90_ms": %.3f, "p99_ms": %.3f, '
            .. '"max_ms": %.3f, "mean_ms": %.3f, "socket_errors": %d, "non_2xx_3xx": %d, "statuses": {%s}}\n',
        summary.requests, seconds, summary.requests / seconds, counted, active, counted / active,
        latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
        latency.max / 1000, latency.mean / 1000,
        errors.connect + errors.read + errors.write + errors.timeout, errors.status,
        table.concat(parts, ", ")))
end
