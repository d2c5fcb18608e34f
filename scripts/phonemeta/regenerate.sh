#!/usr/bin/env bash
# Regenerates the gateway's phone metadata (and the test fixtures that hold libphonenumber's answers)
# from the pinned libphonenumber data, in one command: scripts/phonemeta/regenerate.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${PHONEMETA_VENV:-$root/.venv-phone}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet -r "$here/requirements.txt"
"$venv/bin/python" "$here/generate.py"
"$venv/bin/python" "$here/fixtures.py"
