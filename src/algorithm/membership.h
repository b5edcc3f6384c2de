// Copyright 2026 The redlock Authors.
//
// The deployment's membership: which servers make up the deployment, so that
// two clients configured with different lists of masters (a rolling change
// of one master) cannot both win by each counting a majority of its own
// list.
//
// Every master's deployment marker carries, after its own state, a record of
// the deployment's configuration:
//
//   trusted:<time>:<run_id>:<max_ttl>;member=<name>;deployment=<id>;
//       epoch=<n>;members=<a>,<b>,<c>;next=<d>,...;quorum=majority;
//       since=<server time µs>
//
// `member` is this server's name in the deployment (the address the client
// that admitted it configured, or its ?member= name); `members` is the
// deployment's member set, sorted; `next` is empty except during a
// reconfiguration (joint consensus): then every grant needs a quorum of
// `members` and a quorum of `next`. `epoch` grows by one with every change;
// `since` is when this server got this epoch, on its own clock. Everything
// but `member` and `since` is the same on every master of one configuration.
//
// Pure functions only; the engine (engine.cc) applies them.

#ifndef REDLOCK_SRC_ALGORITHM_MEMBERSHIP_H_
#define REDLOCK_SRC_ALGORITHM_MEMBERSHIP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "redlock/options.h"

namespace redlock::internal {

// A client reads every master's record again when it last read it more
// than kMembershipRefresh ago (queued ahead of an attempt's commands), and a
// grant counts only from a master whose record it read within
// kMembershipStale: so a client acts under a record at most kMembershipStale
// old, and `redlock reconfigure` waits max_ttl + kMembershipStale after a
// change before the next one.
inline constexpr absl::Duration kMembershipRefresh = absl::Seconds(1);
inline constexpr absl::Duration kMembershipStale = absl::Seconds(2);

// One configuration of a deployment.
struct Membership {
  std::string deployment;            // Its id: 16 hex digits.
  int64_t epoch = 0;                 // 1 for a new deployment.
  std::vector<std::string> members;  // Sorted, distinct, non-empty.
  std::vector<std::string> next;     // Sorted, distinct; non-empty: joint.
  Quorum quorum = Quorum::kMajority;
  int64_t since_us = 0;  // When this server got it (its clock); 0 unknown.
  // The run_id of the server process it was written to ("holder=", beside
  // `member`), empty if the record does not say (one written before records
  // said so). A server whose run_id is another one restarted since, and may
  // carry an older record than it was given (an RDB snapshot, a lost AOF
  // tail): see RecordKept().
  std::string holder;

  bool joint() const { return !next.empty(); }
};

// The configuration as text, the same on every master that carries it:
// "deployment=..;epoch=..;members=..;next=..;quorum=.." (no `since`). Two
// records are the same configuration exactly when their texts are equal.
std::string RecordText(const Membership& record);
// What the library writes after a marker's state: ";member=<name>;",
// ";holder=<run_id>;" if `holder` is not empty, and the record text (the
// marker script appends ";since=<TIME>"). `holder` is the run_id of the
// server the suffix is written to, as read on the connection it is sent on.
std::string MarkerSuffix(absl::string_view member, const Membership& record,
                         absl::string_view holder = {});
// Whether a server's record is the last one written to it: it names the
// server process that carries it now (`run_id`), or, without a holder, the
// marker does (`marker_run_id`, the process the marker was written to; a
// record is only ever written to a process that kept its marker), or the
// server keeps every acknowledged write across a restart (`durable`). A
// record that is not kept may have gone back to an older epoch with a
// restart, and is no evidence of the deployment's configuration.
bool RecordKept(const Membership& record, absl::string_view marker_run_id,
                absl::string_view run_id, bool durable);
// Parses the part of a marker after its first ';' (without the ';'). Unknown
// fields are ignored (a later version may add some); a missing or malformed
// required one is kInvalidArgument naming it. Pure: the bytes are the
// master's, untrusted.
absl::Status ParseMarkerRecord(absl::string_view suffix, std::string* member,
                               Membership* record);

// OK if `name` can name a member: 1-255 printable ASCII characters, none of
// space ; , = |. Otherwise kInvalidArgument saying why.
absl::Status CheckMemberName(absl::string_view name);
// The masters a grant needs out of `size` members under `quorum`.
int QuorumOf(int size, Quorum quorum);
// "a,b,c"; "(none)" for an empty list.
std::string JoinMembers(const std::vector<std::string>& members);
// Sorted and without repeats.
std::vector<std::string> Canonical(std::vector<std::string> names);
// The sorted union of two canonical lists.
std::vector<std::string> Union(const std::vector<std::string>& a,
                               const std::vector<std::string>& b);
// A new deployment's id: the first 16 hex digits of the SHA-1 of its first
// record's members and quorum. Deterministic, so that two clients
// bootstrapping (or upgrading) one deployment with one list at once write
// one record, not two that conflict; clients with different lists write
// different ids, and each refuses the other's.
std::string NewDeploymentId(const std::vector<std::string>& members,
                            Quorum quorum);

// Whether a client configured with `list` (the member names of its masters
// heard from, canonical, one per server) and `unknown` masters not heard from
// yet may act under `record`: in a steady record only the list of its
// members; during a reconfiguration the old list, the new one, or both
// together — each possibly short of up to `unknown` names, never with a name
// outside it. Otherwise kFailedPrecondition naming both lists and what to
// do. (Safety does not rest on this check: quorums are counted over the
// record's members. It makes a wrong list loud.) Pure.
absl::Status CheckList(const Membership& record,
                       const std::vector<std::string>& list, int unknown = 0);

// What one master's marker says, as the engine last read it.
struct MemberView {
  bool known = false;         // A handshake completed.
  bool marked = false;        // It carries a deployment marker.
  bool has_record = false;    // ...with a membership record that parsed.
  absl::Status record_error;  // Why a record it carries did not parse.
  std::string member;         // The marker's member name.
  Membership record;
  // RecordKept(): the record has not gone back with a restart. For a
  // marker without a record: the marker has not (same process, or durable).
  bool kept = false;
  // The record names the process that carries it now (RecordKept() without
  // durability): when not, it is written again, naming this process.
  bool holder_current = false;
};

// The membership this client acts under, and each master's standing in it.
struct MembershipJudgement {
  // The record this client acts under: the highest epoch its masters carry,
  // if they agree on the deployment and on that epoch's configuration. It is
  // written to a master (needs_record), and a master without a kept record
  // of its own counts, only if it is known to be current: a quorum of each
  // of its groups carries it kept (CurrentOnQuorum()).
  std::optional<Membership> adopted;
  // OK: master i may vote under `adopted` (or no master carries a record
  // yet). Otherwise kFailedPrecondition saying why its grants do not count.
  std::vector<absl::Status> standing;
  // Master i carries no record, or a record that is not kept, but is a
  // member of `adopted`: the engine writes the record to it (with its
  // marker, or over the record it carries).
  std::vector<bool> needs_record;
};

// OK if `record` is known to be the deployment's current configuration: a
// quorum (under the record's own rule) of its members — and, during a change,
// of its new members too — carries it, each kept (`kept[i]` and `names[i]`
// for master i, `carries[i]` if master i's record is `record`; one server
// counts once). A record moves forward only by a write to a quorum-crossing
// set of its members (`redlock reconfigure`), and goes back only with a
// restart that RecordKept() sees, so a record superseded by a finished
// change has no such quorum. Otherwise kFailedPrecondition saying how many
// carry it and why the others do not count. Pure.
absl::Status CurrentOnQuorum(const Membership& record,
                             const std::vector<std::string>& names,
                             const std::vector<bool>& carries,
                             const std::vector<bool>& kept);

// Judges `views` (one per configured master) against this client's
// configured member names (`names[i]` for master i) and its list
// (`list`: the names of the masters heard from, canonical, one per server;
// `unknown` masters not heard from yet). Fail closed: masters of
// two deployments, two configurations at one epoch, an unreadable record, a
// list the record does not allow — every master's grants stop counting. A
// master with no record, or one it may not have kept (RecordKept()), counts
// and is given the record only once the record is known to be current
// (CurrentOnQuorum()); until then it casts no grant.
// (`quorum`, this client's rule, needs no agreement with the record's.) A
// master whose marker names it differently than this client does, or that
// is not a member, or that carries no record while others do, casts no
// grant. Pure.
// `trust_unknown_records`: TEST ONLY, and unsafe — the rule from before a
// record had to be known current: a member without a kept record counts and
// is given the record even when CurrentOnQuorum() says it is not known to
// be current. It exists so the simulation (tests/sim) can show the double
// grant of a client that hears only servers left behind by a change
// (RuleOverrides::TrustUnknownRecords(), tests/sim/unsafe_rules.h); the
// library passes false. Default: false.
MembershipJudgement JudgeMembership(const std::vector<MemberView>& views,
                                    const std::vector<std::string>& names,
                                    const std::vector<std::string>& list,
                                    Quorum quorum, int unknown = 0,
                                    bool guard_judges_unmarked = false,
                                    bool trust_unknown_records = false);

// The groups a grant needs a quorum of: under a steady record its members;
// during a reconfiguration the old members and the new ones, each with its
// own quorum. `size` counts every member of the group, including those this
// client has no address for (they count as failed votes).
struct QuorumGroup {
  std::vector<bool> in;  // Per configured master: a member of the group.
  int size = 0;
  int quorum = 0;
};
// `rule`: the client's quorum rule (default: the record's, the rule of the
// client that made the deployment).
std::vector<QuorumGroup> QuorumGroups(
    const Membership& record, const std::vector<std::string>& names,
    std::optional<Quorum> rule = std::nullopt);
// True if the two are the same groups.
bool SameGroups(const std::vector<QuorumGroup>& a,
                const std::vector<QuorumGroup>& b);
// True if `granted` (per configured master) holds a quorum of every group.
bool QuorumOfEvery(const std::vector<QuorumGroup>& groups,
                   const std::vector<bool>& granted);

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ALGORITHM_MEMBERSHIP_H_
