// Copyright 2026 The redlock Authors.

#include "src/engine/master_reports.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/algorithm/persistence.h"

namespace redlock::internal {

namespace {

// One warning line: how many masters of `total` show the risk, the first
// few named, what the first one risks.
std::string RiskLine(const std::vector<std::string>& names, size_t total,
                     absl::string_view first, bool alike,
                     absl::string_view more) {
  constexpr size_t kNamed = 3;
  std::string named = absl::StrJoin(
      names.begin(), names.begin() + std::min(names.size(), kNamed), ", ");
  if (names.size() > kNamed) {
    absl::StrAppend(&named, " and ", names.size() - kNamed, " more");
  }
  return absl::StrCat(
      "redlock: warning: ", names.size(), " of ", total, " masters (", named,
      "): ", first,
      alike ? "" : " (not all alike: `redlock status` shows each)", more);
}

}  // namespace

MasterReports::MasterReports(
    const Options& options, const std::vector<std::unique_ptr<Master>>& masters,
    const RestartGuard& guard)
    : options_(options),
      masters_(masters),
      guard_(guard),
      observer_(options.observer.get()) {
  reported_ready_.assign(masters_.size(), false);
  // Not judged yet, as GrantVeto() says before any handshake.
  reported_verdict_.assign(masters_.size(),
                           absl::FailedPreconditionError("not yet judged"));
}

std::vector<MasterHealth> MasterReports::Health(const Wakeups* wakeups) const {
  std::vector<MasterHealth> out;
  out.reserve(masters_.size());
  for (size_t i = 0; i < masters_.size(); ++i) {
    const Master& m = *masters_[i];
    MasterHealth h;
    h.master = m.name();
    h.connected = m.ready();
    switch (m.config().address.transport) {
      case MasterAddress::Transport::kTcp:
        h.transport = "tcp";
        break;
      case MasterAddress::Transport::kTls:
        h.transport = "tls";
        if (m.ready()) h.tls = m.tls_description();
        break;
      case MasterAddress::Transport::kUnix:
        h.transport = "unix";
        break;
    }
    h.last_error = m.last_error();
    if (wakeups != nullptr) {
      h.wakeups = wakeups->subscribers()[i]->last_error();
    }
    if (m.identity().known) h.marker = m.identity().marker;
    // Not the freshness of the record read: an idle client reads it again
    // at its next attempt, and a master is no worse for that.
    h.grants_count =
        guard_.GrantVeto(static_cast<int>(i), /*fresh_read=*/false);
    if (const int same = guard_.SameServerAs(static_cast<int>(i)); same >= 0) {
      // Rounds count one grant per server; name the duplicate for people.
      h.grants_count = absl::FailedPreconditionError(absl::StrCat(
          "same server as master ", same + 1, " (", masters_[same]->name(),
          ", run_id ", m.identity().run_id.substr(0, 8),
          "...): one server casts one vote"));
    }
    h.member = guard_.membership().name(i);
    if (m.identity().known && m.identity().has_record) {
      h.membership = RecordText(m.identity().record);
    }
    h.maxmemory_policy = m.identity().maxmemory_policy;
    h.eviction = EvictionRisk(m.identity().maxmemory_policy);
    if (m.identity().known) {
      h.persistence = DescribePersistence(m.identity().persistence);
      h.durability = DurabilityRisk(m.identity().persistence);
    }
    const MasterCounters& c = m.counters();
    h.requests = c.sent;
    h.replies = c.replies;
    h.error_replies = c.error_replies;
    h.timeouts = c.timeouts;
    h.connects = c.connects;
    h.connection_failures = c.connection_failures;
    h.noscript_fallbacks = c.noscript_fallbacks;
    if (wakeups != nullptr) {
      const Subscriber& subscriber = *wakeups->subscribers()[i];
      h.subscriber_requests = subscriber.sent();
      h.subscriber_messages = subscriber.messages();
    }
    out.push_back(std::move(h));
  }
  return out;
}

void MasterReports::ReportChanges() {
  if (observer_ == nullptr) return;
  for (size_t i = 0; i < masters_.size(); ++i) {
    const Master& m = *masters_[i];
    MasterEvent event;
    event.master = m.name();
    event.index = static_cast<int>(i);
    if (m.ready() != reported_ready_[i]) {
      reported_ready_[i] = m.ready();
      event.kind = m.ready() ? MasterEvent::Kind::kConnected
                             : MasterEvent::Kind::kDisconnected;
      event.status = m.ready() ? absl::OkStatus() : m.last_error();
      observer_->OnMaster(event);
    }
    absl::Status verdict =
        guard_.GrantVeto(static_cast<int>(i), /*fresh_read=*/false);
    // Only a change of "counts or not" is reported, not of the reason's
    // wording (the time left in a reborn master's message changes by itself).
    if (verdict.ok() != reported_verdict_[i].ok()) {
      reported_verdict_[i] = verdict;
      event.kind = MasterEvent::Kind::kJudged;
      event.status = std::move(verdict);
      observer_->OnMaster(event);
    }
  }
}

void MasterReports::WarnAboutRisks() {
  // Called on every master state change: nothing to do once every kind of
  // risk had its line.
  if (std::all_of(risks_warned_.begin(), risks_warned_.end(),
                  [](bool warned) { return warned; })) {
    return;
  }
  // Once every master answered or failed, so that the line counts them all.
  for (const auto& x : masters_) {
    if (!x->identity().known && !x->ever_failed()) return;
  }
  // Each kind of risk: what master `i` risks (OK: nothing), and what the
  // line adds.
  struct Kind {
    std::function<absl::Status(const Master&)> risk;
    absl::string_view more;
  };
  const Kind kinds[] = {
      {[](const Master& m) {
         return m.identity().known ? EvictionRisk(m.identity().maxmemory_policy)
                                   : absl::OkStatus();
       },
       ""},
      {[this](const Master& m) {
         return m.identity().known && options_.restart_guard &&
                        !options_.accept_non_durable_masters
                    ? DurabilityRisk(m.identity().persistence)
                    : absl::OkStatus();
       },
       "; or accept that cost (Options::accept_non_durable_masters, "
       "--accept-non-durable, REDLOCK_ACCEPT_NON_DURABLE=1)"},
      {[this](const Master& m) {
         return m.config().address.transport ==
                            MasterAddress::Transport::kTls &&
                        options_.tls.insecure
                    ? absl::FailedPreconditionError(
                          "TLS certificate verification is off "
                          "(tls.insecure, --insecure): anyone on the path can "
                          "read and change these connections, AUTH password "
                          "included")
                    : absl::OkStatus();
       },
       ""}};
  static_assert(std::size(kinds) == std::tuple_size<decltype(risks_warned_)>());
  // On stderr, one line per kind for the whole process, however many
  // clients it makes.
  static std::atomic<uint32_t> printed{0};
  for (size_t k = 0; k < std::size(kinds); ++k) {
    if (risks_warned_[k]) continue;
    std::vector<std::string> names;
    std::string first;
    bool alike = true;
    for (const auto& x : masters_) {
      const absl::Status risk = kinds[k].risk(*x);
      if (risk.ok()) continue;
      names.push_back(x->name());
      if (first.empty()) {
        first = std::string(risk.message());
      } else if (risk.message() != first) {
        alike = false;
      }
    }
    if (names.empty()) continue;
    risks_warned_[k] = true;
    const std::string text =
        RiskLine(names, masters_.size(), first, alike, kinds[k].more);
    if (options_.on_warning) {
      options_.on_warning(text);
    } else if ((printed.fetch_or(1u << k) & (1u << k)) == 0) {
      std::fprintf(stderr, "%s\n", text.c_str());
    }
  }
}

}  // namespace redlock::internal
