-- GET /healthz, counting statuses.
dofile(os.getenv("BENCH_DIR") .. "/common.lua")
wrk.method = "GET"
wrk.path = "/healthz"
function response(status, headers, body) count_status(status) end
