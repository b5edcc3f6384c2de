// Copyright 2026 The redlock Authors.
//
// FaultProxy: a TCP proxy on 127.0.0.1 between a client and one Redis master,
// switchable at run time to the network faults a production deployment meets:
// added latency per direction, a blackhole (accepts and reads, forwards
// nothing), connections reset, new connections refused, a connection cut after
// N bytes.
//
//   auto proxy = FaultProxy::Start({.upstream_port = server->port()});
//   options.masters = {(*proxy)->Uri(), ...};
//   (*proxy)->SetLatency(absl::Milliseconds(20), absl::Milliseconds(20));
//   (*proxy)->SetMode(FaultProxy::Mode::kBlackhole);
//
// It runs its own libevent loop on its own thread; every method is
// thread-safe and takes effect at once (latency applies to bytes read after
// the call). Only loopback addresses are accepted as upstream.

#ifndef REDLOCK_TESTS_SUPPORT_FAULT_PROXY_H_
#define REDLOCK_TESTS_SUPPORT_FAULT_PROXY_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace redlock::testing {

class FaultProxy {
 public:
  enum class Mode {
    // Forward both ways (with the configured latency). Default.
    kPass,
    // Accept new connections and read from every connection, forward nothing
    // either way: the master looks alive to TCP but never answers. A
    // connection that lost bytes this way stays a blackhole after the mode
    // changes (a byte stream with a hole in it cannot be resumed, like a
    // connection whose middlebox state was lost); new connections pass.
    kBlackhole,
    // Reset (RST, via SO_LINGER 0) every existing connection now and every
    // new one as soon as it is accepted.
    kReset,
    // Stop listening: new connections are refused (ECONNREFUSED). Existing
    // connections keep passing. Switching to another mode listens again on
    // the same port.
    kRefuse,
  };

  struct Config {
    std::string upstream_host = "127.0.0.1";  // Must be a loopback address.
    int upstream_port = 0;
    int listen_port = 0;  // 0: a free port on 127.0.0.1.
  };

  struct Counters {
    int64_t accepted = 0;
    int64_t open_connections = 0;
    int64_t bytes_to_server = 0;
    int64_t bytes_to_client = 0;
    int64_t resets = 0;
    int64_t cuts = 0;
  };

  // Listens on 127.0.0.1 and starts the proxy thread. kInvalidArgument for a
  // non-loopback upstream or a bad port; kUnavailable if it cannot listen.
  static absl::StatusOr<std::unique_ptr<FaultProxy>> Start(Config config);

  // Closes every connection and the listener, and joins the thread.
  ~FaultProxy();

  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  int port() const;
  // "redis://127.0.0.1:PORT".
  std::string Uri() const;

  void SetMode(Mode mode);
  // Delay added to each direction; zero for none. Ordering within a
  // direction is preserved.
  void SetLatency(absl::Duration to_server, absl::Duration to_client);
  // From now on, a connection is closed (RST) once it has forwarded `bytes`
  // bytes in total, counting both directions from the connection's start;
  // the byte that crosses the limit is not forwarded. 0 turns it off.
  void CutAfterBytes(int64_t bytes);
  // Resets every open connection once, now, without changing the mode.
  void ResetAllConnections();
  // Writes `bytes` to the client of every open connection now, ahead of
  // whatever the server sent that the latency still holds: a reply the
  // server never sent (a malformed or over-long one), as a hostile network
  // could.
  void InjectToClient(const std::string& bytes);
  // New connections go to 127.0.0.1:`port` from now on (another server
  // behind the same address); open ones keep theirs. False for a bad port.
  bool SetUpstreamPort(int port);

  Counters counters() const;

 private:
  class Impl;
  explicit FaultProxy(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace redlock::testing

#endif  // REDLOCK_TESTS_SUPPORT_FAULT_PROXY_H_
