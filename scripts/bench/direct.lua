-- POST straight to the sandbox Twilio emulator's own path (form-encoded, Basic auth): the vendor alone.
dofile(os.getenv("BENCH_DIR") .. "/common.lua")
local prefix = os.getenv("BENCH_PREFIX")
local path = "/sandbox/twilio/v2/Services/" .. os.getenv("BENCH_SERVICE_SID") .. "/Verifications"
local headers = {
    ["Authorization"] = "Basic " .. os.getenv("BENCH_BASIC"),
    ["Content-Type"] = "application/x-www-form-urlencoded",
}
local counter = 0

function request()
    counter = counter + 1
    local to = string.format("%s%d%06d", prefix, tid or 0, counter)
    return wrk.format("POST", path, headers, "To=" .. to:gsub("+", "%%2B") .. "&Channel=sms")
end

function response(status, headers, body) count_status(status) end
