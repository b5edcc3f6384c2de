/* Copyright 2026 The redlock Authors.
 *
 * libredlock_clock_shim.so: LD_PRELOADed into a redis-server, it makes the
 * server's wall clock run fast, slow or jump, as the control page named by
 * REDLOCK_CLOCK_CONTROL says (clock_shim.h). The torture tool and the tests
 * use it to show what a master with a bad clock does to a Redlock.
 *
 * Why not libfaketime: it resolves the real functions with dlsym() when first
 * called, dlsym() allocates, and redis-server's jemalloc reads the clock while
 * it initialises — the process deadlocks. This shim never allocates, never
 * takes a lock and never calls dlsym(): the true time comes straight from the
 * kernel with syscall(SYS_clock_gettime), and the page is mapped in a
 * constructor with open() and mmap(). A clock read before the constructor has
 * run (jemalloc's) sees the true time.
 *
 * Without REDLOCK_CLOCK_CONTROL the clock is the true one. With it, a file
 * that cannot be mapped or is not a control page ends the process at start-up
 * (exit status 111, a line on stderr): a test that asked for a skewed clock
 * must not silently get a true one. */

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/clock_shim.h"

static const struct redlock_clock_page* g_page; /* Set once, atomically. */

static void Die(const char* what) {
  static const char kPrefix[] = "redlock clock shim: ";
  (void)!write(2, kPrefix, sizeof(kPrefix) - 1);
  (void)!write(2, what, strlen(what));
  (void)!write(2, "\n", 1);
  _exit(111);
}

__attribute__((constructor)) static void MapControlPage(void) {
  const char* path = getenv(REDLOCK_CLOCK_CONTROL_ENV);
  if (path == NULL || path[0] == '\0') return;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) Die("cannot open the file named by REDLOCK_CLOCK_CONTROL");
  void* p = mmap(NULL, REDLOCK_CLOCK_PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) Die("cannot map the file named by REDLOCK_CLOCK_CONTROL");
  const struct redlock_clock_page* page = (const struct redlock_clock_page*)p;
  if (__atomic_load_n(&page->magic, __ATOMIC_ACQUIRE) != REDLOCK_CLOCK_MAGIC) {
    Die("REDLOCK_CLOCK_CONTROL does not name a clock control page");
  }
  __atomic_store_n(&g_page, page, __ATOMIC_RELEASE);
}

static int TrueClock(clockid_t id, struct timespec* ts) {
  return (int)syscall(SYS_clock_gettime, id, ts);
}

/* The skewed reading of wall clock `id` (CLOCK_REALTIME or its coarse
 * variant). */
static int SkewedWallClock(clockid_t id, struct timespec* ts) {
  struct timespec real;
  if (TrueClock(id, &real) != 0) return -1;
  const struct redlock_clock_page* p =
      __atomic_load_n(&g_page, __ATOMIC_ACQUIRE);
  if (p == NULL) {
    *ts = real;
    return 0;
  }
  int64_t anchor_real = 0, anchor_fake = 0, rate = 1000000;
  for (int tries = 0;; ++tries) {
    const uint64_t before = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);
    anchor_real = __atomic_load_n(&p->anchor_real_ns, __ATOMIC_RELAXED);
    anchor_fake = __atomic_load_n(&p->anchor_fake_ns, __ATOMIC_RELAXED);
    rate = __atomic_load_n(&p->rate_ppm, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    const uint64_t after = __atomic_load_n(&p->seq, __ATOMIC_RELAXED);
    if (before == after && (before & 1) == 0) break;
    /* A writer that died half-way must not hang the server: after a
     * million tries take what was read (the writer is our own test, which
     * updates in nanoseconds). */
    if (tries > 1000000) break;
  }
  const int64_t real_ns = (int64_t)real.tv_sec * 1000000000 + real.tv_nsec;
  const int64_t fake =
      redlock_clock_fake_ns(anchor_real, anchor_fake, rate, real_ns);
  int64_t sec = fake / 1000000000;
  int64_t nsec = fake % 1000000000;
  if (nsec < 0) {
    nsec += 1000000000;
    sec -= 1;
  }
  ts->tv_sec = (time_t)sec;
  ts->tv_nsec = (long)nsec;
  return 0;
}

int clock_gettime(clockid_t id, struct timespec* ts) {
  if (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE) {
    return SkewedWallClock(id, ts);
  }
  return TrueClock(id, ts);
}

int gettimeofday(struct timeval* restrict tv, void* restrict tz) {
  if (tz != NULL) memset(tz, 0, sizeof(struct timezone)); /* Obsolete. */
  struct timespec ts;
  if (SkewedWallClock(CLOCK_REALTIME, &ts) != 0) return -1;
  tv->tv_sec = ts.tv_sec;
  tv->tv_usec = ts.tv_nsec / 1000;
  return 0;
}

time_t time(time_t* out) {
  struct timespec ts;
  if (SkewedWallClock(CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
  if (out != NULL) *out = ts.tv_sec;
  return ts.tv_sec;
}
