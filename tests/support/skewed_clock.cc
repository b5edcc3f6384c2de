// Copyright 2026 The redlock Authors.

#include "tests/support/skewed_clock.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tests/support/clock_shim.h"

#ifndef REDLOCK_CLOCK_SHIM_PATH
#error "REDLOCK_CLOCK_SHIM_PATH must name the built clock shim"
#endif

namespace redlock::testing {
namespace {

int64_t TrueWallNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct Reading {
  int64_t anchor_real, anchor_fake, rate_ppm;
};

// Only this process writes the page, so a plain read sees a settled state.
Reading Read(const redlock_clock_page* p) {
  return {__atomic_load_n(&p->anchor_real_ns, __ATOMIC_RELAXED),
          __atomic_load_n(&p->anchor_fake_ns, __ATOMIC_RELAXED),
          __atomic_load_n(&p->rate_ppm, __ATOMIC_RELAXED)};
}

}  // namespace

std::string SkewedClock::ShimPath() { return REDLOCK_CLOCK_SHIM_PATH; }

absl::StatusOr<std::unique_ptr<SkewedClock>> SkewedClock::Create(
    std::string path) {
  if (access(ShimPath().c_str(), R_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("clock shim not found at ", ShimPath(),
                     ": build the redlock_clock_shim target"));
  }
  const int fd =
      open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("open ", path, ": ", std::strerror(errno)));
  }
  if (ftruncate(fd, REDLOCK_CLOCK_PAGE_SIZE) != 0) {
    const int err = errno;
    close(fd);
    unlink(path.c_str());
    return absl::InternalError(
        absl::StrCat("ftruncate ", path, ": ", std::strerror(err)));
  }
  void* m = mmap(nullptr, REDLOCK_CLOCK_PAGE_SIZE, PROT_READ | PROT_WRITE,
                 MAP_SHARED, fd, 0);
  const int err = errno;
  close(fd);
  if (m == MAP_FAILED) {
    unlink(path.c_str());
    return absl::InternalError(
        absl::StrCat("mmap ", path, ": ", std::strerror(err)));
  }
  auto* page = static_cast<redlock_clock_page*>(m);
  const int64_t now = TrueWallNs();
  __atomic_store_n(&page->seq, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&page->anchor_real_ns, now, __ATOMIC_RELAXED);
  __atomic_store_n(&page->anchor_fake_ns, now, __ATOMIC_RELAXED);
  __atomic_store_n(&page->rate_ppm, 1000000, __ATOMIC_RELAXED);
  // The magic last: a shim that sees it sees the fields.
  __atomic_store_n(&page->magic, REDLOCK_CLOCK_MAGIC, __ATOMIC_RELEASE);
  return std::unique_ptr<SkewedClock>(new SkewedClock(std::move(path), page));
}

SkewedClock::~SkewedClock() {
  munmap(page_, REDLOCK_CLOCK_PAGE_SIZE);
  unlink(path_.c_str());
}

std::vector<std::string> SkewedClock::ServerEnv() const {
  return {absl::StrCat("LD_PRELOAD=", ShimPath()),
          absl::StrCat(REDLOCK_CLOCK_CONTROL_ENV, "=", path_)};
}

void SkewedClock::Update(double rate, int64_t jump_ns) {
  const Reading r = Read(page_);
  const int64_t real = TrueWallNs();
  const int64_t fake =
      redlock_clock_fake_ns(r.anchor_real, r.anchor_fake, r.rate_ppm, real);
  const uint64_t seq = __atomic_load_n(&page_->seq, __ATOMIC_RELAXED);
  __atomic_store_n(&page_->seq, seq + 1, __ATOMIC_RELAXED);  // Odd: busy.
  __atomic_thread_fence(__ATOMIC_RELEASE);
  __atomic_store_n(&page_->anchor_real_ns, real, __ATOMIC_RELAXED);
  __atomic_store_n(&page_->anchor_fake_ns, fake + jump_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&page_->rate_ppm,
                   static_cast<int64_t>(std::llround(rate * 1e6)),
                   __ATOMIC_RELAXED);
  __atomic_store_n(&page_->seq, seq + 2, __ATOMIC_RELEASE);
}

absl::Status SkewedClock::SetRate(double rate) {
  if (!(rate > 0 && rate <= 1000)) {
    return absl::InvalidArgumentError(
        absl::StrCat("clock rate must be in (0, 1000], got ", rate));
  }
  Update(rate, 0);
  return absl::OkStatus();
}

void SkewedClock::Jump(absl::Duration by) {
  Update(this->rate(), absl::ToInt64Nanoseconds(by));
}

absl::Time SkewedClock::Now() const {
  const Reading r = Read(page_);
  return absl::FromUnixNanos(redlock_clock_fake_ns(r.anchor_real, r.anchor_fake,
                                                   r.rate_ppm, TrueWallNs()));
}

absl::Duration SkewedClock::Offset() const {
  const Reading r = Read(page_);
  const int64_t real = TrueWallNs();
  return absl::Nanoseconds(
      redlock_clock_fake_ns(r.anchor_real, r.anchor_fake, r.rate_ppm, real) -
      real);
}

double SkewedClock::rate() const { return Read(page_).rate_ppm / 1e6; }

}  // namespace redlock::testing
