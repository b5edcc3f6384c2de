// Copyright 2026 The redlock Authors.
//
// nightly_job: one replica of a service that runs as several replicas, whose
// nightly job (recalculating ratings) must run exactly once although every
// replica starts it at the same time. Each replica tries to take the lock;
// the winner runs the job and releases the lock, the others skip it.
//
//   nightly_job --name=replica-1 --ttl=10s --work=2s
//       --masters=redis://127.0.0.1:7001,redis://127.0.0.1:7002,...
//
// Prints one block of lines, each prefixed with the worker's name. Exit
// status:
//   0  this replica ran the job, or another replica holds the lock;
//   2  too few masters answered in time: maybe nobody runs the job tonight,
//      so whatever runs this should retry or alert;
//   1  anything else: bad flags, a failed release, a job that outlived its
//      lock.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "redlock/lock.h"
#include "redlock/options.h"
#include "redlock/redlock.h"

ABSL_FLAG(std::string, masters, "",
          "Comma-separated redis:// URIs of the masters. Default: the "
          "REDLOCK_MASTERS environment variable.");
ABSL_FLAG(std::string, name, "",
          "This worker's name, printed before every line. Default: "
          "worker-<pid>.");
ABSL_FLAG(std::string, resource, "recalc-ratings", "What to lock.");
ABSL_FLAG(absl::Duration, ttl, absl::Seconds(10),
          "How long the lock lives on the masters.");
ABSL_FLAG(absl::Duration, work, absl::Seconds(2), "How long the job takes.");
ABSL_FLAG(absl::Duration, wait, absl::ZeroDuration(),
          "How long to keep trying for the lock; 0 means one attempt.");
ABSL_FLAG(absl::Duration, request_timeout, absl::Milliseconds(50),
          "How long to wait for each master's answer.");

namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitNoQuorum = 2;

// Prints "[name] text" lines, flushed at once so that workers writing to one
// terminal interleave by whole lines.
class Reporter {
 public:
  explicit Reporter(std::string name) : name_(std::move(name)) {}

  void Say(absl::string_view text) const {
    absl::PrintF("[%s] %s\n", name_, text);
    std::fflush(stdout);
  }

 private:
  std::string name_;
};

std::vector<std::string> SplitMasters(absl::string_view list) {
  std::vector<std::string> masters;
  for (absl::string_view uri : absl::StrSplit(list, ',')) {
    uri = absl::StripAsciiWhitespace(uri);
    if (!uri.empty()) masters.emplace_back(uri);
  }
  return masters;
}

// "3f2a9c1e…": enough of the token to tell owners apart in a demo.
std::string ShortToken(absl::string_view token) {
  if (token.size() <= 8) return std::string(token);
  return absl::StrCat(token.substr(0, 8), "\u2026");
}

// absl::FormatDuration(), rounded down to `precision`, with "0s" for zero.
std::string Pretty(absl::Duration d,
                   absl::Duration precision = absl::Microseconds(1)) {
  d = absl::Trunc(d, precision);
  return d == absl::ZeroDuration() ? "0s" : absl::FormatDuration(d);
}

// Did not get the lock: says why and what this replica does about it.
int ReportLoss(const Reporter& out, absl::string_view resource,
               const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kAborted:
      out.Say(absl::StrCat("did not get ", resource, ": ", status.ToString()));
      out.Say("skipping the job: another replica runs it");
      return kExitOk;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      out.Say(absl::StrCat("did not get ", resource, ": ", status.ToString()));
      out.Say(
          "skipping the job: too few masters answered in time, so maybe "
          "nobody runs it; try again later");
      return kExitNoQuorum;
    default:
      out.Say(absl::StrCat("error: could not acquire ", resource, ": ",
                           status.ToString()));
      return kExitError;
  }
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "One replica's nightly job, run exactly once across replicas with a "
      "Redlock.\nUsage: nightly_job --name replica-1 --masters "
      "redis://127.0.0.1:7001,...");
  absl::ParseCommandLine(argc, argv);

  std::string name = absl::GetFlag(FLAGS_name);
  if (name.empty()) name = absl::StrCat("worker-", getpid());
  const Reporter out(name);
  const std::string resource = absl::GetFlag(FLAGS_resource);
  const absl::Duration ttl = absl::GetFlag(FLAGS_ttl);
  const absl::Duration work = absl::GetFlag(FLAGS_work);
  const absl::Duration wait = absl::GetFlag(FLAGS_wait);

  std::string masters = absl::GetFlag(FLAGS_masters);
  if (masters.empty()) {
    const char* env = std::getenv("REDLOCK_MASTERS");
    if (env != nullptr) masters = env;
  }
  redlock::Options options;
  options.masters = SplitMasters(masters);
  options.request_timeout = absl::GetFlag(FLAGS_request_timeout);
  if (options.masters.empty()) {
    out.Say("error: no masters: pass --masters or set REDLOCK_MASTERS");
    return kExitError;
  }
  if (wait < absl::ZeroDuration() || work < absl::ZeroDuration()) {
    out.Say("error: --wait and --work must not be negative");
    return kExitError;
  }

  absl::StatusOr<std::unique_ptr<redlock::Redlock>> client =
      redlock::Redlock::Create(options);
  if (!client.ok()) {
    out.Say(absl::StrCat("error: ", client.status().ToString()));
    return kExitError;
  }

  const redlock::MonotonicTime started = redlock::MonotonicClock::now();
  absl::StatusOr<redlock::Lock> lock =
      wait > absl::ZeroDuration() ? (*client)->Acquire(resource, ttl, wait)
                                  : (*client)->TryAcquire(resource, ttl);
  const absl::Duration took =
      absl::FromChrono(redlock::MonotonicClock::now() - started);
  if (!lock.ok()) return ReportLoss(out, resource, lock.status());

  out.Say(absl::StrCat("acquired ", resource, " in ", Pretty(took), ", token ",
                       ShortToken(lock->token()), ", valid for ",
                       Pretty(lock->remaining(), absl::Milliseconds(10)),
                       " more"));
  out.Say(absl::StrCat("  votes: ", redlock::DescribeVotes(lock->votes())));
  if (lock->remaining() <= work) {
    out.Say(absl::StrCat(
        "warning: the job takes ", Pretty(work),
        " but the lock is valid for only ",
        Pretty(lock->remaining(), absl::Milliseconds(10)),
        " more; once it expires another replica may start the job too"));
  }

  out.Say(absl::StrCat("running the job (", Pretty(work), ") ..."));
  absl::SleepFor(work);
  const bool outlived_lock = !lock->valid();

  absl::StatusOr<redlock::ReleaseReport> report = (*client)->Release(*lock);
  if (!report.ok()) {
    out.Say(absl::StrCat("error: the job is done but the release failed: ",
                         report.status().ToString()));
    return kExitError;
  }
  // Release() returns once a quorum has confirmed: the masters counted as
  // pending were sent the release with the others, only their answers were
  // not in yet. "released on 3/5 masters" read as two masters still holding
  // the lock, so the line says what happened in words.
  const int total = static_cast<int>((*client)->options().masters.size());
  std::vector<std::string> details = {
      absl::StrCat(report->released, " of ", total, " masters confirmed")};
  if (report->not_held > 0) {
    details.push_back(
        absl::StrCat(report->not_held, " no longer had it (expired or taken)"));
  }
  if (report->failed > 0) {
    details.push_back(
        absl::StrCat(report->failed,
                     " could not be asked (their copies expire with the TTL)"));
  }
  if (report->pending > 0) {
    details.push_back(
        absl::StrCat(report->pending,
                     report->pending == 1 ? " confirmation" : " confirmations",
                     " still on their way"));
  }
  std::string done = absl::StrCat(
      report->freed ? "job done; released ("
                    : "job done; the release reached too few masters, so the "
                      "resource stays taken until the lock expires (",
      absl::StrJoin(details, "; "), ")");
  out.Say(done);
  if (outlived_lock) {
    out.Say(
        "error: the lock expired before the job finished, so another replica "
        "may have run it too; use a --ttl longer than the job");
    return kExitError;
  }
  return kExitOk;
}
