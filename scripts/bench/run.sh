#!/usr/bin/env bash
# The benchmark suite of issue 13, one command (see BENCHMARKS.md, "Server benchmark suite"):
#
#   scripts/bench/run.sh [--quick] [--no-write] [--skip-django] [--skip-phone] [bench.py options]
#
# Installs what it needs if absent (Debian: wrk, libphonenumber-dev; PyPI, into .venv-bench/: uvloop,
# django-phone-verify, Django, DRF, gunicorn, pinned in requirements.txt), builds the gateway and
# phone-benchmark in release mode, runs bench.py (every load to 127.0.0.1, bounded in time), prints the
# Markdown report and writes it into BENCHMARKS.md (unless --no-write). Raw output: .build/bench/<time>/.
# --quick: 3 s load runs instead of 10 s (about 3 minutes in all, against about 8 for a full run).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

write=1
args=()
for arg in "$@"; do
    case "$arg" in
        --no-write) write=0 ;;
        *) args+=("$arg") ;;
    esac
done

sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
missing=()
command -v wrk >/dev/null || missing+=(wrk)
[ -f /usr/include/phonenumbers/phonenumberutil.h ] || missing+=(libphonenumber-dev)
command -v g++ >/dev/null || missing+=(g++)
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]} (apt-get)" >&2
    if ! $sudo apt-get install -y "${missing[@]}" >/dev/null 2>&1; then
        $sudo apt-get update >/dev/null 2>&1 || true
        $sudo apt-get install -y "${missing[@]}" >/dev/null || { echo "apt-get could not install ${missing[*]}" >&2; exit 1; }
    fi
fi

venv="${BENCH_VENV:-$root/.venv-bench}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"

echo "building the gateway and phone-benchmark (release)" >&2
swift build -c release --product gateway >&2
swift build -c release --product phone-benchmark >&2

out="$root/.build/bench/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
command_line="scripts/bench/run.sh${*:+ $*}"
"$venv/bin/python" "$here/bench.py" --out "$out" "${args[@]}"
if [ "$write" = 1 ]; then
    "$venv/bin/python" "$here/report.py" "$out" --command "$command_line" --write "$root/BENCHMARKS.md"
else
    "$venv/bin/python" "$here/report.py" "$out" --command "$command_line"
fi
echo "raw results: $out" >&2
