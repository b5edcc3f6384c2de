// Copyright 2026 The redlock Authors.
//
// Options for tests on local masters: timeouts generous enough for a loaded
// CI machine, reconnects quick, retries short.

#ifndef REDLOCK_TESTS_SUPPORT_TEST_OPTIONS_H_
#define REDLOCK_TESTS_SUPPORT_TEST_OPTIONS_H_

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "redlock/options.h"
#include "tests/support/redis_server.h"

namespace redlock::testing {

inline Options TestOptions(std::vector<std::string> masters) {
  Options options;
  options.masters = std::move(masters);
  options.request_timeout = absl::Milliseconds(300);
  options.connect_timeout = absl::Milliseconds(500);
  options.stalled_connection_timeout = absl::Seconds(3);
  options.reconnect.initial = absl::Milliseconds(10);
  options.reconnect.max = absl::Milliseconds(100);
  options.retry.min_delay = absl::Milliseconds(5);
  options.retry.max_delay = absl::Milliseconds(20);
  return options;
}

// The state of a deployment marker value ("trusted:1764470000123456" ->
// "trusted"); empty for no marker.
inline std::string MarkerState(const std::optional<std::string>& value) {
  if (!value.has_value()) return "";
  return value->substr(0, value->find(':'));
}

// The run_id `client`'s server reports in INFO server; empty if none.
inline absl::StatusOr<std::string> ServerRunId(RedisClient& client) {
  auto info = client.Command({"INFO", "server"});
  if (!info.ok()) return info.status();
  const size_t at = info->str.find("run_id:");
  if (at == std::string::npos) return std::string();
  const size_t end = info->str.find_first_of("\r\n", at);
  return info->str.substr(at + 7, end - at - 7);
}

// What an operator writes by hand to mark a master trusted
// (docs/failure-behaviour.md): "trusted:0:<run_id>", the server process it
// vouches for. Overwrites any marker.
inline absl::Status OperatorMarkTrusted(RedisClient& client) {
  absl::StatusOr<std::string> run_id = ServerRunId(client);
  if (!run_id.ok()) return run_id.status();
  return client
      .Command({"SET", "redlock:__deployment__", "trusted:0:" + *run_id})
      .status();
}

// The same, keeping the membership record the marker carries (everything
// from its first ';'), as docs/lifetime-and-fencing.md's re-mark does: a
// member of a deployment with records is vouched for without losing them.
inline absl::Status OperatorRemarkTrusted(RedisClient& client) {
  absl::StatusOr<std::string> run_id = ServerRunId(client);
  if (!run_id.ok()) return run_id.status();
  absl::StatusOr<std::optional<std::string>> now =
      client.Get("redlock:__deployment__");
  if (!now.ok()) return now.status();
  std::string record;
  if (now->has_value() && (*now)->find(';') != std::string::npos) {
    record = (*now)->substr((*now)->find(';'));
  }
  return client
      .Command({"SET", "redlock:__deployment__",
                "trusted:0:" + *run_id + record})
      .status();
}

// Marks every master of `cluster` as part of an existing deployment, as the
// first client that heard them all would have ("trusted:<server time>:
// <run_id>"). The restart guard trusts a brand-new deployment only once a
// client heard every master unmarked; a test that starts with some masters
// down or blackholed models a deployment that has existed before the fault.
inline absl::Status MarkDeploymentTrusted(const RedisCluster& cluster) {
  for (int i = 0; i < cluster.size(); ++i) {
    auto client = cluster.Client(i);
    if (!client.ok()) return client.status();
    absl::StatusOr<std::string> run_id = ServerRunId(**client);
    if (!run_id.ok()) return run_id.status();
    auto time = (*client)->Command({"TIME"});
    if (!time.ok()) return time.status();
    if (time->elements.size() != 2) {
      return absl::InternalError("unexpected reply to TIME");
    }
    const std::string micros =
        std::string(6 - std::min<size_t>(6, time->elements[1].str.size()),
                    '0') +
        time->elements[1].str;
    auto set = (*client)->Command(
        {"SET", "redlock:__deployment__",
         "trusted:" + time->elements[0].str + micros + ":" + *run_id, "NX"});
    if (!set.ok()) return set.status();
  }
  return absl::OkStatus();
}

}  // namespace redlock::testing

#endif  // REDLOCK_TESTS_SUPPORT_TEST_OPTIONS_H_
