#!/usr/bin/env bash
# Agreement check and benchmark against libphonenumber's Python port (see BENCHMARKS.md).
# Usage: scripts/phonemeta/run.sh [agree|bench|fuzz|cpp|all] [phonecheck.py options, e.g. --size 100000 --seconds 10]
# `cpp` installs Debian's libphonenumber-dev if absent, builds cpp_phonebench.cc against it and reports its
# throughput beside the gateway's on the same corpus, then the agreement between the two.
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
if [ "$what" = cpp ]; then
    if [ ! -f /usr/include/phonenumbers/phonenumberutil.h ]; then
        sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
        $sudo apt-get install -y libphonenumber-dev >/dev/null || { echo "apt-get could not install libphonenumber-dev" >&2; exit 1; }
    fi
    cpp_binary="$root/.build/phonebench-cpp"
    if [ ! -x "$cpp_binary" ] || [ "$here/cpp_phonebench.cc" -nt "$cpp_binary" ]; then
        # libphonenumber's shared library brings protobuf, ICU and abseil along; -O2 like Debian's own build.
        g++ -O2 -std=c++17 -o "$cpp_binary" "$here/cpp_phonebench.cc" -lphonenumber -lprotobuf
    fi
    echo "C++ libphonenumber $(dpkg-query -W -f='${Version}' libphonenumber-dev 2>/dev/null || echo '?')"
    "$venv/bin/python" "$here/phonecheck.py" cpp --binary "$binary" --cpp-binary "$cpp_binary" "$@"
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
    "$venv/bin/python" "$here/phonecheck.py" bench --binary "$binary" "$@"
fi
