// Copyright 2026 The redlock Authors.
//
// PrometheusObserver: an Observer (observer.h) that keeps Prometheus metrics
// of what a client does — acquisitions and their attempts, waits, per-master
// latencies and timeouts, restart-guard vetoes, extensions, lost locks,
// releases, the locks held now and each master's connection and verdict — in
// a prometheus-cpp Registry that your program serves (prometheus::Exposer) or
// pushes. Library target redlock::prometheus (built when the Debian package
// prometheus-cpp-dev is installed). docs/observability.md lists every metric
// and the alerts to set first.
//
//   auto registry = std::make_shared<prometheus::Registry>();
//   auto observer = redlock::PrometheusObserver::Create(registry);
//   if (!observer.ok()) return observer.status();
//   options.observer = *observer;
//   (void)(*observer)->AddMasters(options.masters);  // Series at 0 up front.
//   prometheus::Exposer exposer("127.0.0.1:9464");
//   exposer.RegisterCollectable(registry);
//   auto client = redlock::Redlock::Create(options);
//
// Thread-safe: one observer may serve several clients (each calls it on its
// own loop thread) while the registry is scraped from another thread. Every
// method is quick and never blocks on I/O.

#ifndef REDLOCK_PROMETHEUS_H_
#define REDLOCK_PROMETHEUS_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "redlock/observer.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace redlock {

struct PrometheusOptions {
  // Labels added to every series of every family, e.g. {{"service",
  // "billing"}}. prometheus-cpp keeps one set of constant labels per family
  // name in a registry: observers that share a registry must use the same
  // constant labels (Create() fails otherwise). To tell clients apart, give
  // each its own registry and register every registry with the Exposer.
  // Label names must be valid Prometheus label names and must not be one of
  // the labels the observer sets itself (master, op, outcome, reason, vote,
  // freed, keep_alive, resource). Default: none.
  std::map<std::string, std::string> const_labels;

  // redlock_locks_held is labelled by resource name. Turn it off when the
  // resource names are many (one per user, per order, ...): the gauge is
  // then one series, the sum over resources, and no series is kept per
  // resource. Default: true.
  bool resource_label = true;
};

class PrometheusObserver final : public Observer {
 public:
  // Registers the metric families (docs/observability.md) in `registry` and
  // returns an observer that updates them; set it as Options::observer of one
  // or more clients. The families are created with their label-less series
  // and every outcome and reason series a client can produce at 0, so that
  // rate() and increase() see the first event. kInvalidArgument: `registry`
  // is null, a constant label's name is invalid or reserved, or the registry
  // already holds a family of the same name with other constant labels or of
  // another type.
  static absl::StatusOr<std::shared_ptr<PrometheusObserver>> Create(
      std::shared_ptr<prometheus::Registry> registry,
      PrometheusOptions options = {});

  ~PrometheusObserver() override;
  PrometheusObserver(const PrometheusObserver&) = delete;
  PrometheusObserver& operator=(const PrometheusObserver&) = delete;

  // Creates every per-master series for these masters (URIs as in
  // Options::masters; labelled by MasterAddress::Name(), "host:port[/db]")
  // at 0, before any event: a master that never connects then shows
  // redlock_master_connected 0 instead of no series at all. Optional: a
  // master's series are otherwise created at its first event. Call it once
  // per client with that client's Options::masters. kInvalidArgument names a
  // URI that does not parse; the masters before it are added.
  absl::Status AddMasters(const std::vector<std::string>& master_uris);

  // Observer. Each updates the metrics docs/observability.md lists for it.
  void OnAttempt(const AttemptEvent& event) override;
  void OnAcquired(const AcquiredEvent& event) override;
  void OnAcquireFailed(const AcquireFailedEvent& event) override;
  void OnExtended(const ExtendedEvent& event) override;
  // The lock leaves redlock_locks_held at once; the release that normally
  // follows (WithLock, ScopedLock, the keep-alive's owner) does not take it
  // off a second time.
  void OnLost(const LostEvent& event) override;
  void OnReleased(const ReleasedEvent& event) override;
  void OnMaster(const MasterEvent& event) override;

 private:
  class Metrics;
  explicit PrometheusObserver(std::unique_ptr<Metrics> metrics);

  const std::unique_ptr<Metrics> metrics_;
};

}  // namespace redlock

#endif  // REDLOCK_PROMETHEUS_H_
