#!/usr/bin/env bash
# Agreement check and benchmark against libphonenumber's Python port (see BENCHMARKS.md).
# Usage: scripts/phonemeta/run.sh [agree|bench|fuzz|all] [phonecheck.py options, e.g. --size 100000 --seconds 10]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${PHONEMETA_VENV:-$root/.venv-phone}"
what="${1:-all}"
shift || true
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet -r "$here/requirements.txt"
(cd "$root" && swift build -c release --product phone-benchmark)
binary="$root/.build/release/phone-benchmark"
if [ "$what" = agree ] || [ "$what" = all ]; then
    "$venv/bin/python" "$here/phonecheck.py" agree --binary "$binary" "$@"
fi
if [ "$what" = fuzz ]; then
    "$venv/bin/python" "$here/phonecheck.py" fuzz --binary "$binary" "$@"
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
    "$venv/bin/python" "$here/phonecheck.py" bench --binary "$binary" "$@"
fi
