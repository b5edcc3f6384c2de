// Uses the installed headers and library: validates options, and runs one
// acquisition against a port where nothing listens, which must fail cleanly
// with kUnavailable naming the master.
#include <cstdio>

#include "redlock/redlock.h"

int main() {
  redlock::Options options;
  options.masters = {"redis://127.0.0.1:1"};
  options.request_timeout = absl::Milliseconds(100);
  if (!redlock::ValidateOptions(options).ok()) return 2;
  auto client = redlock::Redlock::Create(options);
  if (!client.ok()) {
    std::printf("create failed: %s\n", client.status().ToString().c_str());
    return 3;
  }
  auto lock = (*client)->TryAcquire("consumer", absl::Seconds(1));
  if (lock.ok() || !absl::IsUnavailable(lock.status())) {
    std::printf("unexpected: %s\n", lock.status().ToString().c_str());
    return 4;
  }
  std::printf("consumer ok: %s\n", lock.status().ToString().c_str());
  return 0;
}
