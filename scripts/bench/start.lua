-- POST /v1/verifications through the sandbox Twilio emulator (or the provider BENCH_PROVIDER names), a different
-- valid number per request:
-- BENCH_PREFIX (a UK mobile range such as +44741), then the thread's digit and a 6-digit counter. With
-- BENCH_IDEMPOTENCY=1 each start carries an `Idempotency-Key` (its number), as a client that retries safely sends.
dofile(os.getenv("BENCH_DIR") .. "/common.lua")
local prefix = os.getenv("BENCH_PREFIX")
local headers = {
    ["Authorization"] = "Bearer " .. os.getenv("BENCH_KEY"),
    ["Content-Type"] = "application/json",
}
-- BENCH_COUNTER_START: where the counter starts, so that several runs against one gateway use new numbers.
local counter = tonumber(os.getenv("BENCH_COUNTER_START") or "0")
local idempotent = os.getenv("BENCH_IDEMPOTENCY") == "1"
local provider = os.getenv("BENCH_PROVIDER") or "twilio"

function request()
    counter = counter + 1
    local to = string.format("%s%d%06d", prefix, tid or 0, counter)
    local body = '{"to": "' .. to .. '", "channel": "sms", "provider": "' .. provider .. '"}'
    if idempotent then headers["Idempotency-Key"] = "bench-" .. to end
    return wrk.format("POST", "/v1/verifications", headers, body)
end

function response(status, headers, body) count_status(status) end
