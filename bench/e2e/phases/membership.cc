// Copyright 2026 The redlock Authors.
//
// Membership phase: what a reconfiguration in progress costs an acquisition.
// Four masters A, B, C, D (the first four of the run) carry three
// deployments, each under a key prefix of its own:
//
//   steady N=3    bootstrapped by a client of A,B,C: steady record, epoch 1,
//                 members A,B,C. Its client: A,B,C (a quorum of 2 of 3).
//   joint         bootstrapped the same way, then moved to the joint record
//                 of a change A,B,C -> A,B,D (epoch 2, members A,B,C, next
//                 A,B,D) with internal::ReconfigureCommand sent with EVAL, as
//                 `redlock reconfigure` writes it: the deployment id and the
//                 current record text are read back from A's marker. Its
//                 client: A,B,C,D, the union of both lists; every grant
//                 needs 2 of A,B,C and 2 of A,B,D (the second quorum).
//   steady N=4    bootstrapped by a client of A,B,C,D: steady, members
//                 A,B,C,D (3 of 4). Not a membership state anyone passes
//                 through: it separates the cost of a fourth master's round
//                 trip from the cost of counting two quorums.
//
// Whole acquire + release cycles (as the latency phase), of AsyncRedlock on
// the bench thread and of the blocking Redlock, in interleaved rounds: in
// each, every configuration runs a block right after a floor block of the
// same size, in an order that rotates. Before the first block and after the
// last one every master's marker is read and parsed: the phase fails unless
// the three deployments carry the records above.
//
// Reports results.json's "membership".

#include "src/algorithm/membership.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "bench/e2e/async_runner.h"
#include "bench/e2e/blocking_runner.h"
#include "bench/e2e/common.h"
#include "bench/e2e/json.h"
#include "bench/e2e/masters.h"
#include "bench/e2e/phase.h"
#include "bench/e2e/report.h"
#include "bench/e2e/runner.h"
#include "bench/e2e/stats.h"
#include "bench/e2e/sync_client.h"
#include "redlock/keys.h"
#include "redlock/options.h"
#include "src/algorithm/scripts.h"

ABSL_FLAG(int, membership_rounds, 16,
          "Membership phase: interleaved rounds; each round runs, for every "
          "configuration, a floor block and then the configuration's block.");
ABSL_FLAG(int, membership_block, 300,
          "Membership phase: lock cycles per block.");

namespace redlock::bench {
namespace {

constexpr int kMasters = 4;  // A, B, C, D: masters[0..3].

// The three deployments (one key prefix each).
enum class Deployment { kSteady3, kJoint, kSteady4 };

const char* DeploymentName(Deployment d) {
  switch (d) {
    case Deployment::kSteady3:
      return "steady A,B,C";
    case Deployment::kJoint:
      return "joint A,B,C -> A,B,D";
    case Deployment::kSteady4:
      return "steady A,B,C,D";
  }
  return "";
}

std::string PrefixOf(Deployment d) {
  switch (d) {
    case Deployment::kSteady3:
      return absl::StrCat(kKeyPrefix, "membership-steady3:");
    case Deployment::kJoint:
      return absl::StrCat(kKeyPrefix, "membership-joint:");
    case Deployment::kSteady4:
      return absl::StrCat(kKeyPrefix, "membership-steady4:");
  }
  return "";
}

struct MembershipConfig {
  std::string name;    // "async, joint A,B,C -> A,B,D"
  std::string client;  // async, blocking
  Deployment deployment = Deployment::kSteady3;
  int masters = 3;  // The client's list: masters[0..masters-1].
  std::unique_ptr<Runner> runner;
  Samples own;
  Samples floor;                        // The floor blocks right before.
  std::vector<double> block_p50;        // One per round, in round order.
  std::vector<double> round_ratio_p50;  // Block p50 / preceding floor p50.
};

// One master's marker under one prefix, as read and parsed.
struct MarkerRead {
  bool present = false;
  std::string value;
  std::string state;
  std::string run_id;
  int64_t max_ttl_ms = 0;
  bool has_record = false;
  std::string member;
  internal::Membership record;
};

absl::StatusOr<MarkerRead> ReadMarker(const Master& m, const std::string& key) {
  absl::StatusOr<ContextPtr> c = ConnectSync(m.address);
  if (!c.ok()) return c.status();
  absl::StatusOr<ReplyPtr> r = SyncCommand(c->get(), {"GET", key});
  if (!r.ok()) return r.status();
  MarkerRead out;
  if ((*r)->type == REDIS_REPLY_NIL) return out;
  if ((*r)->type != REDIS_REPLY_STRING) {
    return absl::InternalError(absl::StrCat(
        "GET ", key, " on ", m.address.Name(), ": ", DescribeReply(r->get())));
  }
  out.present = true;
  out.value.assign((*r)->str, (*r)->len);
  int64_t time_us = 0;
  std::optional<std::string> record;
  internal::ParseMarker(out.value, &out.state, &time_us, &out.run_id,
                        &out.max_ttl_ms, &record);
  if (record.has_value()) {
    if (absl::Status s =
            internal::ParseMarkerRecord(*record, &out.member, &out.record);
        !s.ok()) {
      return absl::InternalError(absl::StrCat("marker on ", m.address.Name(),
                                              " \"", out.value,
                                              "\": ", s.message()));
    }
    out.has_record = true;
  }
  return out;
}

absl::Status DeleteKey(const Master& m, const std::string& key) {
  absl::StatusOr<ContextPtr> c = ConnectSync(m.address);
  if (!c.ok()) return c.status();
  absl::StatusOr<ReplyPtr> r = SyncCommand(c->get(), {"DEL", key});
  return r.ok() ? absl::OkStatus() : r.status();
}

class MembershipPhase : public Phase {
 public:
  explicit MembershipPhase(bool quick)
      : rounds_(quick ? 3 : absl::GetFlag(FLAGS_membership_rounds)),
        block_(quick ? 60 : absl::GetFlag(FLAGS_membership_block)) {}

  absl::Status Run(Context& ctx) override {
    if (ctx.masters.size() < kMasters) {
      skipped_ = "needs 4 masters";
      Log(absl::StrCat("membership: skipped: ", skipped_));
      return absl::OkStatus();
    }
    absl::Status s = RunAll(ctx);
    // Self-cleaning on external masters too: the three markers go.
    for (Deployment d :
         {Deployment::kSteady3, Deployment::kJoint, Deployment::kSteady4}) {
      for (int i = 0; i < kMasters; ++i) {
        (void)DeleteKey(ctx.masters[i], MarkerKey(d));
      }
    }
    if (!s.ok()) {
      return absl::InternalError(absl::StrCat("membership: ", s.message()));
    }
    return absl::OkStatus();
  }

  void AddSettings(const Context& ctx, Json& settings) const override {
    settings["membership_rounds"] = rounds_;
    settings["membership_block"] = block_;
  }

  void AddTargets(std::vector<Target>& targets) const override {
    for (const char* client : {"async", "blocking"}) {
      const MembershipConfig* steady = Find(client, Deployment::kSteady3);
      const MembershipConfig* joint = Find(client, Deployment::kJoint);
      Target t = Unmeasured(absl::StrCat(
          "joint phase: cycle p50 ≤ 1.5× steady cycle p50 (", client,
          ", client of A,B,C,D under joint A,B,C -> A,B,D vs client of "
          "A,B,C under steady A,B,C)"));
      const MembershipConfig* four = Find(client, Deployment::kSteady4);
      if (ran_ && steady != nullptr && joint != nullptr && four != nullptr) {
        const Dist j = Summarize(joint->own.cycle_us);
        const Dist st = Summarize(steady->own.cycle_us);
        const Dist f = Summarize(four->own.cycle_us);
        const double r50 = Ratio(j.p50, st.p50);
        t = {t.what,
             absl::StrFormat(
                 "%s (%s vs %s µs; per round %s; p99 %s; vs a steady client "
                 "of A,B,C,D: p50 %s, p99 %s)",
                 X(r50), Us(j.p50), Us(st.p50),
                 Spread(RoundRatios(*joint, *steady)), X(Ratio(j.p99, st.p99)),
                 X(Ratio(j.p50, f.p50)), X(Ratio(j.p99, f.p99))),
             r50 <= 1.5, true};
      }
      targets.push_back(t);
    }
  }

  void AppendMarkdown(const Context& ctx, std::string& md) const override {
    if (!ran_) return;
    absl::StrAppend(
        &md,
        "### Lock cycle during a change of masters (membership, "
        "joint consensus)\n\n",
        "Masters A, B, C, D are the run's first four. Three deployments, "
        "each under a key prefix of its own: **steady A,B,C** (bootstrapped "
        "by a client of A,B,C: epoch 1, members A,B,C; its client A,B,C "
        "needs 2 of 3); **joint A,B,C -> A,B,D** (bootstrapped the same way, "
        "then the joint record of the change to A,B,D written by the phase "
        "with the reconfigure script, as `redlock reconfigure` begins a "
        "change; its client A,B,C,D needs 2 of A,B,C and 2 of A,B,D in "
        "every grant); **steady A,B,C,D** (bootstrapped by a client of "
        "A,B,C,D: 3 of 4), which no change passes through, to tell the "
        "fourth master's round trip from the second quorum. Whole cycles "
        "(acquire + release), ",
        rounds_, " rounds; in each, every configuration ran ", block_,
        " cycles right after a floor block of the same size, in an order "
        "that rotates. The records read back from every master before and "
        "after the blocks:\n\n");
    for (const auto& [d, text] : records_) {
      absl::StrAppend(&md, "- ", DeploymentName(d), ": `", text, "`\n");
    }
    absl::StrAppend(
        &md,
        "\nTimes in µs. ×floor compares a configuration with its own floor "
        "blocks; ×steady compares it with the steady A,B,C client of the "
        "same kind (over all cycles, and per round: its block p50 over that "
        "client's block p50 in the same round); ×steady of 4 compares the "
        "joint client with the steady A,B,C,D client of the same kind, "
        "which has as many masters: what the second quorum itself "
        "costs.\n\n",
        "| configuration | cycles | p50 | p90 | p99 | p99.9 | acquire p50 | "
        "floor p50 | ×floor p50 | ×floor p99 | ×steady p50 | ×steady p99 | "
        "×steady p50 per round (min / median / max) | ×steady of 4 p50 | "
        "×steady of 4 p99 | ×steady of 4 p50 per round (min / median / max) "
        "| errors |\n"
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|---|"
        "--:|\n");
    for (const MembershipConfig& c : configs_) {
      const Dist own = Summarize(c.own.cycle_us);
      const Dist acq = Summarize(c.own.acquire_us);
      const Dist fl = Summarize(c.floor.cycle_us);
      const MembershipConfig* st = Find(c.client, Deployment::kSteady3);
      std::string s50, s99, spread;
      if (st != nullptr && st != &c) {
        const Dist sd = Summarize(st->own.cycle_us);
        s50 = X(Ratio(own.p50, sd.p50));
        s99 = X(Ratio(own.p99, sd.p99));
        spread = Spread(RoundRatios(c, *st));
      }
      const MembershipConfig* four = Find(c.client, Deployment::kSteady4);
      std::string f50, f99, fspread;
      if (c.deployment == Deployment::kJoint && four != nullptr) {
        const Dist fd = Summarize(four->own.cycle_us);
        f50 = X(Ratio(own.p50, fd.p50));
        f99 = X(Ratio(own.p99, fd.p99));
        fspread = Spread(RoundRatios(c, *four));
      }
      absl::StrAppend(&md, "| ", c.name, " | ", own.count, " | ", Us(own.p50),
                      " | ", Us(own.p90), " | ", Us(own.p99), " | ",
                      Us(own.p999), " | ", Us(acq.p50), " | ", Us(fl.p50),
                      " | ", X(Ratio(own.p50, fl.p50)), " | ",
                      X(Ratio(own.p99, fl.p99)), " | ", s50, " | ", s99, " | ",
                      spread, " | ", f50, " | ", f99, " | ", fspread, " | ",
                      c.own.errors, " |\n");
    }
    absl::StrAppend(&md, "\n");
  }

  void AddResults(Json& results) const override {
    Json j = Json::object();
    j["ran"] = ran_;
    j["skipped"] = skipped_;
    if (ran_) {
      Json records = Json::object();
      for (const auto& [d, text] : records_) records[DeploymentName(d)] = text;
      j["records"] = std::move(records);
      Json configs = Json::array();
      for (const MembershipConfig& c : configs_) {
        const Dist own = Summarize(c.own.cycle_us);
        const Dist fl = Summarize(c.floor.cycle_us);
        Json k = Json::object();
        k["name"] = c.name;
        k["client"] = c.client;
        k["deployment"] = DeploymentName(c.deployment);
        k["masters"] = c.masters;
        k["cycle"] = DistJson(own);
        k["acquire"] = DistJson(Summarize(c.own.acquire_us));
        k["floor_cycle"] = DistJson(fl);
        k["ratio_p50"] = Num(Ratio(own.p50, fl.p50));
        k["ratio_p99"] = Num(Ratio(own.p99, fl.p99));
        k["round_ratio_p50"] = Nums(c.round_ratio_p50);
        const MembershipConfig* st = Find(c.client, Deployment::kSteady3);
        if (st != nullptr && st != &c) {
          const Dist sd = Summarize(st->own.cycle_us);
          k["steady_ratio_p50"] = Num(Ratio(own.p50, sd.p50));
          k["steady_ratio_p99"] = Num(Ratio(own.p99, sd.p99));
          k["steady_round_ratio_p50"] = Nums(RoundRatios(c, *st));
        }
        const MembershipConfig* four = Find(c.client, Deployment::kSteady4);
        if (c.deployment == Deployment::kJoint && four != nullptr) {
          const Dist fd = Summarize(four->own.cycle_us);
          k["steady4_ratio_p50"] = Num(Ratio(own.p50, fd.p50));
          k["steady4_ratio_p99"] = Num(Ratio(own.p99, fd.p99));
          k["steady4_round_ratio_p50"] = Nums(RoundRatios(c, *four));
        }
        k["errors"] = c.own.errors;
        k["last_error"] = c.own.last_error;
        configs.push_back(std::move(k));
      }
      j["configs"] = std::move(configs);
    }
    results["membership"] = std::move(j);
  }

 private:
  static std::string MarkerKey(Deployment d) {
    Options o;
    o.key_prefix = PrefixOf(d);
    return DeploymentMarkerKey(o);
  }

  static redlock::Options OptionsOf(const std::vector<Master>& masters,
                                    Deployment d, int n) {
    redlock::Options o = ClientOptions(UrisOf(masters, n), false);
    o.key_prefix = PrefixOf(d);
    return o;
  }

  static std::vector<std::string> NamesOf(const std::vector<Master>& masters,
                                          std::initializer_list<int> idx) {
    std::vector<std::string> names;
    for (int i : idx) names.push_back(masters[i].address.MemberName());
    return internal::Canonical(std::move(names));
  }

  absl::StatusOr<std::unique_ptr<Runner>> MakeRunner(
      const std::string& client, const redlock::Options& options,
      const std::string& resource, absl::Duration ttl) {
    absl::StatusOr<std::unique_ptr<Runner>> r;
    if (client == "async") {
      r = AsyncRunner::Create(options, resource, ttl);
    } else {
      r = BlockingRunner::Create(options, resource, ttl);
    }
    return r;
  }

  // A client of masters[0..n-1] takes a lock a few times: the engine writes
  // the new deployment's steady record on every one of them.
  absl::Status Bootstrap(const Context& ctx, Deployment d, int n) {
    absl::StatusOr<std::unique_ptr<Runner>> r =
        MakeRunner("async", OptionsOf(ctx.masters, d, n),
                   absl::StrCat("membership-bootstrap"), ctx.ttl);
    if (!r.ok()) return r.status();
    return WarmUp(**r, 5, absl::Seconds(10));
  }

  // Writes joint(A,B,C -> A,B,D) over the steady record the joint
  // deployment's bootstrap left on A, B, C, and onto D (no marker there).
  absl::Status BeginChange(const Context& ctx) {
    const std::vector<Master>& m = ctx.masters;
    const std::string key = MarkerKey(Deployment::kJoint);
    absl::StatusOr<MarkerRead> a = ReadMarker(m[0], key);
    if (!a.ok()) return a.status();
    if (!a->has_record || a->record.joint() || a->record.epoch != 1) {
      return absl::InternalError(absl::StrCat(
          "joint deployment's bootstrap left \"", a->value, "\" on A"));
    }
    const std::string steady_text = internal::RecordText(a->record);
    internal::Membership joint = a->record;
    joint.epoch = a->record.epoch + 1;
    joint.next = NamesOf(m, {0, 1, 3});
    joint.since_us = 0;
    const absl::Duration max_ttl = absl::Milliseconds(a->max_ttl_ms);
    for (int i = 0; i < kMasters; ++i) {
      absl::StatusOr<MarkerRead> now = ReadMarker(m[i], key);
      if (!now.ok()) return now.status();
      // A, B, C carry the bootstrap's record; D carries no marker at all.
      const std::string expected = i < 3 ? steady_text : std::string();
      if (i < 3 ? (!now->has_record ||
                   internal::RecordText(now->record) != steady_text)
                : now->present) {
        return absl::InternalError(absl::StrCat("before the change, master ",
                                                i + 1, " holds \"", now->value,
                                                "\""));
      }
      std::string run_id = InfoField(m[i].address, "run_id");
      if (run_id.empty()) {
        return absl::InternalError(
            absl::StrCat("no run_id from master ", i + 1));
      }
      const internal::Command cmd = internal::ReconfigureCommand(
          key, expected,
          internal::MarkerSuffix(m[i].address.MemberName(), joint),
          internal::kTrustedMarker, run_id, max_ttl);
      absl::StatusOr<ContextPtr> c = ConnectSync(m[i].address);
      if (!c.ok()) return c.status();
      absl::StatusOr<ReplyPtr> r =
          SyncCommand(c->get(), internal::CommandArgv(cmd, /*eval=*/true));
      if (!r.ok()) return r.status();
      const redisReply* reply = r->get();
      if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
          reply->element[0]->type != REDIS_REPLY_INTEGER ||
          reply->element[0]->integer != 1) {
        return absl::InternalError(absl::StrCat(
            "reconfigure script on master ", i + 1, ": ",
            reply->type == REDIS_REPLY_ARRAY && reply->elements == 2
                ? DescribeReply(reply->element[1])
                : DescribeReply(reply)));
      }
    }
    return absl::OkStatus();
  }

  // Every master of deployment `d` carries `want` (its text), naming itself;
  // masters outside `on` carry no marker. Returns the text.
  absl::StatusOr<std::string> CheckRecords(const Context& ctx, Deployment d,
                                           int on, int64_t epoch, int members,
                                           int next) {
    const std::string key = MarkerKey(d);
    std::string text;
    for (int i = 0; i < kMasters; ++i) {
      absl::StatusOr<MarkerRead> r = ReadMarker(ctx.masters[i], key);
      if (!r.ok()) return r.status();
      if (i >= on) {
        if (r->present) {
          return absl::InternalError(
              absl::StrCat(DeploymentName(d), ": master ", i + 1, " holds \"",
                           r->value, "\", expected none"));
        }
        continue;
      }
      const std::string t =
          r->has_record ? internal::RecordText(r->record) : "";
      if (!r->has_record || r->record.epoch != epoch ||
          static_cast<int>(r->record.members.size()) != members ||
          static_cast<int>(r->record.next.size()) != next ||
          r->member != ctx.masters[i].address.MemberName() ||
          (!text.empty() && t != text)) {
        return absl::InternalError(absl::StrCat(DeploymentName(d), ": master ",
                                                i + 1, " holds \"", r->value,
                                                "\""));
      }
      text = t;
    }
    return text;
  }

  absl::Status CheckAll(const Context& ctx) {
    struct Want {
      Deployment d;
      int on;
      int64_t epoch;
      int members;
      int next;
    };
    const Want wants[] = {{Deployment::kSteady3, 3, 1, 3, 0},
                          {Deployment::kJoint, 4, 2, 3, 3},
                          {Deployment::kSteady4, 4, 1, 4, 0}};
    std::vector<std::pair<Deployment, std::string>> records;
    for (const Want& w : wants) {
      absl::StatusOr<std::string> t =
          CheckRecords(ctx, w.d, w.on, w.epoch, w.members, w.next);
      if (!t.ok()) return t.status();
      records.push_back({w.d, *t});
    }
    if (!records_.empty() && records != records_) {
      return absl::InternalError("the records changed during the blocks");
    }
    records_ = std::move(records);
    return absl::OkStatus();
  }

  absl::Status RunAll(Context& ctx) {
    const std::vector<Master>& m = ctx.masters;
    // Markers a run before this one left (external masters) would make
    // these deployments older than the phase says.
    for (Deployment d :
         {Deployment::kSteady3, Deployment::kJoint, Deployment::kSteady4}) {
      for (int i = 0; i < kMasters; ++i) {
        if (absl::Status s = DeleteKey(m[i], MarkerKey(d)); !s.ok()) return s;
      }
    }
    if (absl::Status s = Bootstrap(ctx, Deployment::kSteady3, 3); !s.ok()) {
      return s;
    }
    if (absl::Status s = Bootstrap(ctx, Deployment::kJoint, 3); !s.ok()) {
      return s;
    }
    if (absl::Status s = Bootstrap(ctx, Deployment::kSteady4, 4); !s.ok()) {
      return s;
    }
    if (absl::Status s = BeginChange(ctx); !s.ok()) return s;
    if (absl::Status s = CheckAll(ctx); !s.ok()) return s;

    for (const char* client : {"async", "blocking"}) {
      for (Deployment d :
           {Deployment::kSteady3, Deployment::kJoint, Deployment::kSteady4}) {
        MembershipConfig c;
        c.client = client;
        c.deployment = d;
        c.masters = d == Deployment::kSteady3 ? 3 : 4;
        c.name = absl::StrCat(client, ", ", DeploymentName(d), " (client of ",
                              c.masters, ")");
        absl::StatusOr<std::unique_ptr<Runner>> r =
            MakeRunner(client, OptionsOf(m, d, c.masters),
                       absl::StrCat("membership-", client), ctx.ttl);
        if (!r.ok()) {
          return absl::InternalError(
              absl::StrCat(c.name, ": ", r.status().ToString()));
        }
        c.runner = *std::move(r);
        if (absl::Status s = WarmUp(*c.runner, 50, absl::Seconds(10));
            !s.ok()) {
          return absl::InternalError(absl::StrCat(c.name, ": ", s.ToString()));
        }
        configs_.push_back(std::move(c));
      }
    }
    ran_ = true;
    Log(absl::StrCat("membership: ", configs_.size(), " configurations x ",
                     rounds_, " rounds x ", block_,
                     " cycles, each block after a floor block"));
    for (int round = 0; round < rounds_; ++round) {
      for (size_t k = 0; k < configs_.size(); ++k) {
        MembershipConfig& c = configs_[(k + round) % configs_.size()];
        BlockResult f = RunBlock(*ctx.floor, block_, c.floor);
        BlockResult b = RunBlock(*c.runner, block_, c.own);
        c.block_p50.push_back(b.p50_us);
        if (f.p50_us > 0 && b.p50_us > 0) {
          c.round_ratio_p50.push_back(b.p50_us / f.p50_us);
        }
      }
      Log(absl::StrCat("membership round ", round + 1, "/", rounds_));
    }
    for (MembershipConfig& c : configs_) c.runner.reset();
    // The clients acted under the records above, and left them as they were.
    return CheckAll(ctx);
  }

  const MembershipConfig* Find(absl::string_view client, Deployment d) const {
    for (const MembershipConfig& c : configs_) {
      if (c.client == client && c.deployment == d) return &c;
    }
    return nullptr;
  }

  // c's block p50 over `base`'s block p50, round by round.
  static std::vector<double> RoundRatios(const MembershipConfig& c,
                                         const MembershipConfig& base) {
    std::vector<double> out;
    for (size_t r = 0; r < c.block_p50.size() && r < base.block_p50.size();
         ++r) {
      if (c.block_p50[r] > 0 && base.block_p50[r] > 0) {
        out.push_back(c.block_p50[r] / base.block_p50[r]);
      }
    }
    return out;
  }

  const int rounds_;
  const int block_;
  bool ran_ = false;
  std::string skipped_;
  std::vector<MembershipConfig> configs_;
  // The record text of each deployment, as read from its masters.
  std::vector<std::pair<Deployment, std::string>> records_;
};

const RegisterPhase kRegistered(25, "membership",
                                [](bool quick) -> std::unique_ptr<Phase> {
                                  return std::make_unique<MembershipPhase>(
                                      quick);
                                });

}  // namespace
}  // namespace redlock::bench
