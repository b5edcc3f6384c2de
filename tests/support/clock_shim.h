/* Copyright 2026 The redlock Authors.
 *
 * The control page shared by the clock shim (clock_shim.c, LD_PRELOADed into
 * a redis-server) and the test that steers it (SkewedClock, skewed_clock.h).
 * The page lives in a file named by REDLOCK_CLOCK_CONTROL in the server's
 * environment; the shim maps it read-only at start-up, the test maps it
 * read-write and may change it at any time. From the page the shim computes
 * the wall clock the server sees:
 *
 *   fake = anchor_fake_ns + (real - anchor_real_ns) * rate_ppm / 1000000
 *
 * where real is the true CLOCK_REALTIME. rate_ppm 1000000 is a clock of the
 * right speed, 2000000 one that runs twice as fast; a jump forward moves
 * anchor_fake_ns. The fields are guarded by a sequence counter (odd while the
 * writer is in the middle of an update), so a reader never mixes an old
 * anchor with a new rate.
 *
 * Only the wall clock (CLOCK_REALTIME and CLOCK_REALTIME_COARSE through
 * clock_gettime, gettimeofday, time) is changed: Redis measures key expiry
 * with it. CLOCK_MONOTONIC and the others pass through unchanged.
 *
 * C, so that the shim needs nothing but libc. */

#ifndef REDLOCK_TESTS_SUPPORT_CLOCK_SHIM_H_
#define REDLOCK_TESTS_SUPPORT_CLOCK_SHIM_H_

#include <stdint.h>

#define REDLOCK_CLOCK_CONTROL_ENV "REDLOCK_CLOCK_CONTROL"
/* "RLCLOCK1" */
#define REDLOCK_CLOCK_MAGIC 0x314b434f4c434c52ULL
#define REDLOCK_CLOCK_PAGE_SIZE 4096

struct redlock_clock_page {
  uint64_t magic;
  uint64_t seq; /* Odd while an update is being written. */
  int64_t anchor_real_ns;
  int64_t anchor_fake_ns;
  int64_t rate_ppm;
};

/* The fake wall clock at true wall-clock time `real_ns`, from one consistent
 * copy of the page's fields. */
static inline int64_t redlock_clock_fake_ns(int64_t anchor_real_ns,
                                            int64_t anchor_fake_ns,
                                            int64_t rate_ppm, int64_t real_ns) {
  const __int128 elapsed = (__int128)(real_ns - anchor_real_ns);
  return anchor_fake_ns + (int64_t)(elapsed * rate_ppm / 1000000);
}

#endif /* REDLOCK_TESTS_SUPPORT_CLOCK_SHIM_H_ */
