-- POST to the gateway's Twilio-compatible front door (form-encoded, HTTP Basic: the facade's account SID and
-- a gateway key's secret), a different valid number per request: the facade's start, which the service
-- routes to the sandbox Twilio emulator as start.lua's `"provider": "twilio"` does.
dofile(os.getenv("BENCH_DIR") .. "/common.lua")
local prefix = os.getenv("BENCH_PREFIX")
local path = "/twilio/v2/Services/" .. os.getenv("BENCH_SERVICE_SID") .. "/Verifications"
local headers = {
    ["Authorization"] = "Basic " .. os.getenv("BENCH_BASIC"),
    ["Content-Type"] = "application/x-www-form-urlencoded",
}
local counter = tonumber(os.getenv("BENCH_COUNTER_START") or "0")

function request()
    counter = counter + 1
    local to = string.format("%s%d%06d", prefix, tid or 0, counter)
    return wrk.format("POST", path, headers, "To=" .. to:gsub("+", "%%2B") .. "&Channel=sms")
end

function response(status, headers, body) count_status(status) end
