// Copyright 2026 The redlock Authors.
//
// metrics: a client whose PrometheusObserver's metrics are served on
// http://127.0.0.1:PORT/metrics (prometheus::Exposer), taking and releasing
// a lock in a loop so that there is something to see.
//
//   metrics 9464 redis://127.0.0.1:7001,redis://127.0.0.1:7002,...
//   curl -s http://127.0.0.1:9464/metrics | grep ^redlock_
//
// Arguments: PORT (0: any free port) and the masters (default:
// $REDLOCK_MASTERS); optional --iterations=N (default 0: until killed).
// Prints "serving http://127.0.0.1:PORT/metrics" once the endpoint listens,
// then one line per iteration. Exit status 0 after N iterations, 1 on bad
// arguments or when a client cannot be created.

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "prometheus/exposer.h"
#include "prometheus/registry.h"
#include "redlock/options.h"
#include "redlock/prometheus.h"
#include "redlock/redlock.h"

namespace {

int Usage() {
  std::fprintf(stderr,
               "usage: metrics PORT [MASTER_URIS] [--iterations=N]\n"
               "  PORT 0 picks a free port; MASTER_URIS defaults to "
               "$REDLOCK_MASTERS\n");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int port = -1;
  std::string masters;
  int64_t iterations = 0;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--iterations=")) {
      if (!absl::SimpleAtoi(arg, &iterations) || iterations < 0) return Usage();
    } else if (port < 0) {
      if (!absl::SimpleAtoi(arg, &port) || port < 0 || port > 65535) {
        return Usage();
      }
    } else if (masters.empty()) {
      masters = std::string(arg);
    } else {
      return Usage();
    }
  }
  if (port < 0) return Usage();
  if (masters.empty() && std::getenv("REDLOCK_MASTERS") != nullptr) {
    masters = std::getenv("REDLOCK_MASTERS");
  }

  redlock::Options options;
  for (absl::string_view uri :
       absl::StrSplit(masters, ',', absl::SkipEmpty())) {
    options.masters.emplace_back(absl::StripAsciiWhitespace(uri));
  }
  if (options.masters.empty()) return Usage();

  auto registry = std::make_shared<prometheus::Registry>();
  absl::StatusOr<std::shared_ptr<redlock::PrometheusObserver>> observer =
      redlock::PrometheusObserver::Create(registry);
  if (!observer.ok()) {
    std::fprintf(stderr, "%s\n", observer.status().ToString().c_str());
    return 1;
  }
  if (absl::Status s = (*observer)->AddMasters(options.masters); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  options.observer = *observer;

  // prometheus-cpp's Exposer throws when it cannot listen.
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    exposer = std::make_unique<prometheus::Exposer>(
        "127.0.0.1:" + std::to_string(port), /*num_threads=*/1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cannot listen on 127.0.0.1:%d: %s\n", port, e.what());
    return 1;
  }
  exposer->RegisterCollectable(registry);
  const std::vector<int> ports = exposer->GetListeningPorts();
  std::printf("serving http://127.0.0.1:%d/metrics\n",
              ports.empty() ? port : ports.front());
  std::fflush(stdout);

  absl::StatusOr<std::unique_ptr<redlock::Redlock>> client =
      redlock::Redlock::Create(options);
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n", client.status().ToString().c_str());
    return 1;
  }
  for (int64_t i = 0; iterations == 0 || i < iterations; ++i) {
    absl::StatusOr<redlock::Lock> lock =
        (*client)->TryAcquire("metrics-example", absl::Seconds(5));
    if (lock.ok()) {
      absl::SleepFor(absl::Milliseconds(100));  // The work.
      absl::StatusOr<redlock::ReleaseReport> released =
          (*client)->Release(*lock);
      std::printf(
          "%lld: acquired and %s\n", static_cast<long long>(i + 1),
          released.ok() ? "released" : released.status().ToString().c_str());
    } else {
      std::printf("%lld: %s\n", static_cast<long long>(i + 1),
                  lock.status().ToString().c_str());
    }
    std::fflush(stdout);
    absl::SleepFor(absl::Milliseconds(400));
  }
  return 0;
}
