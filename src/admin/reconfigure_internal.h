// Copyright 2026 The redlock Authors.
//
// What the three parts of `redlock reconfigure` share (reconfigure.h is the
// contract): reading and writing the servers (reconfigure_servers.cc), the
// fencing counters (reconfigure_counters.cc), and the pass that chooses and
// carries out a step (reconfigure.cc). Not for the tool: it uses
// reconfigure.h.

#ifndef REDLOCK_SRC_ADMIN_RECONFIGURE_INTERNAL_H_
#define REDLOCK_SRC_ADMIN_RECONFIGURE_INTERNAL_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "src/admin/reconfigure.h"
#include "src/algorithm/membership.h"
#include "src/algorithm/redis_reply.h"
#include "src/algorithm/scripts.h"

namespace redlock::admin::detail {

using internal::Membership;
using internal::RedisReply;
using Code = Outcome::Code;

bool IsString(const RedisReply& r);

bool IsError(const RedisReply& r);

std::string DescribeNow(const Server& s);

bool Contains(const std::vector<std::string>& sorted, const std::string& name);

// A write to one server: `target` over what it holds now.
struct Write {
  Server* server = nullptr;
  int index = 0;         // The server's, for ServerIo::Call().
  std::string expected;  // Its record text now ("" for none).
  Membership target;
  // The marker's state for a server that has none.
  absl::string_view state = internal::kTrustedMarker;
  // Outcome.
  bool done = false;
  bool refused = false;
  std::string detail;
};

Write WriteTo(std::vector<Server>& servers, Server& s,
              const Membership& target);

// Sends every write, in parallel.
void SendWrites(const Request& request, ServerIo& io,
                std::vector<Write>* writes, absl::Duration max_ttl);

// Plans writes of `target` to every reachable server whose record is older.
// A server without a marker is left to the clients' restart guard (it may
// have restarted without its data, and granted under a record before that),
// except the servers of `fresh_ok`: the joining servers at a begin, while
// the deployment is steady and no record has named them a member, so none
// of their grants has ever counted. From the begin on, a joining server
// without its marker is a restarted member like any other.
std::vector<Write> PlanWrites(std::vector<Server>& servers,
                              const Membership& target,
                              const std::vector<std::string>& fresh_ok,
                              std::vector<std::string>* skipped);

// How many servers of `group` carry `text` (after the writes).
int Carrying(const std::vector<Server>& servers,
             const std::vector<std::string>& group, const std::string& text,
             const std::vector<Write>& writes);

// Prints one line per server for `writes`, and one per reachable server
// that needs none, and one per unreachable server.
void PrintServerLines(Output& out, const std::vector<Server>& servers,
                      const std::vector<Write>& writes,
                      const Membership& target,
                      const std::vector<std::string>& skipped, bool dry_run,
                      bool sent);

// The wait of `joint` on the servers of its old members: how long each has
// still to wait (infinite: it does not carry `joint`), and how long until
// enough of them (|O| - quorum(O) + 1) have: then no quorum of O is left
// that granted under the epoch before.
struct WaitState {
  absl::Duration wait;
  std::map<std::string, absl::Duration> left;  // By member name.
  absl::Duration overall;  // <= 0: over. Infinite: cannot be over yet.
};

WaitState WaitLeft(const std::vector<Server>& servers, const Membership& joint,
                   absl::Duration max_ttl);

std::string Left(absl::Duration d);

// The fencing counters: the highest value of each on any reachable server.
struct Counters {
  std::map<std::string, uint64_t> highest;   // Key -> value.
  std::map<std::string, std::string> error;  // Server name -> why unread.
};

Counters ReadCounters(const Request& request, ServerIo& io,
                      const std::vector<Server>& servers);

// Raises every counter in `counters` on server `i` (FenceWriteCommand never
// lowers one). OK when every counter there is now at least the highest.
absl::Status RaiseCounters(ServerIo& io, int i, const Counters& counters);

// What every step of one pass shares.
struct PassState {
  const Request& request;
  ServerIo& io;
  Output& out;
  std::vector<Server>& servers;
  Membership current;  // The judged record.
  Membership target;   // What the step writes.
  absl::Duration max_ttl;

  const std::vector<std::string>& O() const { return request.masters; }
  const std::vector<std::string>& N() const { return request.to; }
  bool dry_run() const { return request.dry_run; }
};

Outcome Finished(Code code, Step step);

Outcome Again(Step step);

Outcome Refuse(Output& out, absl::string_view why, Step step = Step::kNone);

// Carries out `writes` (or, with dry_run, only prints them). Refused
// writes: kRefused.
Code Apply(PassState& p, std::vector<Write>& writes, const Membership& target,
           const std::vector<std::string>& skipped);

// Chooses the step for O -> N over `current`, and sets p.target; otherwise
// the refusal.
absl::StatusOr<Step> ChooseStep(PassState& p, const std::string& says);

// The operator's restore: every member without the record kept gets it,
// naming its process; one without a marker gets a `reborn` one (it lost its
// data: the clients' restart guard holds it back for max_ttl).
Outcome Restore(PassState& p, const absl::Status& why);

// Nothing to change; servers left behind by an earlier run (down then) get
// the record.
Outcome Steady(PassState& p);

Outcome Begin(PassState& p, const std::vector<std::string>& fresh_at_begin);

// The finish's counters: tokens after the change must exceed every token
// before. Every token was written to a quorum of the old members, so the
// highest read covers them all only when the read reaches |O| - quorum(O) +
// 1 old members whose counters hold every token written to them
// (WhyCountersIncomplete()): one in every old quorum. A member that lost
// data in a restart may hold none of a token that the members it shared a
// quorum with still hold (found by the simulation, seed 415 of
// reconfigure-lossy at --ttl_ms=1500: fence 2 issued twice). A server whose
// counters cannot be read stops the finish. kOk when enough new members
// hold them raised.
Code RaiseEveryCounter(PassState& p);

// The finish's wait, and its counters once it is over.
Outcome WaitAndRaise(PassState& p);

// finish or abort: first bring servers still before the joint epoch to it
// (an earlier begin that missed them).
Outcome FinishOrAbort(PassState& p, Step step);

}  // namespace redlock::admin::detail

#endif  // REDLOCK_SRC_ADMIN_RECONFIGURE_INTERNAL_H_
