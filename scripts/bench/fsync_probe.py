#!/usr/bin/env python3
"""How long this machine's disk takes to sync a small write: the floor under every answered start or check,
which the store syncs before answering (synchronous=FULL).

    python3 scripts/bench/fsync_probe.py [--count 1000] [--dir .build]

Writes 4 KiB at one of 16 offsets of a scratch file in --dir (the same file system as the data directory),
then times os.fdatasync, --count times; prints p50, p90, p99 and the largest, in microseconds.
"""
import argparse, os, tempfile, time


def fdatasync_times(directory, count=1000, size=4096, offsets=16):
    """Seconds each of `count` fdatasyncs took, sorted, after writing `size` bytes at one of `offsets` places of a
    scratch file in `directory` (overwrites, as a WAL that has started over is written)."""
    os.makedirs(directory, exist_ok=True)
    handle, path = tempfile.mkstemp(prefix="fsync-probe-", dir=directory)
    times = []
    try:
        for index in range(count):
            os.pwrite(handle, b"x" * size, (index % offsets) * size)
            began = time.perf_counter()
            os.fdatasync(handle)
            times.append(time.perf_counter() - began)
    finally:
        os.close(handle)
        os.unlink(path)
    return sorted(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--dir", default=".build")
    args = parser.parse_args()
    times = fdatasync_times(args.dir, args.count)
    at = lambda q: times[min(len(times) - 1, int(q * len(times)))] * 1e6
    print("fdatasync of 4 KiB, %d times: p50 %.0f µs, p90 %.0f µs, p99 %.0f µs, max %.0f µs"
          % (len(times), at(0.5), at(0.9), at(0.99), times[-1] * 1e6))


if __name__ == "__main__":
    main()
