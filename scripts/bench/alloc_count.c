/*
 * Counts a process's heap allocations and file syncs, for scripts/bench/cost_report.py and
 * scripts/bench/group_commit.py (issue 48).
 *
 *     cc -O2 -shared -fPIC -o alloc_count.so alloc_count.c
 *     ALLOC_COUNT_OUT=/tmp/counts LD_PRELOAD=$PWD/alloc_count.so .build/release/gateway ...
 *     kill -USR2 <pid>    # appends "<allocations> <bytes> <syncs>\n" to /tmp/counts
 *
 * malloc, calloc, realloc (a new block, not a free), posix_memalign, aligned_alloc, memalign and valloc are
 * counted, with the bytes asked for; each is passed on to glibc's own (__libc_*), so no dlsym is needed, which
 * itself allocates. The counters are relaxed atomics: the totals are exact, their order across threads is not
 * needed. fsync, fdatasync and sync_file_range are counted as syncs (SQLite's commits and checkpoints call
 * fdatasync or fsync through the PLT, so the interposer sees them) and passed on as raw system calls.
 * SIGUSR2 writes the three totals with write(2) from the handler (async-signal-safe: no stdio, no
 * allocation). The caller reads them before and after a run of requests and divides the difference.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static atomic_ulong allocations;
static atomic_ulong allocated_bytes;
static atomic_ulong syncs;
static int out_fd = -1;

static inline void count(size_t size) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&allocated_bytes, size, memory_order_relaxed);
}

void *malloc(size_t size) {
    count(size);
    return __libc_malloc(size);
}

void *calloc(size_t count_, size_t size) {
    count(count_ * size);
    return __libc_calloc(count_, size);
}

void *realloc(void *pointer, size_t size) {
    if (size != 0) count(size);
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    count(size);
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count(size);
    return __libc_memalign(alignment, size);
}

void *valloc(size_t size) {
    count(size);
    return __libc_memalign((size_t)sysconf(_SC_PAGESIZE), size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    count(size);
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

int fsync(int fd) {
    atomic_fetch_add_explicit(&syncs, 1, memory_order_relaxed);
    return (int)syscall(SYS_fsync, fd);
}

int fdatasync(int fd) {
    atomic_fetch_add_explicit(&syncs, 1, memory_order_relaxed);
    return (int)syscall(SYS_fdatasync, fd);
}

int sync_file_range(int fd, off_t offset, off_t nbytes, unsigned int flags) {
    atomic_fetch_add_explicit(&syncs, 1, memory_order_relaxed);
    return (int)syscall(SYS_sync_file_range, fd, offset, nbytes, flags);
}

/* Writes `value` in decimal into `buffer` (at least 21 bytes); returns the length. */
static size_t decimal(unsigned long value, char *buffer) {
    char digits[24];
    size_t length = 0;
    do {
        digits[length++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    for (size_t index = 0; index < length; index++) buffer[index] = digits[length - 1 - index];
    return length;
}

static void report(int signal_number) {
    (void)signal_number;
    if (out_fd < 0) return;
    int saved = errno;
    char line[96];
    size_t length = decimal(atomic_load_explicit(&allocations, memory_order_relaxed), line);
    line[length++] = ' ';
    length += decimal(atomic_load_explicit(&allocated_bytes, memory_order_relaxed), line + length);
    line[length++] = ' ';
    length += decimal(atomic_load_explicit(&syncs, memory_order_relaxed), line + length);
    line[length++] = '\n';
    ssize_t written = write(out_fd, line, length);
    (void)written;
    errno = saved;
}

__attribute__((constructor)) static void start(void) {
    const char *path = getenv("ALLOC_COUNT_OUT");
    if (path == NULL || path[0] == '\0') return;
    out_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (out_fd < 0) return;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = report;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGUSR2, &action, NULL);
}
