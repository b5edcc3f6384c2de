// Uses the installed redlock/prometheus.h and library: an observer on a
// registry, fed one event, whose counter then reads 1.
#include <cstdio>
#include <memory>

#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"
#include "redlock/prometheus.h"

int main() {
  auto registry = std::make_shared<prometheus::Registry>();
  auto observer = redlock::PrometheusObserver::Create(registry);
  if (!observer.ok()) {
    std::printf("create failed: %s\n", observer.status().ToString().c_str());
    return 2;
  }
  redlock::AcquiredEvent event;
  event.resource = "consumer";
  (*observer)->OnAcquired(event);
  const std::string text =
      prometheus::TextSerializer().Serialize(registry->Collect());
  if (text.find("redlock_acquisitions_total{outcome=\"ok\"} 1") ==
      std::string::npos) {
    std::printf("unexpected exposition:\n%s", text.c_str());
    return 3;
  }
  std::printf("prometheus consumer ok\n");
  return 0;
}
