#!/usr/bin/env bash
# Issue 17: schemathesis against the served OpenAPI document (Sources/gateway/openapi.yaml), every check on, a few hundred examples per
# operation, bounded in time; any violation fails the run.
#
# Usage: scripts/schemathesis_check.sh [max examples per operation, default 300]
set -euo pipefail
cd "$(dirname "$0")/.."

SCHEMATHESIS_VERSION=4.32.5
max_examples=${1:-300}
if ! .venv-ci/bin/st --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION"; then
    [ -x .venv-ci/bin/pip ] || python3 -m venv .venv-ci
    .venv-ci/bin/pip install -q "schemathesis==$SCHEMATHESIS_VERSION"
fi

swift build --product gateway
data_dir=$(mktemp -d)
port=$(python3 scripts/sandbox_gateway.py free-port)
api_key="sk_schemathesis_$(date +%s)"
GATEWAY_SANDBOX_API_KEY="$api_key" .build/debug/gateway --host 127.0.0.1 --port "$port" --data-dir "$data_dir" \
    > "$data_dir/gateway.log" 2>&1 &
gateway_pid=$!
trap 'kill "$gateway_pid" 2>/dev/null || true; wait "$gateway_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$port/healthz" > /dev/null 2>&1 && break
    sleep 0.2
done

# The served documents are the checked-in file: /openapi.yaml byte for byte, and /openapi.json its content as
# PyYAML (schemathesis's own YAML reader, independent of the server's) reads the file.
.venv-ci/bin/python - "http://127.0.0.1:$port" <<'PY'
import json, sys, urllib.request, yaml
base, file = sys.argv[1], open("Sources/gateway/openapi.yaml", "rb").read()
assert urllib.request.urlopen(base + "/openapi.yaml").read() == file, "/openapi.yaml is not Sources/gateway/openapi.yaml"
assert json.load(urllib.request.urlopen(base + "/openapi.json")) == yaml.safe_load(file), "/openapi.json is not openapi.yaml"
print("schemathesis: /openapi.yaml and /openapi.json serve Sources/gateway/openapi.yaml")
PY

# Positive data that the document cannot describe exactly is refused by rules the schema cannot
# express: a phone number's validity under its numbering plan (libphonenumber), a destination that
# must suit the channel, a channel no configured provider serves, a code that is wrong, a verification
# that expired. Those operations may answer 400/410/422 to schema-valid data; every other operation
# must accept what its schema allows (the defaults: 2xx, 401, 403, 404, 409, 429).
config="$data_dir/schemathesis.toml"
cat > "$config" <<TOML
[checks.positive_data_acceptance]
expected-statuses = ["2xx", "401", "403", "404", "409", "429"]

# Invalid data must be refused; 413 is a refusal too (bodies over 64 KiB are refused before they are read,
# which is how a generated multi-kilobyte token in a schema-violating body was answered).
[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"]

[[operations]]
include-operation-id = ["startVerification", "routingDryRun", "lookupPhoneNumber", "checkVerification",
    "resendVerification", "cancelVerification", "answerChallenge", "providerAction", "getVerification",
    "verificationsByNumber"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "409", "410", "422", "429"]
TOML

# Excluded, and why:
# - PUT /sandbox/faults/{plugin} makes the emulators fail (5xx, resets, latency) on purpose, which
#   turns every later vendor call into a 502/504 that is the fault working, not a bug; its input
#   checks are covered by the Swift tests.
# - DELETE /sandbox/outbox only empties the sandbox's message list; harmless, but it races the
#   GET it is tested beside, so it is left out to keep runs reproducible.
# - The vendor callbacks take vendor-signed bodies: random bodies only ever get 401 (tested in Swift).
start=$(date +%s)
status=0
timeout 1500 .venv-ci/bin/st --config-file "$config" run "http://127.0.0.1:$port/openapi.json" \
    --url "http://127.0.0.1:$port" \
    --checks all \
    --header "Authorization: Bearer $api_key" \
    --max-examples "$max_examples" \
    --exclude-operation-id sandboxSetFaults \
    --exclude-operation-id sandboxOutboxClear \
    --exclude-operation-id vendorCallback \
    --exclude-operation-id vendorCallbackPath \
    --request-timeout 15 \
    --workers 1 \
    --seed 17 \
    || status=$?
echo "schemathesis: exit $status after $(( $(date +%s) - start )) s, $max_examples examples per operation"
if grep -q '"level":"error"\|error gateway' "$data_dir/gateway.log"; then
    echo "the gateway logged errors:"; grep 'error' "$data_dir/gateway.log" | head -20
fi
exit "$status"
