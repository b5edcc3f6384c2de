// Copyright 2026 The redlock Authors.
//
// The reconfiguration protocol (docs/design.md, "The deployment's
// membership"; docs/failure-behaviour.md, "Changing the masters"): changes
// the deployment's member set, the record every deployment marker carries
// (src/algorithm/membership.h), from the list O (--masters) to N (--to)
// through a joint phase, one step per pass:
//
//   begin    steady(O) epoch e      -> joint(O->N) epoch e+1
//   finish   joint(O->N) epoch e+1  -> steady(N) epoch e+2, once every grant
//            made under epoch e has expired (max_ttl*1.01 + 2s + 1s on each
//            server's clock since it got e+1), after raising every fencing
//            counter on the new members to the highest any server holds
//   abort    joint(O->N) epoch e+1  -> steady(O) epoch e+2, at once
//   steady   nothing to change; servers an earlier pass missed catch up
//   restore  a record not known to be current (too few members carry it
//            kept) is written again on every member, only when asked with
//            O = N = its members and every server answers
//
// Every write is a compare-and-set on the record the server held when it
// was read (internal::ReconfigureCommand), so two passes at once cannot
// both change one server, and a pass run again skips the servers it
// already changed.
//
// What it talks through is the caller's: `redlock reconfigure`
// (tools/redlock/reconfigure.cc) over blocking connections, one thread per
// server (connection.h, ConnectionIo); the simulation's operator
// (tests/sim/sim_world.cc) over simulated servers at one instant. Example:
//
//   std::vector<admin::Server> servers = ...;  // O and N, one per member.
//   admin::Request request = ...;
//   for (;;) {
//     const admin::Outcome o = admin::Pass(request, io, out, &servers);
//     if (o.again) continue;                 // Servers caught up: look again.
//     if (o.code != admin::Outcome::Code::kConflict) break;
//     Sleep(o.retry_after);                  // The wait is not over.
//   }

#ifndef REDLOCK_SRC_ADMIN_RECONFIGURE_H_
#define REDLOCK_SRC_ADMIN_RECONFIGURE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "redlock/options.h"
#include "src/algorithm/membership.h"
#include "src/algorithm/persistence.h"
#include "src/algorithm/redis_reply.h"

namespace redlock::admin {

// How a pass reaches the servers. Server `i` is the i-th element of the
// pass's server list. Call() may run on the threads ForEach() uses, but
// never for one server on two threads at once.
class ServerIo {
 public:
  virtual ~ServerIo();

  // Sends `argv` to server `server` and returns its reply; an error reply
  // is a reply (RedisReply::Type::kError). Non-OK when the server could not
  // be asked or did not answer (kUnavailable, kDeadlineExceeded, ...): the
  // status's text goes into what the pass prints.
  virtual absl::StatusOr<internal::RedisReply> Call(
      int server, const std::vector<std::string>& argv) = 0;

  // Runs fn(i) for every i < n and returns once every call has returned.
  // fn(i) may run at once with fn(j); each touches its own server only.
  // The default runs them one after another.
  virtual void ForEach(size_t n, const std::function<void(size_t)>& fn);
};

// Where a pass's text goes. Every line is whole, without its newline.
class Output {
 public:
  virtual ~Output();

  // A line of the report (the tool's stdout).
  virtual void Line(absl::string_view text) = 0;
  // Why the pass did not do what was asked, starting "reconfigure: " (the
  // tool's stderr, after "redlock: ").
  virtual void Error(absl::string_view text) = 0;
};

// One server of O or N, and what a pass read from it. The caller fills in
// the first group; ReadServers() (and so Pass()) replaces the rest.
struct Server {
  std::string name;     // Its member name (MasterAddress::MemberName()).
  std::string address;  // How it is reached, for people: MasterAddress::Name().
  bool in_masters = false;
  bool in_to = false;

  bool reachable = false;
  absl::Status error;  // Why not reachable.
  std::string run_id;
  int64_t time_us = 0;  // Its TIME when read.
  std::optional<std::string> marker;
  int64_t max_ttl_ms = 0;     // The marker's own part, 4th field.
  std::string marker_state;   // Its 1st field: "trusted", "reborn", ...
  std::string marker_run_id;  // Its 3rd field: the process it was written to.
  // CONFIG GET appendonly, appendfsync, save; unknown if refused.
  internal::Persistence persistence;
  bool has_record = false;
  absl::Status record_error;  // A record that does not parse.
  std::string member;         // The record's member=.
  internal::Membership record;

  // "a:1", or "a (127.0.0.1:1)" when the name is not the address.
  std::string Label() const;
  // What it carries now: "" for no record.
  std::string RecordNow() const;
};

// `names` sorted and without repeats, as Request's lists must be.
std::vector<std::string> CanonicalMembers(std::vector<std::string> names);

// What a pass is asked to do.
struct Request {
  // The member names of --masters (O) and --to (N): canonical
  // (CanonicalMembers()), each a Server's name.
  std::vector<std::string> masters;
  std::vector<std::string> to;
  std::string marker_key;      // DeploymentMarkerKey(options).
  std::string counter_prefix;  // FenceCounterKey(options, ""): every counter's.
  Quorum quorum = Quorum::kMajority;  // Must be the record's.
  // The clients' max_ttl; a server's marker may name a longer one, which
  // wins.
  absl::Duration max_ttl = absl::Seconds(60);
  // Print what would be written; write nothing.
  bool dry_run = false;
  // TEST ONLY, and unsafe: the finish's and abort's catch-up passes the
  // joining servers as fresh, as the tool did before, so a joining server
  // that restarted empty during the joint phase (it may have granted under
  // the joint record) is marked trusted again at once. It exists so the
  // simulation (tests/sim) can show the double grant this allows; the front
  // end never sets it. Default: false.
  bool unsafe_trust_joining_after_begin = false;
};

// The step a pass took (kNone: it stopped before choosing one).
enum class Step { kNone, kBegin, kFinish, kAbort, kSteady, kRestore };

// "begin", "finish", ...
absl::string_view StepName(Step step);

// What one pass came to.
struct Outcome {
  enum class Code {
    kOk,           // Done (or, with dry_run, shown), or nothing to do.
    kConflict,     // The wait is not over: run again after retry_after.
    kRefused,      // The records do not allow the change, or changed meanwhile.
    kUnavailable,  // Too few servers answered; run again when they do.
  };
  Code code = Code::kOk;
  absl::Duration retry_after = absl::ZeroDuration();  // With kConflict.
  // Servers were written whose state the next step depends on (a catch-up,
  // a restore): read them all again with another pass, at once.
  bool again = false;
  Step step = Step::kNone;
};

// Reads every server of `*servers` in parallel through `io`: INFO server
// (run_id), GET `marker_key`, TIME; and parses the marker and its record.
// Replaces everything but each server's first group of fields. A server
// that fails a command is left not reachable, with the error.
void ReadServers(ServerIo& io, const std::string& marker_key,
                 std::vector<Server>* servers);

// The deployment's record as the servers show it.
struct Judged {
  // The highest epoch, without since and holder.
  internal::Membership record;
  // OK if a quorum of the record's members carries it kept
  // (internal::CurrentOnQuorum(); a record counts as kept only in the
  // process it was written to: a pass cannot see a server's persistence);
  // otherwise why not, as a client says it.
  absl::Status current;
};

// Why server `s`'s fencing counters may be older than tokens already
// issued, or "" if they hold every token written to it: its marker is
// `trusted` and names its running process (it has not restarted since it
// was marked; restamping a record keeps that part), or it restarted with
// AOF and appendfsync always. The engine's rule (RestartGuard::FenceVeto()), less
// what only a client that read the marker before can see. A `reborn` member's
// absent counter says nothing (only counters written back since it restarted
// are there); neither does an unmarked member's.
std::string WhyCountersIncomplete(const Server& s);

// Judges what `servers` (as read) carry. kFailedPrecondition naming both
// sides when they cannot be one deployment's (a record that does not parse,
// a member under another name, two deployments, two configurations at one
// epoch, no record at all, another quorum rule than `quorum`);
// kUnavailable when no reachable server carries a record and one did not
// answer. Pure.
absl::StatusOr<Judged> Judge(Quorum quorum, const std::vector<Server>& servers);

// One pass: reads every server, judges the record, chooses the step for
// `request`, prints it and one line per server to `out`, and carries it
// out through `io` (not with dry_run). `*servers` holds O and N, one per
// member name; on return it holds what was read. Never throws; every
// failure is in the outcome and on out.Error().
Outcome Pass(const Request& request, ServerIo& io, Output& out,
             std::vector<Server>* servers);

// "epoch 3 steady a,b,c" or "epoch 4 joint a,b,c -> a,b,d".
std::string Describe(const internal::Membership& m);

// "1.25s", "340ms", "0s", "forever": a duration for people, to the
// millisecond (the tool's format).
std::string Pretty(absl::Duration d);

}  // namespace redlock::admin

#endif  // REDLOCK_SRC_ADMIN_RECONFIGURE_H_
