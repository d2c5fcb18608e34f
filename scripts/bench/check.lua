-- POST /v1/verifications/{id}/check over verifications prepared beforehand (BENCH_PREPARED: lines of
-- id<TAB>code<TAB>to). BENCH_MODE=wrong sends a wrong code BENCH_REPEAT times to each, BENCH_MODE=right
-- the right code once to each. When the list runs out the thread stops, so no request checks a
-- verification that is already finished (those answers cost less and would flatter the figure); the few
-- requests sent while it stops go to a path that answers 404, which common.lua leaves out of the counts.
dofile(os.getenv("BENCH_DIR") .. "/common.lua")
local mode = os.getenv("BENCH_MODE")
local repeats = tonumber(os.getenv("BENCH_REPEAT") or "1")
local headers = {
    ["Authorization"] = "Bearer " .. os.getenv("BENCH_KEY"),
    ["Content-Type"] = "application/json",
}
local ids, codes = {}, {}
local nthreads = tonumber(os.getenv("BENCH_THREADS") or "1")

function init(args)
    -- Each thread takes every nthreads-th line, so no two threads check the same verification.
    local n = 0
    for line in io.lines(os.getenv("BENCH_PREPARED")) do
        local id, code = line:match("^([^\t]+)\t([^\t]+)\t")
        if id and (n % nthreads) == (tid or 0) then
            table.insert(ids, id)
            table.insert(codes, code)
        end
        n = n + 1
    end
end

local sent = 0

function request()
    local total = #ids * (mode == "wrong" and repeats or 1)
    if sent >= total then
        wrk.thread:stop()
        return wrk.format("GET", "/bench-suite-done")
    end
    local index = (sent % #ids) + 1
    sent = sent + 1
    local code = codes[index]
    if mode == "wrong" then
        -- A 6-digit code that is not the right one.
        code = (code == "000000") and "111111" or "000000"
    end
    return wrk.format("POST", "/v1/verifications/" .. ids[index] .. "/check", headers, '{"code": "' .. code .. '"}')
end

function response(status, headers, body) count_status(status) end
