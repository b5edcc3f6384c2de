// Copyright 2026 The redlock Authors.
//
// redlock-fault-proxy: the tests' fault-injecting TCP proxy as a program, to
// put between a client and one Redis master by hand and switch faults live.
//
//   redlock-fault-proxy --upstream_port=7001 --listen_port=17001
//   > latency 20 20      # ms added towards the server, towards the client
//   > blackhole          # read everything, forward nothing
//   > pass
//   > stats
//   > quit
//
// Upstream must be a loopback address. Not installed: a developer tool.

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "tests/support/fault_proxy.h"

ABSL_FLAG(int, listen_port, 0,
          "Port to listen on, on 127.0.0.1; 0 picks a free one.");
ABSL_FLAG(std::string, upstream_host, "127.0.0.1",
          "The Redis master's address; must be loopback.");
ABSL_FLAG(int, upstream_port, 6379, "The Redis master's port.");
ABSL_FLAG(int, latency_ms, 0,
          "Delay added to each direction from the start, in milliseconds.");
ABSL_FLAG(std::string, mode, "pass",
          "Initial mode: pass, blackhole, reset or refuse.");

namespace {

using redlock::testing::FaultProxy;

constexpr char kHelp[] =
    "commands:\n"
    "  pass | blackhole | reset | refuse   switch mode\n"
    "  latency TO_SERVER_MS TO_CLIENT_MS   add delay per direction (0 0: "
    "none)\n"
    "  cut BYTES                           reset connections after BYTES "
    "(0: off)\n"
    "  reset-once                          reset open connections, keep the "
    "mode\n"
    "  stats                               counters\n"
    "  help | quit\n";

bool ParseMode(const std::string& word, FaultProxy::Mode* mode) {
  if (word == "pass") {
    *mode = FaultProxy::Mode::kPass;
  } else if (word == "blackhole") {
    *mode = FaultProxy::Mode::kBlackhole;
  } else if (word == "reset") {
    *mode = FaultProxy::Mode::kReset;
  } else if (word == "refuse") {
    *mode = FaultProxy::Mode::kRefuse;
  } else {
    return false;
  }
  return true;
}

void PrintStats(const FaultProxy& proxy) {
  const FaultProxy::Counters c = proxy.counters();
  absl::PrintF(
      "accepted=%d open=%d bytes_to_server=%d bytes_to_client=%d resets=%d "
      "cuts=%d\n",
      c.accepted, c.open_connections, c.bytes_to_server, c.bytes_to_client,
      c.resets, c.cuts);
}

// Runs one command line; false on quit.
bool RunCommand(FaultProxy& proxy, const std::string& line) {
  std::vector<std::string> words =
      absl::StrSplit(line, ' ', absl::SkipWhitespace());
  if (words.empty()) return true;
  const std::string& verb = words[0];
  FaultProxy::Mode mode;
  int64_t a = 0;
  int64_t b = 0;
  if (verb == "quit" || verb == "exit") return false;
  if (ParseMode(verb, &mode) && words.size() == 1) {
    proxy.SetMode(mode);
    absl::PrintF("mode %s\n", verb);
  } else if (verb == "latency" && words.size() == 3 &&
             absl::SimpleAtoi(words[1], &a) && absl::SimpleAtoi(words[2], &b) &&
             a >= 0 && b >= 0) {
    proxy.SetLatency(absl::Milliseconds(a), absl::Milliseconds(b));
    absl::PrintF("latency %dms to server, %dms to client\n", a, b);
  } else if (verb == "cut" && words.size() == 2 &&
             absl::SimpleAtoi(words[1], &a) && a >= 0) {
    proxy.CutAfterBytes(a);
    absl::PrintF(a == 0 ? "cut off\n" : "cut after %d bytes\n", a);
  } else if (verb == "reset-once" && words.size() == 1) {
    proxy.ResetAllConnections();
    absl::PrintF("open connections reset\n");
  } else if (verb == "stats" && words.size() == 1) {
    PrintStats(proxy);
  } else if (verb == "help" && words.size() == 1) {
    absl::PrintF("%s", kHelp);
  } else {
    absl::FPrintF(stderr, "unknown command: %s\n%s", line, kHelp);
  }
  std::fflush(stdout);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "A TCP proxy in front of one Redis master that injects network faults;\n"
      "reads commands on stdin. Example:\n"
      "  redlock-fault-proxy --upstream_port=7001 --listen_port=17001");
  absl::ParseCommandLine(argc, argv);

  FaultProxy::Mode mode;
  if (!ParseMode(absl::GetFlag(FLAGS_mode), &mode)) {
    absl::FPrintF(stderr,
                  "--mode: expected pass, blackhole, reset or refuse\n");
    return 2;
  }
  if (absl::GetFlag(FLAGS_latency_ms) < 0) {
    absl::FPrintF(stderr, "--latency_ms must not be negative\n");
    return 2;
  }
  FaultProxy::Config config;
  config.upstream_host = absl::GetFlag(FLAGS_upstream_host);
  config.upstream_port = absl::GetFlag(FLAGS_upstream_port);
  config.listen_port = absl::GetFlag(FLAGS_listen_port);
  auto proxy = FaultProxy::Start(config);
  if (!proxy.ok()) {
    absl::FPrintF(stderr, "redlock-fault-proxy: %s\n",
                  proxy.status().ToString());
    return 1;
  }
  const absl::Duration latency =
      absl::Milliseconds(absl::GetFlag(FLAGS_latency_ms));
  (*proxy)->SetLatency(latency, latency);
  (*proxy)->SetMode(mode);
  absl::PrintF("listening on 127.0.0.1:%d, forwarding to %s:%d (%s)\n",
               (*proxy)->port(), config.upstream_host, config.upstream_port,
               absl::GetFlag(FLAGS_mode));
  absl::PrintF("%s", kHelp);
  std::fflush(stdout);

  std::string line;
  while (std::getline(std::cin, line)) {
    if (!RunCommand(**proxy, line)) break;
  }
  PrintStats(**proxy);
  return 0;
}
