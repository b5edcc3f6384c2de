// Copyright 2026 The redlock Authors.
//
// One pass of `redlock reconfigure`: the step the servers call for (begin,
// wait, finish, abort, restore), carried out.

#include "src/admin/reconfigure.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "src/admin/reconfigure_internal.h"
#include "src/algorithm/membership.h"
#include "src/algorithm/scripts.h"

namespace redlock::admin {

using internal::Membership;
using internal::RedisReply;
using Code = Outcome::Code;

std::vector<std::string> CanonicalMembers(std::vector<std::string> names) {
  return internal::Canonical(std::move(names));
}

namespace detail {
Outcome Finished(Code code, Step step) {
  Outcome o;
  o.code = code;
  o.step = step;
  return o;
}

Outcome Again(Step step) {
  Outcome o = Finished(Code::kOk, step);
  o.again = true;
  return o;
}

Outcome Refuse(Output& out, absl::string_view why, Step step) {
  out.Error(absl::StrCat("reconfigure: ", why));
  return Finished(Code::kRefused, step);
}

// Carries out `writes` (or, with dry_run, only prints them). Refused
// writes: kRefused.
Code Apply(PassState& p, std::vector<Write>& writes, const Membership& target,
           const std::vector<std::string>& skipped) {
  if (!p.dry_run()) SendWrites(p.request, p.io, &writes, p.max_ttl);
  PrintServerLines(p.out, p.servers, writes, target, skipped, p.dry_run(),
                   /*sent=*/!p.dry_run());
  for (const Write& w : writes) {
    if (w.refused) {
      p.out.Error(absl::StrCat(
          "reconfigure: ", w.server->Label(),
          "'s record changed while reconfiguring (another reconfigure at "
          "once?); run it again to see the new state: ",
          w.detail));
      return Code::kRefused;
    }
  }
  return Code::kOk;
}

// Chooses the step for O -> N over `current`, and sets p.target; otherwise
// the refusal.
absl::StatusOr<Step> ChooseStep(PassState& p, const std::string& says) {
  const Membership& current = p.current;
  const std::vector<std::string>& O = p.O();
  const std::vector<std::string>& N = p.N();
  const std::string asked =
      absl::StrCat("asked: --masters ", internal::JoinMembers(O), " --to ",
                   internal::JoinMembers(N));
  Membership& target = p.target;
  target = current;
  target.since_us = 0;
  if (!current.joint()) {
    if (current.members == N) return Step::kSteady;
    if (current.members == O) {
      target.epoch = current.epoch + 1;
      target.next = N;
      return Step::kBegin;
    }
    return absl::FailedPreconditionError(absl::StrCat(
        says, "; ", asked, ": --masters must name the current members (",
        internal::JoinMembers(current.members), ")"));
  }
  const std::vector<std::string> both =
      internal::Union(current.members, current.next);
  if (O != current.members && O != current.next && O != both) {
    return absl::FailedPreconditionError(absl::StrCat(
        says, "; ", asked,
        ": during a change --masters must name the old members, the new "
        "ones or both"));
  }
  Step step;
  if (N == current.next) {
    step = Step::kFinish;
  } else if (N == current.members) {
    step = Step::kAbort;
  } else {
    return absl::FailedPreconditionError(absl::StrCat(
        says, "; ", asked, ": --to must be the new members (",
        internal::JoinMembers(current.next), ") to finish, or the old (",
        internal::JoinMembers(current.members), ") to abort"));
  }
  target.epoch = current.epoch + 1;
  target.members = N;
  target.next.clear();
  return step;
}

// The operator's restore: every member without the record kept gets it,
// naming its process; one without a marker gets a `reborn` one (it lost its
// data: the clients' restart guard holds it back for max_ttl).
Outcome Restore(PassState& p, const absl::Status& why) {
  const Membership& current = p.current;
  std::vector<Write> writes;
  const std::string text = internal::RecordText(current);
  for (Server& s : p.servers) {
    if (!Contains(current.members, s.name)) continue;
    if (s.has_record && internal::RecordText(s.record) == text &&
        internal::RecordKept(s.record, s.marker_run_id, s.run_id,
                             /*durable=*/false)) {
      continue;
    }
    Write w = WriteTo(p.servers, s, current);
    if (!s.marker.has_value()) w.state = internal::kRebornMarker;
    writes.push_back(std::move(w));
  }
  p.out.Line(absl::StrCat("step: restore: ", Describe(current),
                          " on every member that lost it (", why.message(),
                          ")"));
  const Code code = Apply(p, writes, current, {});
  if (code != Code::kOk || p.dry_run()) return Finished(code, Step::kRestore);
  return Again(Step::kRestore);
}

// Nothing to change; servers left behind by an earlier run (down then) get
// the record.
Outcome Steady(PassState& p) {
  std::vector<std::string> skipped;
  std::vector<Write> writes = PlanWrites(p.servers, p.current, {}, &skipped);
  if (writes.empty()) {
    p.out.Line(absl::StrCat("nothing to do: the deployment's members are ",
                            internal::JoinMembers(p.N())));
    PrintServerLines(p.out, p.servers, writes, p.current, skipped, p.dry_run(),
                     false);
    return Finished(Code::kOk, Step::kSteady);
  }
  p.out.Line(absl::StrCat("step: catch up: ", Describe(p.current),
                          " on the servers an earlier run missed"));
  return Finished(Apply(p, writes, p.current, skipped), Step::kSteady);
}

Outcome Begin(PassState& p, const std::vector<std::string>& fresh_at_begin) {
  const Membership& current = p.current;
  const Membership& target = p.target;
  const std::vector<std::string>& O = p.O();
  const std::vector<std::string>& N = p.N();
  p.out.Line(absl::StrCat("step: begin: ", Describe(target)));
  std::vector<std::string> skipped;
  std::vector<Write> writes =
      PlanWrites(p.servers, target, fresh_at_begin, &skipped);
  // Enough old members must take the joint record that no quorum of them
  // is left at the old epoch; when too few answer, write nothing.
  const int old_size = static_cast<int>(O.size());
  const int needed = old_size - internal::QuorumOf(old_size, target.quorum) + 1;
  int old_writable = 0;
  for (const Server& s : p.servers) {
    if (Contains(O, s.name) && s.reachable && s.marker.has_value()) {
      ++old_writable;
    }
  }
  if (old_writable < needed) {
    PrintServerLines(p.out, p.servers, writes, target, skipped, p.dry_run(),
                     /*sent=*/false);
    p.out.Error(absl::StrCat(
        "reconfigure: begin needs ", needed, " of the ", old_size,
        " old members (so that no quorum of them is left at epoch ",
        current.epoch, "); ", old_writable,
        " answered with a marker; nothing written"));
    return Finished(Code::kUnavailable, Step::kBegin);
  }
  if (const Code code = Apply(p, writes, target, skipped); code != Code::kOk) {
    return Finished(code, Step::kBegin);
  }
  const std::string text = internal::RecordText(target);
  const int on_old = Carrying(p.servers, O, text, writes);
  int new_reachable = 0;
  for (const Server& s : p.servers) {
    if (Contains(N, s.name) && s.reachable) ++new_reachable;
  }
  const int on_new = Carrying(p.servers, N, text, writes);
  const WaitState wait = WaitLeft(p.servers, target, p.max_ttl);
  if (p.dry_run()) {
    p.out.Line(absl::StrCat("then: wait ", Pretty(wait.wait),
                            " (max_ttl*1.01 + 2s + 1s) on the old members' "
                            "clocks, and run again to finish"));
    return Finished(Code::kOk, Step::kBegin);
  }
  if (on_old < needed || on_new < new_reachable) {
    p.out.Error(absl::StrCat(
        "reconfigure: begin reached ", on_old, " of ", old_size,
        " old members (", needed,
        " needed, so that no quorum of them is "
        "left at epoch ",
        current.epoch, ") and ", on_new, " of the ", new_reachable,
        " reachable new members (all needed); run it again when they "
        "answer"));
    return Finished(Code::kUnavailable, Step::kBegin);
  }
  p.out.Line(absl::StrCat("begun: ", Describe(target), " on ", on_old, "/",
                          old_size, " old and ", on_new, "/", N.size(),
                          " new members; run the same command again in ",
                          Pretty(wait.wait),
                          " to finish (--wait sleeps until "
                          "then)"));
  return Finished(Code::kOk, Step::kBegin);
}

// The finish's wait, and its counters once it is over.
Outcome WaitAndRaise(PassState& p) {
  const WaitState wait = WaitLeft(p.servers, p.current, p.max_ttl);
  p.out.Line(absl::StrCat("step: finish: ", Describe(p.target), " (wait ",
                          Pretty(wait.wait),
                          " = max_ttl*1.01 + 2s + 1s since each old member "
                          "got epoch ",
                          p.current.epoch, ")"));
  for (const auto& [member, left] : wait.left) {
    p.out.Line(absl::StrCat("  wait on ", member, ": ", Left(left)));
  }
  if (wait.overall > absl::ZeroDuration()) {
    if (wait.overall == absl::InfiniteDuration()) {
      p.out.Error(absl::StrCat(
          "reconfigure: too few old members carry ", Describe(p.current),
          " for the wait to end; run it again when they answer"));
      return Finished(Code::kUnavailable, Step::kFinish);
    }
    // Bounded by the wait itself, whatever the clocks say.
    Outcome o = Finished(Code::kConflict, Step::kFinish);
    o.retry_after = std::min(wait.overall, wait.wait);
    return o;
  }
  return Finished(RaiseEveryCounter(p), Step::kFinish);
}

// finish or abort: first bring servers still before the joint epoch to it
// (an earlier begin that missed them).
Outcome FinishOrAbort(PassState& p, Step step) {
  std::vector<std::string> skipped;
  std::vector<Write> catch_up = PlanWrites(p.servers, p.current, {}, &skipped);
  if (p.request.unsafe_trust_joining_after_begin) {
    // Unsafe, test only (see the field): the joining servers as fresh.
    std::vector<std::string> joining;
    for (const std::string& n : p.current.next) {
      if (!Contains(p.current.members, n)) joining.push_back(n);
    }
    skipped.clear();
    catch_up = PlanWrites(p.servers, p.current, joining, &skipped);
  }
  if (!catch_up.empty()) {
    p.out.Line(absl::StrCat("step: catch up: ", Describe(p.current),
                            " on the servers begin missed"));
    if (const Code code = Apply(p, catch_up, p.current, skipped);
        code != Code::kOk) {
      return Finished(code, step);
    }
    // Their `since` is the servers' now; read them again.
    if (!p.dry_run()) return Again(step);
  }

  if (step == Step::kFinish) {
    const Outcome waited = WaitAndRaise(p);
    if (waited.code != Code::kOk) return waited;
  } else {
    p.out.Line(absl::StrCat("step: abort: ", Describe(p.target),
                            " (no wait: every quorum of the joint phase "
                            "holds a quorum of the old members)"));
  }

  const Membership& target = p.target;
  skipped.clear();
  std::vector<Write> writes = PlanWrites(p.servers, target, {}, &skipped);
  if (const Code code = Apply(p, writes, target, skipped); code != Code::kOk) {
    return Finished(code, step);
  }
  if (p.dry_run()) return Finished(Code::kOk, step);
  const int on_target =
      Carrying(p.servers, target.members, internal::RecordText(target), writes);
  const int target_size = static_cast<int>(target.members.size());
  if (on_target < internal::QuorumOf(target_size, target.quorum)) {
    p.out.Error(absl::StrCat("reconfigure: ", StepName(step), " reached ",
                             on_target, " of ", target_size,
                             " members; run it again when they answer"));
    return Finished(Code::kUnavailable, step);
  }
  p.out.Line(absl::StrCat(
      step == Step::kFinish ? "finished: " : "aborted: ", Describe(target),
      " on ", on_target, "/", target_size, " members"));
  return Finished(Code::kOk, step);
}

}  // namespace detail

using namespace detail;  // NOLINT: this file's own helpers.

Outcome Pass(const Request& request, ServerIo& io, Output& out,
             std::vector<Server>* servers_in) {
  std::vector<Server>& servers = *servers_in;
  ReadServers(io, request.marker_key, &servers);
  absl::StatusOr<Judged> judged = Judge(request.quorum, servers);
  if (absl::IsUnavailable(judged.status())) {
    out.Error(absl::StrCat("reconfigure: ", judged.status().message()));
    return Finished(Code::kUnavailable, Step::kNone);
  }
  if (!judged.ok()) return Refuse(out, judged.status().message());
  PassState p{request, io, out, servers, judged->record, {}, request.max_ttl};
  const Membership& current = p.current;
  for (const Server& s : servers) {
    p.max_ttl = std::max(p.max_ttl, absl::Milliseconds(s.max_ttl_ms));
  }
  const std::vector<std::string>& O = p.O();
  const std::vector<std::string>& N = p.N();
  const std::string says =
      absl::StrCat("the servers say deployment ", current.deployment, " ",
                   Describe(current));
  const absl::StatusOr<Step> chosen = ChooseStep(p, says);
  if (!chosen.ok()) return Refuse(out, chosen.status().message());
  const Step step = *chosen;

  int reachable = 0;
  for (const Server& s : servers) reachable += s.reachable ? 1 : 0;
  if (!judged->current.ok()) {
    // Not known to be current: the servers that carry it may have been
    // left behind by a change (down through it, or back from an older
    // snapshot). Nothing is written on its word, unless the operator names
    // it as the deployment's members both ways and every server answers.
    const std::string hint = absl::StrCat(
        "; if the deployment's members are ",
        internal::JoinMembers(current.members),
        " (no change of masters since these servers lost their records), "
        "`redlock reconfigure --masters=<them> --to=<them>` writes the record "
        "again on every member once all of them answer");
    for (const Server& s : servers) {
      if (s.reachable) continue;
      out.Error(absl::StrCat("reconfigure: ", judged->current.message(), "; ",
                             s.Label(), " did not answer (", s.error.ToString(),
                             "): run it again when the servers answer", hint));
      return Finished(Code::kUnavailable, Step::kNone);
    }
    if (step != Step::kSteady || O != N) {
      return Refuse(out, absl::StrCat(judged->current.message(), hint), step);
    }
  }
  out.Line(absl::StrCat(request.dry_run ? "dry run: " : "", says, "; max_ttl ",
                        Pretty(p.max_ttl), "; ", reachable, "/", servers.size(),
                        " servers reachable"));
  if (!judged->current.ok()) return Restore(p, judged->current);

  // At a begin, joining servers with no marker get a trusted one: no record
  // has named them a member yet, so no grant of theirs has counted. Every
  // other server without a marker (an old member, or a joining one once the
  // joint record exists: it may have granted under it and restarted empty
  // since) is left to the clients' restart guard.
  const std::vector<std::string> fresh_at_begin = [&] {
    std::vector<std::string> fresh;
    if (step != Step::kBegin) return fresh;
    for (const std::string& n : N) {
      if (!Contains(current.members, n)) fresh.push_back(n);
    }
    return fresh;
  }();

  switch (step) {
    case Step::kSteady:
      return Steady(p);
    case Step::kBegin:
      return Begin(p, fresh_at_begin);
    default:
      return FinishOrAbort(p, step);
  }
}

}  // namespace redlock::admin
