// Copyright 2026 The redlock Authors.

#include "tools/redlock/elect.h"

#include <poll.h>
#include <string.h>

#include <cerrno>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/redlock/attempts.h"
#include "tools/redlock/child.h"
#include "tools/redlock/election_status.h"
#include "tools/redlock/output.h"
#include "tools/redlock/progress.h"
#include "tools/redlock/run.h"

namespace redlock::cli {
namespace {

// "election scheduler (epoch 7)", for messages.
std::string Describe(const Config& config, const Leadership& lead) {
  return absl::StrCat("election ", config.resource, " (epoch ", lead.epoch(),
                      ")");
}

// What the command learns of its leadership (docs/cli.md).
std::vector<std::string> LeadershipVariables(const Config& config,
                                             const Leadership& lead) {
  return {
      absl::StrCat(kEnvEpoch, "=", lead.epoch()),
      // The epoch is the lease's fencing token: whatever takes
      // REDLOCK_FENCE from `run --fencing` takes it from here too.
      absl::StrCat(kEnvFence, "=", lead.epoch()),
      absl::StrCat(kEnvToken, "=", lead.lock().token()),
      absl::StrCat(kEnvElection, "=", config.resource),
  };
}

// Resigns, saying how it went with --verbose only: a lease that could not
// be released everywhere expires with its TTL, as run's lock does.
void Resign(const Config& config, Redlock& client, const Leadership& lead) {
  const absl::StatusOr<ReleaseReport> report = client.Resign(lead);
  if (!report.ok()) {
    PrintDebug(config.verbosity,
               absl::StrCat("resigning from ", Describe(config, lead), ": ",
                            report.status().ToString(),
                            "; the lease expires with its TTL"));
    return;
  }
  PrintDebug(config.verbosity,
             absl::StrCat("resigned from ", Describe(config, lead), ": ",
                          report->released, " released, ", report->not_held,
                          " not held, ", report->failed, " failed, ",
                          report->pending, " no reply yet"));
}

// Campaigns until elected, the wait runs out or a terminating signal comes
// (which cancels the campaign through the WaitInterrupter). Returns the
// leadership, whose loss notifies `lost`; or nullopt after printing why,
// with the exit code in `*exit_code`. `what` says what is not done then.
std::optional<Leadership> Elect(const Config& config, Redlock& client,
                                SignalWatch& signals,
                                const std::shared_ptr<EventNotice>& lost,
                                absl::string_view what, int* exit_code) {
  // The progress display shows who holds the lease.
  const Config lease = LeaseOf(config);
  ProgressDisplay progress(lease, TimeoutsOf(config), MonotonicClock::now());
  WaitInterrupter interrupter(lease, signals, progress);

  CampaignOptions campaign;
  campaign.ttl = config.ttl;
  campaign.wait = config.wait;
  campaign.cancel = interrupter.cancel();
  campaign.on_lost = [lost](const absl::Status&) { lost->Notify(); };
  PrintDebug(config.verbosity,
             absl::StrCat("campaigning for election ", config.resource,
                          " as \"", absl::CHexEscape(config.value), "\" (",
                          config.wait == absl::InfiniteDuration()
                              ? "until elected"
                              : absl::StrCat("up to ", Pretty(config.wait)),
                          ")"));
  absl::StatusOr<Leadership> lead =
      client.Campaign(config.resource, config.value, std::move(campaign));
  int signo = interrupter.Finish();
  if (lead.ok()) {
    // A signal during the winning round: the user wanted out first.
    for (int s : signals.Drain()) {
      if (SignalWatch::IsTermination(s)) signo = s;
    }
    if (signo != 0) Resign(config, client, *lead);
  }
  if (signo != 0) {
    PrintInfo(
        config.verbosity,
        absl::StrCat("interrupted by ", SignalName(signo),
                     " while campaigning for election ", config.resource));
    *exit_code = kExitSignalBase + signo;
    return std::nullopt;
  }
  if (!lead.ok()) {
    *exit_code = AcquireFailure(config, lead.status(), what);
    return std::nullopt;
  }
  PrintDebug(config.verbosity,
             absl::StrCat("elected: ", Describe(config, *lead), ", valid for ",
                          Pretty(lead->remaining())));
  return *std::move(lead);
}

// Runs config.command while `lead` lasts, then resigns.
int RunWhileLeading(const Config& config, const std::string& path,
                    Redlock& client, SignalWatch& signals,
                    const Leadership& lead, EventNotice& lost) {
  Supervisor supervisor(config, signals, lost, [&] {
    return absl::StrCat("lost the leadership of ", Describe(config, lead),
                        " while the command ran (",
                        lead.lost_reason().ToString(), ")");
  });
  const absl::StatusOr<int> exit_code =
      supervisor.Run(path, ChildEnvironment(LeadershipVariables(config, lead)));
  Resign(config, client, lead);
  if (lead.lost()) {
    // Also when the loss came as the command exited: it may not have been
    // the only leader to the end.
    if (!supervisor.lost_reported()) {
      PrintError(absl::StrCat("lost the leadership of ", Describe(config, lead),
                              " while the command ran (",
                              lead.lost_reason().ToString(), ")"));
    }
    return kExitLost;
  }
  if (!exit_code.ok()) {
    PrintError(absl::StrCat("running the command as leader of ",
                            Describe(config, lead),
                            " failed: ", exit_code.status().ToString()));
    return kExitSoftware;
  }
  PrintDebug(config.verbosity,
             absl::StrCat("the command exited with ", *exit_code,
                          "; resigned from ", Describe(config, lead)));
  return *exit_code;
}

// Prints the leadership and leads until a terminating signal (then resigns,
// exit 0) or the loss (exit 76).
int HoldLeadership(const Config& config, Redlock& client, SignalWatch& signals,
                   const Leadership& lead, EventNotice& lost) {
  Print(LeaderLine(config, lead.info()));
  while (true) {
    pollfd fds[2] = {{signals.fd(), POLLIN, 0}, {lost.fd(), POLLIN, 0}};
    if (poll(fds, 2, -1) < 0 && errno != EINTR) {
      // Cannot happen with valid descriptors; do not spin.
      absl::SleepFor(absl::Milliseconds(10));
    }
    if (fds[1].revents & POLLIN) {
      lost.Clear();
      PrintError(absl::StrCat("lost the leadership of ", Describe(config, lead),
                              " (", lead.lost_reason().ToString(), ")"));
      Resign(config, client, lead);
      return kExitLost;
    }
    for (int signo : signals.Drain()) {
      if (!SignalWatch::IsTermination(signo)) continue;
      PrintDebug(config.verbosity,
                 absl::StrCat(SignalName(signo), ": resigning"));
      Resign(config, client, lead);
      return kExitOk;
    }
  }
}

// The leaders Observe() reports on the loop thread (where on_leader must
// not block, and writing to stdout may), handed to the thread that prints
// them. Thread-safe.
class LeaderQueue {
 public:
  int fd() const { return notice_.fd(); }
  void Push(const LeaderInfo& leader) {
    {
      std::lock_guard<std::mutex> guard(mu_);
      leaders_.push_back(leader);
    }
    notice_.Notify();
  }
  // Every leader pushed so far, oldest first.
  std::vector<LeaderInfo> Take() {
    notice_.Clear();
    std::lock_guard<std::mutex> guard(mu_);
    return std::exchange(leaders_, {});
  }

 private:
  EventNotice notice_;
  std::mutex mu_;
  std::vector<LeaderInfo> leaders_;  // Guarded by mu_.
};

// --listen: a line per leader, as Observe() reports them, until a
// terminating signal.
int Listen(const Config& config, Redlock& client, SignalWatch& signals) {
  auto queue = std::make_shared<LeaderQueue>();
  if (queue->fd() < 0) {
    PrintError(absl::StrCat("eventfd failed: ", strerrordesc_np(errno)));
    return kExitSoftware;
  }
  ObserveOptions observe;
  observe.on_leader = [queue](const LeaderInfo& leader) {
    queue->Push(leader);
  };
  absl::StatusOr<ObserveHandle> handle =
      client.Observe(config.resource, std::move(observe));
  if (!handle.ok()) {
    PrintError(handle.status().message());
    return absl::IsInvalidArgument(handle.status()) ? kExitUsage
                                                    : kExitSoftware;
  }
  PrintDebug(config.verbosity,
             absl::StrCat("listening to election ", config.resource));
  while (true) {
    pollfd fds[2] = {{signals.fd(), POLLIN, 0}, {queue->fd(), POLLIN, 0}};
    if (poll(fds, 2, -1) < 0 && errno != EINTR) {
      absl::SleepFor(absl::Milliseconds(10));
    }
    for (const LeaderInfo& leader : queue->Take()) {
      Print(LeaderLine(config, leader));
    }
    for (int signo : signals.Drain()) {
      if (!SignalWatch::IsTermination(signo)) continue;
      PrintDebug(config.verbosity,
                 absl::StrCat(SignalName(signo), ": stopped listening"));
      handle->Stop();
      return kExitOk;
    }
  }
}

// --leader: the leader once.
int ShowLeader(const Config& config, Redlock& client) {
  const absl::StatusOr<LeaderInfo> leader = client.Leader(config.resource);
  if (leader.ok()) {
    Print(LeaderLine(config, *leader));
    return kExitOk;
  }
  switch (leader.status().code()) {
    case absl::StatusCode::kNotFound:
      PrintInfo(config.verbosity,
                absl::StrCat("election ", config.resource, " has no leader"));
      return kExitNoLeader;
    case absl::StatusCode::kUnavailable:
      PrintError(absl::StrCat(
          "cannot tell the leader of election ", config.resource,
          ": no quorum of masters agrees (", leader.status().ToString(), ")"));
      return kExitUnavailable;
    case absl::StatusCode::kInvalidArgument:
      PrintError(leader.status().message());
      return kExitUsage;
    default:
      PrintError(absl::StrCat("cannot tell the leader of election ",
                              config.resource, ": ",
                              leader.status().ToString()));
      return kExitSoftware;
  }
}

}  // namespace

std::string LeaderLine(const Config& config, const LeaderInfo& leader) {
  if (config.json) {
    Json json;
    json["name"] = leader.name;
    json["epoch"] = leader.epoch;
    json["revision"] = leader.revision;
    json["value"] = leader.value;
    return JsonLine(json);
  }
  // The value last and C-escaped, so that the line stays one line and
  // everything after "value=" is the value.
  return absl::StrCat("name=", leader.name, " epoch=", leader.epoch,
                      " revision=", leader.revision,
                      " value=", absl::CHexEscape(leader.value), "\n");
}

int ElectCommand(const Config& config, const std::string& path, Redlock& client,
                 SignalWatch* signals) {
  if (config.leader) return ShowLeader(config, client);
  if (config.listen) return Listen(config, client, *signals);

  auto lost = std::make_shared<EventNotice>();
  if (lost->fd() < 0) {
    PrintError(absl::StrCat("eventfd failed: ", strerrordesc_np(errno)));
    return kExitSoftware;
  }
  const bool runs = !config.command.empty();
  int exit_code = kExitSoftware;
  const std::optional<Leadership> lead =
      Elect(config, client, *signals, lost,
            runs ? "not running the command" : "not elected", &exit_code);
  if (!lead.has_value()) return exit_code;
  // Lost between the election and now (a slow start): never start.
  if (lead->lost()) {
    PrintError(absl::StrCat("lost the leadership of ", Describe(config, *lead),
                            " before it could be used (",
                            lead->lost_reason().ToString(), ")"));
    Resign(config, client, *lead);
    return kExitLost;
  }
  return runs ? RunWhileLeading(config, path, client, *signals, *lead, *lost)
              : HoldLeadership(config, client, *signals, *lead, *lost);
}

}  // namespace redlock::cli
