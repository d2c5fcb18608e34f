#!/usr/bin/env python3
"""Splits a `perf record -g` profile of the gateway into the parts of a request's path.

    python3 scripts/bench/profile_parts.py .build/bench/<time>/perf-flow.data

Every sample is given to one part, so the shares add up to 100%:
- a sample in user space goes to the first frame, from the leaf up, that belongs to a known part (so a
  `swift_retain` called by the JSON writer counts as JSON, and the JSON writer called by the emulator counts
  as JSON too: the table says what kind of work the CPU did, not on whose behalf); NIO and the concurrency
  runtime, through which every stack runs, get only the samples that no other part claims;
- a sample in the kernel goes to `fdatasync` when any frame of its stack syncs a file, else to the first
  kernel frame, from the leaf up, that names thread wake-ups, file writes, loopback TCP or epoll.

What no frame names (allocator or reference counting reached through a frame without a frame pointer, for
example) is counted as "unattributed". bench.py records these shares for the start and flow profiles and
report.py prints them in BENCHMARKS.md, multiplied by the CPU that a start or a flow costs.
"""
import re
import subprocess
import sys

# The order matters: the first part a frame matches wins. The generic parts (NIO, the concurrency runtime)
# are looked for only when no frame of the stack belongs to a specific one, since every request's stack
# runs through them.
USER_PARTS = [
    ("SQLite (the library)", None, re.compile(r"libsqlite3")),
    ("JSON reading and writing",
     re.compile(r"JSONTextWriter|FastJSONParser|JSONValue|JSONResponse|JSONEncoder|JSONDecoder|JSONSerialization"), None),
    ("crypto (ES256 tokens, key hashes)",
     re.compile(r"TokenSigner|P256|SHA256|HMAC|BoringSSL|ecp_nistz|sha256_block"), re.compile(r"Crypto")),
    ("phone numbers", re.compile(r"PhoneNumber|PhonePattern|PhoneMetadata"), None),
    ("sandbox emulator and outbox", re.compile(r"Emulator|SandboxOutbox|OutboxJournal|Sandbox"), None),
    ("outbound HTTP client (AsyncHTTPClient)", re.compile(r"AsyncHTTPClient"), None),
    ("store, Swift side", re.compile(r"VerificationStore|SQLiteDatabase|SQLiteConnection|SQLiteCheckpointer"), None),
    ("gateway: middleware, API, engine, plugin", re.compile(r"11GatewayCore|7gateway|Twilio|Gateway"), None),
    ("inbound HTTP server (Hummingbird)", re.compile(r"11Hummingbird|15HummingbirdCore|9HTTPTypes"), None),
    ("HTTP/1 parsing and framing, both directions (NIOHTTP1)", re.compile(r"8NIOHTTP1"), None),
]
GENERIC_PARTS = [
    ("NIO (channels, sockets, event loops)", re.compile(r"8NIOPosix|7NIOCore|NIOAsync|NIOConcurrencyHelpers"), None),
    ("Swift concurrency and Dispatch",
     re.compile(r"swift_task|swift_job|swift::runJob|swift::AsyncTask|swift::Job|TaskAllocator|_dispatch|dispatch_"),
     re.compile(r"libdispatch|libswift_Concurrency")),
]
FSYNC = re.compile(r"fdatasync|fsync|ext4_sync_file|jbd2|file_write_and_wait")
KERNEL_PARTS = [
    ("kernel: thread wake-ups and switches",
     re.compile(r"futex|eventfd|schedule|finish_task_switch|try_to_wake_up|__switch_to|pick_next_task|enqueue_task|"
                r"dequeue_task")),
    ("kernel: file writes (WAL, outbox journal)",
     re.compile(r"generic_perform_write|ext4_|block_commit_write|mark_buffer_dirty|blk_mq|flush_end_io|pwrite|"
                r"filemap_|folio")),
    ("kernel: loopback TCP", re.compile(r"tcp_|sock_|inet_|ip_|__dev_queue|net_rx|process_backlog|loopback|skb|"
                                        r"recvmsg|sendmsg|recvfrom|sendto|__sys_write|__sys_read|writev|readv")),
    ("kernel: epoll", re.compile(r"epoll|ep_poll")),
]
FRAME = re.compile(r"^\s*[0-9a-f]+\s+(.*?)(?:\+0x[0-9a-f]+)?\s+\((.*)\)\s*$")


def frames_of(block):
    frames = []
    for line in block.split("\n")[1:]:
        match = FRAME.match(line)
        if match:
            frames.append((match.group(1), match.group(2)))
    return frames


def part_of(frames):
    if not frames:
        return None
    if "kernel" in frames[0][1]:
        if any(FSYNC.search(symbol) for symbol, _ in frames):
            return "kernel: fdatasync (store commits)"
        for symbol, dso in frames:
            if "kernel" not in dso:
                break
            for name, pattern in KERNEL_PARTS:
                if pattern.search(symbol):
                    return name
        return "kernel: other"
    for candidates in (USER_PARTS, GENERIC_PARTS):
        for symbol, dso in frames:
            for name, symbol_pattern, dso_pattern in candidates:
                if (symbol_pattern and symbol_pattern.search(symbol)) or (dso_pattern and dso_pattern.search(dso)):
                    return name
    return "unattributed (allocator, reference counting, runtime)"


def parts(script_text):
    """[(part, share in %)] of the samples in `perf script` output, largest first, and the sample count."""
    counts, total = {}, 0
    for block in script_text.split("\n\n"):
        part = part_of(frames_of(block.strip("\n")))
        if part is None:
            continue
        total += 1
        counts[part] = counts.get(part, 0) + 1
    shares = sorted(((name, 100.0 * n / total) for name, n in counts.items()), key=lambda x: -x[1])
    return shares, total


def parts_of_file(data, timeout=300):
    script = subprocess.run(["perf", "script", "-i", data], capture_output=True, text=True, timeout=timeout)
    if script.returncode != 0:
        raise RuntimeError(script.stderr[-500:])
    return parts(script.stdout)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: profile_parts.py PERF_DATA")
    shares, total = parts_of_file(sys.argv[1])
    for name, share in shares:
        print("%5.1f%%  %s" % (share, name))
    print("%d samples" % total)
