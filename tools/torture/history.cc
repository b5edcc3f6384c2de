// Copyright 2026 The redlock Authors.

#include "tools/torture/history.h"

#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

namespace redlock::torture {

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void AppendLine(int fd, const std::string& line) {
  std::string buf = line + "\n";
  const char* p = buf.data();
  size_t left = buf.size();
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

int64_t Section::HoldEnd() const {
  if (work_end == 0) return valid_until;
  return std::min(work_end, valid_until);
}

namespace {

constexpr int kMaxDetails = 40;
// Liveness slack past TTL + retry delay: round trips and the fencing
// write-back on a loaded 2-core machine.
constexpr int64_t kLivenessSlackNs = 300000000;

using Fields = absl::flat_hash_map<std::string, std::string>;

int64_t I(const Fields& f, const std::string& k) {
  auto it = f.find(k);
  int64_t v = 0;
  if (it != f.end()) (void)absl::SimpleAtoi(it->second, &v);
  return v;
}
std::string S(const Fields& f, const std::string& k) {
  auto it = f.find(k);
  return it == f.end() ? std::string() : it->second;
}

void Detail(Summary& s, std::string line) {
  if (static_cast<int>(s.details.size()) < kMaxDetails) {
    s.details.push_back(std::move(line));
  }
}

double Sec(const Summary& s, int64_t t) { return (t - s.t0) / 1e9; }

}  // namespace

void CheckFenceTokens(const std::vector<Section>& sections, Summary* s) {
  std::map<std::string, std::vector<const Section*>> by_resource;
  for (const Section& x : sections) {
    if (x.fence > 0) by_resource[x.resource].push_back(&x);
  }
  for (auto& [r, by_start] : by_resource) {
    // Order: walk the sections by acquisition start, first taking in every
    // section that returned strictly before it and keeping the largest token
    // among them. If this one's token does not exceed that largest, it is
    // out of order; comparing with the largest alone keeps this O(n log n)
    // and names the earlier token the storage may already have seen.
    std::vector<const Section*> by_ret = by_start;
    std::sort(
        by_start.begin(), by_start.end(),
        [](const Section* a, const Section* b) { return a->start < b->start; });
    std::sort(
        by_ret.begin(), by_ret.end(),
        [](const Section* a, const Section* b) { return a->ret < b->ret; });
    const Section* highest = nullptr;
    size_t returned = 0;
    for (const Section* x : by_start) {
      for (; returned < by_ret.size() && by_ret[returned]->ret < x->start;
           ++returned) {
        if (highest == nullptr || by_ret[returned]->fence > highest->fence) {
          highest = by_ret[returned];
        }
      }
      // highest == x only if a record has ret < start: no ordering to judge.
      if (highest != nullptr && highest != x && x->fence <= highest->fence) {
        s->fence_order++;
        s->marks.push_back({"fence order", r, x->start, x->ret});
        Detail(*s,
               absl::StrFormat(
                   "fence order: %s client %d got fence %d (acquiring "
                   "%.3fs-%.3fs) after client %d's fence %d had returned "
                   "at %.3fs",
                   r, x->client, x->fence, Sec(*s, x->start), Sec(*s, x->ret),
                   highest->client, highest->fence, Sec(*s, highest->ret)));
      }
    }

    // Duplicates: equal tokens are neighbours once sorted by token; every
    // section after the first (by return) of a run is one token issued again.
    std::vector<const Section*> by_fence = std::move(by_ret);
    std::stable_sort(
        by_fence.begin(), by_fence.end(),
        [](const Section* a, const Section* b) { return a->fence < b->fence; });
    for (size_t i = 1, first = 0; i < by_fence.size(); ++i) {
      if (by_fence[i]->fence != by_fence[first]->fence) {
        first = i;
        continue;
      }
      const Section* a = by_fence[first];
      const Section* x = by_fence[i];
      s->fence_duplicate++;
      s->marks.push_back({"fence duplicate", r, x->start, x->ret});
      Detail(*s, absl::StrFormat(
                     "fence duplicate: %s fence %d given to client %d "
                     "(acquiring %.3fs-%.3fs) and again to client %d "
                     "(acquiring %.3fs-%.3fs)",
                     r, x->fence, a->client, Sec(*s, a->start), Sec(*s, a->ret),
                     x->client, Sec(*s, x->start), Sec(*s, x->ret)));
    }
  }
}

void CheckLeaderViews(const std::vector<Proclamation>& proclamations,
                      const std::vector<LeaderView>& views, Summary* s) {
  s->proclamations += static_cast<int64_t>(proclamations.size());
  s->leader_views += static_cast<int64_t>(views.size());
  // Unknown: the earliest start of each (election, epoch, revision, value).
  std::map<std::tuple<std::string, int64_t, int64_t, std::string>, int64_t>
      first_sent;
  for (const Proclamation& p : proclamations) {
    auto [it, added] = first_sent.emplace(
        std::make_tuple(p.election, p.epoch, p.revision, p.value), p.start);
    if (!added) it->second = std::min(it->second, p.start);
  }
  // Order: each observation's views by `at`, as listed on ties.
  std::map<std::pair<int, int64_t>, std::vector<const LeaderView*>> watches;
  for (const LeaderView& v : views) {
    watches[{v.client, v.watch}].push_back(&v);
    auto it = first_sent.find(
        std::make_tuple(v.election, v.epoch, v.revision, v.value));
    if (it != first_sent.end() && it->second <= v.at) continue;
    s->view_unknown++;
    s->marks.push_back({"view unknown", v.election, v.at, v.at});
    Detail(*s, absl::StrFormat(
                   "view unknown: %s client %d (observation %d) told of "
                   "epoch %d revision %d value \"%s\" at %.3fs, which no "
                   "leader had proclaimed%s",
                   v.election, v.client, v.watch, v.epoch, v.revision,
                   absl::CHexEscape(v.value.substr(0, 64)), Sec(*s, v.at),
                   it == first_sent.end() ? "" : " yet"));
  }
  for (auto& [watch, told] : watches) {
    std::stable_sort(
        told.begin(), told.end(),
        [](const LeaderView* a, const LeaderView* b) { return a->at < b->at; });
    for (size_t i = 1; i < told.size(); ++i) {
      const LeaderView& a = *told[i - 1];
      const LeaderView& b = *told[i];
      if (std::make_pair(b.epoch, b.revision) >
          std::make_pair(a.epoch, a.revision)) {
        continue;
      }
      s->view_order++;
      s->marks.push_back({"view order", b.election, a.at, b.at});
      Detail(*s, absl::StrFormat(
                     "view order: %s client %d (observation %d) told of "
                     "epoch %d revision %d at %.3fs after epoch %d "
                     "revision %d at %.3fs",
                     b.election, b.client, b.watch, b.epoch, b.revision,
                     Sec(*s, b.at), a.epoch, a.revision, Sec(*s, a.at)));
    }
  }
}

absl::StatusOr<History> ReadHistory(const std::string& dir) {
  History h;
  Summary& s = h.summary;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {  // NOLINT
    return absl::NotFoundError(absl::StrCat("cannot open ", dir));
  }
  std::vector<std::string> files;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (absl::EndsWith(name, ".log")) files.push_back(dir + "/" + name);
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  if (files.empty()) return absl::NotFoundError("no *.log in " + dir);

  std::map<std::pair<int, int64_t>, Section> sections;
  std::set<std::string> resources;
  bool have_run = false;
  for (const std::string& path : files) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      std::vector<std::string> parts = absl::StrSplit(line, ' ');
      if (parts.empty()) continue;
      const std::string kind = parts[0];
      Fields f;
      for (size_t i = 1; i < parts.size(); ++i) {
        std::pair<std::string, std::string> kv =
            absl::StrSplit(parts[i], absl::MaxSplits('=', 1));
        f[kv.first] = kv.second;
      }
      const auto key = std::make_pair(static_cast<int>(I(f, "c")), I(f, "s"));
      if (kind == "RUN") {
        have_run = true;
        s.t0 = I(f, "t0");
        s.end = I(f, "end");
        s.heal = I(f, "heal");
        s.ttl_ns = I(f, "ttl_ms") * 1000000;
        s.retry_max_ns = I(f, "retry_max_ms") * 1000000;
        for (absl::string_view r :
             absl::StrSplit(S(f, "resources"), ',', absl::SkipEmpty())) {
          resources.insert(std::string(r));
        }
      } else if (kind == "FAULT") {
        h.faults.push_back(
            {S(f, "kind"), S(f, "targets"), I(f, "start"), I(f, "end")});
      } else if (kind == "HEAL") {
        s.heal = I(f, "t");
      } else if (kind == "LEFTCHECK") {
        s.leftover_check_ran = true;
      } else if (kind == "LEFTOVER") {
        h.leftover_keys.push_back({S(f, "master"), S(f, "key"), S(f, "value")});
      } else if (kind == "ACQFAIL") {
        h.failed_acquisitions.push_back({static_cast<int>(I(f, "c")),
                                         S(f, "res"), I(f, "start"),
                                         I(f, "ret"), S(f, "code")});
      } else if (kind == "ACQ") {
        Section& x = sections[key];
        x.client = key.first;
        x.seq = key.second;
        x.resource = S(f, "res");
        x.token = S(f, "token");
        x.fence = I(f, "fence");
        x.start = I(f, "start");
        x.ret = I(f, "ret");
        x.valid_until = I(f, "vu");
        x.votes = S(f, "votes");
        resources.insert(x.resource);
      } else if (kind == "WS") {
        sections[key].work_start = I(f, "t");
      } else if (kind == "WE") {
        sections[key].work_end = I(f, "t");
      } else if (kind == "FW") {
        sections[key].fenced.push_back(
            {I(f, "fence"), I(f, "send"), I(f, "ans"), S(f, "result")});
      } else if (kind == "UW") {
        Section& x = sections[key];
        x.unfenced++;
        if (x.valid_until != 0 && I(f, "send") > x.valid_until) {
          x.unfenced_late++;
        }
      } else if (kind == "VU") {
        Section& x = sections[key];
        x.valid_until = std::max(x.valid_until, I(f, "vu"));
      } else if (kind == "PROCLAIM") {
        h.proclamations.push_back({static_cast<int>(I(f, "c")), S(f, "res"),
                                   I(f, "epoch"), I(f, "rev"), S(f, "value"),
                                   I(f, "start")});
      } else if (kind == "VIEW") {
        h.views.push_back({static_cast<int>(I(f, "c")), I(f, "w"), S(f, "res"),
                           I(f, "epoch"), I(f, "rev"), S(f, "value"),
                           I(f, "t")});
      } else if (kind == "REL") {
        sections[key].release = S(f, "result");
        sections[key].release_at = I(f, "t");
      }
    }
  }
  if (!have_run) return absl::NotFoundError("no RUN line (nemesis.log)");
  h.resources.assign(resources.begin(), resources.end());
  for (auto& [k, x] : sections) {
    if (x.ret == 0) {  // Events without an ACQ: only their writes count.
      s.unfenced_writes += x.unfenced;
      continue;
    }
    h.sections.push_back(std::move(x));
  }
  return h;
}

absl::StatusOr<History> CheckHistory(const std::string& dir) {
  absl::StatusOr<History> h = ReadHistory(dir);
  if (h.ok()) CheckHistory(&*h);
  return h;
}

namespace {

// A semaphore's sections `v` (limit > 0), sorted by ret: at no instant more
// permits held than the limit (the smallest limit among those held, should
// clients have disagreed).
void CheckPermits(const std::string& r, const std::vector<const Section*>& v,
                  Summary& s) {
  std::vector<const Section*> active;
  for (const Section* x : v) {
    active.erase(std::remove_if(
                     active.begin(), active.end(),
                     [x](const Section* a) { return a->HoldEnd() <= x->ret; }),
                 active.end());
    int held = x->permits;
    int limit = x->limit;
    int64_t until = x->HoldEnd();
    for (const Section* a : active) {
      held += a->permits;
      limit = std::min(limit, a->limit);
      until = std::min(until, a->HoldEnd());
    }
    if (held > limit) {
      s.permits_over_limit++;
      s.marks.push_back({"permits over limit", r, x->ret, until});
      Detail(s, absl::StrFormat(
                    "permits over limit: semaphore %s had %d permits held of "
                    "%d when client %d's (votes %s) returned at %.3fs",
                    r, held, limit, x->client, x->votes, Sec(s, x->ret)));
    }
    active.push_back(x);
  }
}

// Mutual exclusion, readers with writers and stale fenced writes on one
// resource's sections `v` (not a semaphore's), sorted by ret.
void CheckResource(const std::string& r, const std::vector<const Section*>& v,
                   Summary& s) {
  // The sections still held when the next one returned. Two writers
  // overlapping is mutual exclusion, as for a lock; a reader and a writer is
  // reader_with_writer; readers may overlap. At most one of each per
  // section, judged against the overlapping one held longest.
  std::vector<const Section*> active;
  for (const Section* x : v) {
    active.erase(std::remove_if(
                     active.begin(), active.end(),
                     [x](const Section* a) { return a->HoldEnd() <= x->ret; }),
                 active.end());
    const Section* writer = nullptr;  // An overlapping writer vs x.
    const Section* mixed = nullptr;   // The other side, if x and it differ.
    for (const Section* a : active) {
      if (!a->shared && !x->shared) {
        if (writer == nullptr || a->HoldEnd() > writer->HoldEnd()) writer = a;
      } else if (a->shared != x->shared) {
        if (mixed == nullptr || a->HoldEnd() > mixed->HoldEnd()) mixed = a;
      }
    }
    if (writer != nullptr) {
      const Section* holder = writer;
      s.mutual_exclusion++;
      s.marks.push_back({"mutual exclusion", r, x->ret,
                         std::min(holder->HoldEnd(), x->HoldEnd())});
      Detail(s,
             absl::StrFormat(
                 "mutual exclusion: %s held by client %d (fence %d, votes "
                 "%s, %.3fs-%.3fs) and client %d (fence %d, votes %s, from "
                 "%.3fs): overlap %.1fms",
                 r, holder->client, holder->fence, holder->votes,
                 Sec(s, holder->ret), Sec(s, holder->HoldEnd()), x->client,
                 x->fence, x->votes, Sec(s, x->ret),
                 (std::min(holder->HoldEnd(), x->HoldEnd()) - x->ret) / 1e6));
    }
    if (mixed != nullptr) {
      const Section* reader = x->shared ? x : mixed;
      const Section* w = x->shared ? mixed : x;
      s.reader_with_writer++;
      s.marks.push_back({"reader with writer", r, x->ret,
                         std::min(mixed->HoldEnd(), x->HoldEnd())});
      Detail(s, absl::StrFormat(
                    "reader with writer: %s read by client %d (votes %s, "
                    "%.3fs-%.3fs) and written by client %d (votes %s, "
                    "%.3fs-%.3fs): overlap %.1fms",
                    r, reader->client, reader->votes, Sec(s, reader->ret),
                    Sec(s, reader->HoldEnd()), w->client, w->votes,
                    Sec(s, w->ret), Sec(s, w->HoldEnd()),
                    (std::min(mixed->HoldEnd(), x->HoldEnd()) - x->ret) / 1e6));
    }
    active.push_back(x);
  }

  // Fencing: an accepted write whose token is lower than one accepted
  // (answered) before it was sent.
  struct W {
    int64_t fence, send, ans;
    const Section* sec;
    bool accepted;
  };
  std::vector<W> ws;
  for (const Section* x : v) {
    for (const FencedWrite& w : x->fenced) {
      ws.push_back({w.fence, w.send, w.ans, x, w.result == "accepted"});
    }
  }
  std::sort(ws.begin(), ws.end(),
            [](const W& a, const W& b) { return a.ans < b.ans; });
  for (const W& w : ws) {
    bool superseded = false;
    int64_t higher = 0;
    for (const W& o : ws) {
      if (o.ans >= w.send) break;
      if (o.accepted && o.fence > w.fence) {
        superseded = true;
        higher = o.fence;
      }
    }
    const bool late = w.send > w.sec->valid_until;
    if (late) {
      s.late_fenced_writes++;
      if (!w.accepted) s.late_fenced_rejected++;
    }
    if (w.accepted && superseded) {
      s.stale_fenced_accepted++;
      s.marks.push_back({"stale fenced write", r, w.send, w.ans});
      if (late) s.late_fenced_accepted_superseded++;
      Detail(s, absl::StrFormat(
                    "stale fenced write accepted: %s token %d from client "
                    "%d at %.3fs after token %d was accepted%s",
                    r, w.fence, w.sec->client, Sec(s, w.ans), higher,
                    late ? " (sent past valid_until)" : ""));
    }
  }
}

// Liveness on one resource's sections `v` (its lock's, or a semaphore's),
// sorted by ret: after the heal, the lock is free again and a waiting client
// gets it within one TTL + the longest retry delay (+ slack for round trips
// and the fencing write-back on a 2-core machine). A semaphore counts as
// free only once every earlier holder is gone, as a lock does.
void CheckLiveness(const std::string& r, const std::vector<const Section*>& v,
                   Summary& s) {
  if (s.heal > 0 && s.end > s.heal) {
    const int64_t bound = s.ttl_ns + s.retry_max_ns + kLivenessSlackNs;
    int64_t free_at = s.heal;
    bool any_after = false;
    for (const Section* x : v) {
      if (x->ret >= s.heal && x->ret <= s.end) {
        any_after = true;
        const int64_t from = std::max({free_at, x->start, s.heal});
        const int64_t gap = x->ret - from;
        s.max_gap_after_heal_ns = std::max(s.max_gap_after_heal_ns, gap);
        if (gap > bound) {
          s.liveness++;
          s.marks.push_back({"liveness", r, from, x->ret});
          Detail(s,
                 absl::StrFormat(
                     "liveness: %s free since %.3fs, next acquired at "
                     "%.3fs (%.0fms > %.0fms)",
                     r, Sec(s, from), Sec(s, x->ret), gap / 1e6, bound / 1e6));
        }
      }
      // The key was set by the winning attempt, before `ret`: it expires
      // by ret + ttl at the latest, or went with a successful release.
      int64_t f = x->ret + s.ttl_ns;
      if (x->release == "ok") {
        f = std::min(f, x->release_at);
      }
      free_at = std::max(free_at, f);
    }
    if (!any_after && s.end - s.heal > bound) {
      s.liveness++;
      s.marks.push_back({"liveness", r, s.heal, s.end});
      Detail(s,
             absl::StrFormat("liveness: %s never acquired after the heal", r));
    }
  }
}

}  // namespace

void CheckHistory(History* h) {
  Summary& s = h->summary;
  // Leftovers first: their lines led the details when they were counted
  // while the files were read.
  for (const Leftover& l : h->leftover_keys) {
    s.leftovers++;
    Detail(s, absl::StrCat("leftover: key ", l.key, " on master ", l.master,
                           " = ", l.value));
  }
  for (const Fault& f : h->faults) s.faults_by_kind[f.kind]++;
  for (const AcquireFailure& f : h->failed_acquisitions) {
    s.acquire_failures++;
    s.acquire_failures_by_code[f.code]++;
  }
  std::set<std::string> resources(h->resources.begin(), h->resources.end());
  for (const Section& x : h->sections) resources.insert(x.resource);
  h->resources.assign(resources.begin(), resources.end());
  s.acquisitions += static_cast<int64_t>(h->sections.size());

  for (const std::string& r : h->resources) {
    std::vector<const Section*> v;
    std::vector<const Section*> permits;
    for (const Section& x : h->sections) {
      if (x.resource != r) continue;
      (x.limit > 0 ? permits : v).push_back(&x);
    }
    auto by_ret = [](const Section* a, const Section* b) {
      return a->ret < b->ret;
    };
    std::sort(v.begin(), v.end(), by_ret);
    std::sort(permits.begin(), permits.end(), by_ret);
    CheckResource(r, v, s);
    CheckPermits(r, permits, s);
    // A semaphore's liveness on its own sections; a resource with none of
    // either is judged (and found never acquired) once.
    if (!v.empty() || permits.empty()) CheckLiveness(r, v, s);
    if (!permits.empty()) CheckLiveness(r, permits, s);
  }
  CheckFenceTokens(h->sections, &s);
  CheckLeaderViews(h->proclamations, h->views, &s);
  for (const Section& x : h->sections) {
    if (x.work_end > x.valid_until) s.late_holders++;
    s.unfenced_writes += x.unfenced;
    s.late_unfenced_writes += x.unfenced_late;
    for (const FencedWrite& w : x.fenced) {
      s.fenced_writes++;
      if (w.result == "accepted") {
        s.fenced_accepted++;
      } else if (w.result == "rejected") {
        s.fenced_rejected++;
      } else {
        s.fenced_errors++;
      }
    }
  }
  for (const Call& c : h->calls) {
    s.calls_checked++;
    if (c.completions == 1) continue;
    s.callbacks++;
    // A callback that never ran was owed from the call to the end; one that
    // ran again has no span we know of: a mark at the call.
    s.marks.push_back(
        {"callback", c.resource, c.start,
         c.completions == 0 ? std::max(c.start, s.end) : c.start});
    Detail(s, absl::StrFormat(
                  "callback: client %d call %d (%s%s%s, called at %.3fs) "
                  "ran %d times, not exactly once",
                  c.client, c.id, c.kind, c.resource.empty() ? "" : " on ",
                  c.resource, Sec(s, c.start), c.completions));
  }
  if (!s.leftover_check_ran) {
    s.leftovers++;
    Detail(s, "leftovers: the leftover-key check did not run");
  }
}

std::string FormatSummary(const Summary& s) {
  std::string out;
  auto row = [&out](const std::string& k, const std::string& v) {
    absl::StrAppendFormat(&out, "  %-44s %s\n", k, v);
  };
  out += "operations\n";
  row("run length",
      absl::StrFormat("%.1fs (faults until %.1fs)", (s.end - s.t0) / 1e9,
                      (s.heal - s.t0) / 1e9));
  row("locks acquired (critical sections)", absl::StrCat(s.acquisitions));
  std::vector<std::string> codes;
  for (const auto& [k, v] : s.acquire_failures_by_code) {
    codes.push_back(absl::StrCat(k, " ", v));
  }
  row("acquisitions failed",
      absl::StrCat(s.acquire_failures, codes.empty() ? "" : " (",
                   absl::StrJoin(codes, ", "), codes.empty() ? "" : ")"));
  row("fenced writes (accepted/rejected/error)",
      absl::StrFormat("%d (%d/%d/%d)", s.fenced_writes, s.fenced_accepted,
                      s.fenced_rejected, s.fenced_errors));
  row("unfenced writes", absl::StrCat(s.unfenced_writes));
  if (s.proclamations + s.leader_views > 0) {
    row("election values proclaimed / views told",
        absl::StrFormat("%d / %d", s.proclamations, s.leader_views));
  }
  out += "faults injected\n";
  int64_t total = 0;
  for (const auto& [k, v] : s.faults_by_kind) {
    row(k, absl::StrCat(v));
    total += v;
  }
  row("total", absl::StrCat(total));
  out += "violations\n";
  row("mutual exclusion (overlapping holders)",
      absl::StrCat(s.mutual_exclusion));
  row("a reader with a writer", absl::StrCat(s.reader_with_writer));
  row("semaphore permits over the limit", absl::StrCat(s.permits_over_limit));
  row("stale fenced writes accepted", absl::StrCat(s.stale_fenced_accepted));
  row("fence tokens out of real-time order", absl::StrCat(s.fence_order));
  row("fence tokens issued twice", absl::StrCat(s.fence_duplicate));
  row("liveness (lock not re-acquired in time)", absl::StrCat(s.liveness));
  row("leftover lock keys", absl::StrCat(s.leftovers));
  row("callbacks not run exactly once",
      s.calls_checked == 0
          ? absl::StrCat(s.callbacks, " (no asynchronous calls recorded)")
          : absl::StrFormat("%d (of %d calls)", s.callbacks, s.calls_checked));
  row("observers told a view out of order", absl::StrCat(s.view_order));
  row("observers told a view no leader proclaimed",
      absl::StrCat(s.view_unknown));
  row("total", absl::StrCat(s.violations()));
  out += "informational\n";
  row("holders working past valid_until", absl::StrCat(s.late_holders));
  row("their fenced writes past valid_until",
      absl::StrFormat("%d (rejected %d, accepted though superseded %d)",
                      s.late_fenced_writes, s.late_fenced_rejected,
                      s.late_fenced_accepted_superseded));
  row("their unfenced writes past valid_until (landed)",
      absl::StrCat(s.late_unfenced_writes));
  row("longest wait for a free lock after heal",
      absl::StrFormat("%.0fms", s.max_gap_after_heal_ns / 1e6));
  if (!s.details.empty()) {
    out += "details (first " + std::to_string(kMaxDetails) + ")\n";
    for (const std::string& d : s.details) out += "  " + d + "\n";
  }
  return out;
}

namespace {

using Json = nlohmann::ordered_json;

// One value on one line (no spaces), keys in insertion order, strings escaped
// by the library; bytes that are not UTF-8 become U+FFFD.
std::string JsonLine(const Json& json) {
  return json.dump(/*indent=*/-1, /*indent_char=*/' ', /*ensure_ascii=*/false,
                   Json::error_handler_t::replace);
}

// `seconds` to `decimals` places (the file's resolution: microseconds for
// instants, milliseconds for durations), as a JSON number. Rounded by
// printf, as the file always was, so that the values do not change; the
// library then prints them without trailing zeros (4.0, 4.000102).
double Rounded(double seconds, int decimals) {
  double out = 0;
  (void)absl::SimpleAtod(absl::StrFormat("%.*f", decimals, seconds), &out);
  return out;
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  FILE* f = fopen(path.c_str(), "w");
  if (f == nullptr) return absl::InternalError("cannot write " + path);
  fwrite(text.data(), 1, text.size(), f);
  fclose(f);
  return absl::OkStatus();
}

}  // namespace

// The values are built with nlohmann::ordered_json; the layout around them
// stays hand-written so that the file keeps one fault and one critical section
// per line (a long run has thousands: grep and diff work on lines, and a
// library dump is either one huge line or one line per field).
absl::Status WriteJson(const History& h, const std::string& path) {
  const Summary& s = h.summary;
  auto sec = [&](int64_t t) { return Rounded(Sec(s, t), 6); };
  Json summary;
  summary["duration_s"] = Rounded((s.end - s.t0) / 1e9, 3);
  summary["heal_s"] = Rounded((s.heal - s.t0) / 1e9, 3);
  summary["acquisitions"] = s.acquisitions;
  summary["acquire_failures"] = s.acquire_failures;
  summary["fenced_writes"] = s.fenced_writes;
  summary["fenced_accepted"] = s.fenced_accepted;
  summary["fenced_rejected"] = s.fenced_rejected;
  summary["unfenced_writes"] = s.unfenced_writes;
  Json violations;
  violations["mutual_exclusion"] = s.mutual_exclusion;
  violations["reader_with_writer"] = s.reader_with_writer;
  violations["permits_over_limit"] = s.permits_over_limit;
  violations["stale_fenced_accepted"] = s.stale_fenced_accepted;
  violations["fence_order"] = s.fence_order;
  violations["fence_duplicate"] = s.fence_duplicate;
  violations["liveness"] = s.liveness;
  violations["leftovers"] = s.leftovers;
  violations["callbacks"] = s.callbacks;
  violations["view_order"] = s.view_order;
  violations["view_unknown"] = s.view_unknown;
  summary["violations"] = std::move(violations);
  summary["late_holders"] = s.late_holders;
  summary["late_fenced_writes"] = s.late_fenced_writes;
  summary["late_fenced_rejected"] = s.late_fenced_rejected;
  summary["late_unfenced_writes"] = s.late_unfenced_writes;
  Json faults = Json::object();
  for (const auto& [kind, n] : s.faults_by_kind) faults[kind] = n;
  summary["faults"] = std::move(faults);
  summary["details"] = s.details;

  std::string o = "{\n  \"summary\": " + JsonLine(summary) + ",\n";
  o += "  \"faults\": [\n";
  for (size_t i = 0; i < h.faults.size(); ++i) {
    const Fault& f = h.faults[i];
    Json fault;
    fault["kind"] = f.kind;
    fault["targets"] = f.targets;
    fault["start_s"] = sec(f.start);
    fault["end_s"] = sec(f.end);
    absl::StrAppend(&o, "    ", JsonLine(fault),
                    i + 1 < h.faults.size() ? ",\n" : "\n");
  }
  o += "  ],\n  \"sections\": [\n";
  for (size_t i = 0; i < h.sections.size(); ++i) {
    const Section& x = h.sections[i];
    Json section;
    section["client"] = x.client;
    section["seq"] = x.seq;
    section["resource"] = x.resource;
    section["token"] = x.token;
    section["fence"] = x.fence;
    section["votes"] = x.votes;
    section["acquire_start_s"] = sec(x.start);
    section["acquire_return_s"] = sec(x.ret);
    section["valid_until_s"] = sec(x.valid_until);
    section["work_start_s"] = sec(x.work_start);
    section["work_end_s"] = sec(x.work_end);
    section["release"] = x.release;
    Json writes = Json::array();
    for (const FencedWrite& w : x.fenced) {
      Json write;
      write["fence"] = w.fence;
      write["send_s"] = sec(w.send);
      write["answer_s"] = sec(w.ans);
      write["result"] = w.result;
      writes.push_back(std::move(write));
    }
    section["fenced_writes"] = std::move(writes);
    absl::StrAppend(&o, "    ", JsonLine(section),
                    i + 1 < h.sections.size() ? ",\n" : "\n");
  }
  o += "  ]\n}\n";
  return WriteFile(path, o);
}

absl::Status WriteSvg(const History& h, const std::string& path, double from_s,
                      double to_s) {
  const Summary& s = h.summary;
  int max_client = 0;
  for (const Section& x : h.sections) {
    max_client = std::max(max_client, x.client);
  }
  const int clients = max_client + 1;
  const double run_s = std::max(1.0, (s.end - s.t0) / 1e9 + 3);
  if (to_s <= from_s) to_s = run_s;
  from_s = std::max(0.0, from_s);
  const double span = std::max(0.001, to_s - from_s);
  const int64_t lo = s.t0 + static_cast<int64_t>(from_s * 1e9);
  const int64_t hi = s.t0 + static_cast<int64_t>(to_s * 1e9);
  const double left = 110, width = 1400, row = 10;
  // x of time t, clamped to the window.
  auto X = [&](int64_t t) {
    const double x = ((t - s.t0) / 1e9 - from_s) / span * width;
    return left + std::clamp(x, 0.0, width);
  };
  auto visible = [&](int64_t a, int64_t b) { return b >= lo && a <= hi; };
  const double fault_top = 45;
  std::map<std::string, int> kinds;
  for (const Fault& f : h.faults) kinds.emplace(f.kind, 0);
  int k = 0;
  for (auto& [name, i] : kinds) i = k++;
  const double violation_top = fault_top + row * kinds.size() + 5;
  const double res_top = violation_top + row + 20;
  const double lane = row * clients + 20;
  const double height = res_top + lane * h.resources.size() + 40;
  std::string o = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
      "height=\"%.0f\" font-family=\"monospace\" font-size=\"10\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      "<text x=\"5\" y=\"14\">redlock-torture, %.0fs-%.0fs of the run: one "
      "lane per resource, one row per client; green: holding within "
      "valid_until, red: working past it; orange: faults; blue line: "
      "heal</text>\n"
      "<text x=\"5\" y=\"28\">violations in the whole run: %d mutual "
      "exclusion, %d stale fenced write, %d fence order, %d fence duplicate, "
      "%d liveness, %d leftovers, %d callbacks (marked as red bands)</text>\n",
      left + width + 20, height, from_s, to_s, s.mutual_exclusion,
      s.stale_fenced_accepted, s.fence_order, s.fence_duplicate, s.liveness,
      s.leftovers, s.callbacks);
  // About twenty ticks, on round numbers of seconds.
  double step = 1;
  for (double c : {1, 2, 5, 10, 20, 30, 60, 120, 300, 600}) {
    step = c;
    if (span / c <= 25) break;
  }
  for (double t = std::ceil(from_s / step) * step; t <= to_s; t += step) {
    const double x = left + (t - from_s) / span * width;
    absl::StrAppendFormat(&o,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                          "y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%.1f\" "
                          "y=\"%.1f\">%.0fs</text>\n",
                          x, fault_top - 5, x, height - 25, x, height - 12, t);
  }
  if (s.heal > 0 && visible(s.heal, s.heal)) {
    absl::StrAppendFormat(&o,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                          "y2=\"%.1f\" stroke=\"blue\"/>\n",
                          X(s.heal), fault_top - 5, X(s.heal), height - 25);
  }
  for (const auto& [name, i] : kinds) {
    absl::StrAppendFormat(&o, "<text x=\"5\" y=\"%.1f\">%s</text>\n",
                          fault_top + row * i + 8, name);
  }
  for (const Fault& f : h.faults) {
    if (!visible(f.start, f.end)) continue;
    const double y = fault_top + row * kinds[f.kind];
    absl::StrAppendFormat(
        &o,
        "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
        "fill=\"orange\"><title>%s %s</title></rect>\n",
        X(f.start), y, std::max(1.0, X(f.end) - X(f.start)), row - 2, f.kind,
        f.targets);
  }
  absl::StrAppendFormat(&o, "<text x=\"5\" y=\"%.1f\">violations</text>\n",
                        violation_top + 8);
  std::map<std::string, size_t> lane_of;
  for (size_t r = 0; r < h.resources.size(); ++r) lane_of[h.resources[r]] = r;
  for (const Summary::Mark& m : s.marks) {
    if (!visible(m.start, m.end)) continue;
    const double x = X(m.start);
    const double w = std::max(2.0, X(m.end) - x);
    absl::StrAppendFormat(
        &o,
        "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
        "fill=\"red\"><title>%s on %s</title></rect>\n",
        x, violation_top, w, row - 2, m.kind, m.resource);
    auto it = lane_of.find(m.resource);
    if (it == lane_of.end()) continue;
    absl::StrAppendFormat(
        &o,
        "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
        "fill=\"red\" fill-opacity=\"0.2\" stroke=\"red\"><title>%s on "
        "%s</title></rect>\n",
        x, res_top + lane * it->second - 2, w, row * clients + 2, m.kind,
        m.resource);
  }
  for (size_t r = 0; r < h.resources.size(); ++r) {
    const double top = res_top + lane * r;
    absl::StrAppendFormat(&o, "<text x=\"5\" y=\"%.1f\">%s</text>\n", top + 10,
                          h.resources[r]);
    for (int c = 0; c < clients; ++c) {
      absl::StrAppendFormat(&o,
                            "<text x=\"%.0f\" y=\"%.1f\" font-size=\"8\" "
                            "fill=\"#888\">client %d</text>\n",
                            left - 45, top + row * c + 7, c);
    }
    for (const Section& x : h.sections) {
      if (x.resource != h.resources[r]) continue;
      const int64_t end = x.work_end ? x.work_end : x.valid_until;
      if (!visible(x.ret, end)) continue;
      const double y = top + row * x.client;
      const int64_t ok_end = std::min(end, x.valid_until);
      absl::StrAppendFormat(
          &o,
          "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
          "fill=\"green\" stroke=\"white\" stroke-width=\"0.5\"><title>client "
          "%d fence %d</title></rect>\n",
          X(x.ret), y, std::max(0.5, X(ok_end) - X(x.ret)), row - 2, x.client,
          x.fence);
      if (end > x.valid_until) {
        absl::StrAppendFormat(
            &o,
            "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
            "fill=\"red\"><title>client %d fence %d past valid_until"
            "</title></rect>\n",
            X(x.valid_until), y, std::max(0.5, X(end) - X(x.valid_until)),
            row - 2, x.client, x.fence);
      }
    }
  }
  o += "</svg>\n";
  return WriteFile(path, o);
}

}  // namespace redlock::torture
