// Copyright 2026 The redlock Authors.
//
// The torture tool's history files and their checker. Every client process
// appends one line per event to its own file (client-<id>.log) with plain
// write(2); the orchestrator writes nemesis.log (the run's parameters, every
// fault, the moment everything was healed, the leftover-key check). Each line
// is a kind followed by key=value fields; every time is CLOCK_BOOTTIME in
// nanoseconds, the clock all processes of the machine share and the one a
// lock's valid_until() is on (redlock::MonotonicClock):
//
//   ACQ     c s res token fence start ret vu   a lock was won (and votes)
//   ACQFAIL c res start ret code                an acquisition failed
//   WS/WE   c s t                               work started / ended
//   FW      c s res fence send ans result       fenced write (accepted,
//                                               rejected, error)
//   UW      c s res send ans result value       unfenced INCR
//   REL     c s t result                        release
//   VU      c s vu                              a keep-alive's later
//                                               validity (the largest of
//                                               ACQ's and these counts)
//   PROCLAIM c res epoch rev value start        a value a leader wrote (or
//                                               tried to)
//   VIEW    c w res epoch rev value t           a leader an observer was
//                                               told of
//   RUN     t0 end heal ttl_ms retry_max_ms ... (nemesis.log)
//   FAULT   kind targets start end              (nemesis.log)
//   HEAL    t                                   (nemesis.log)
//   LEFTCHECK masters ok / LEFTOVER master key  (nemesis.log)
//
// CheckHistory(dir) reads only these files: it does not trust the library.
// It is ReadHistory(dir), which turns the files into a History, followed by
// CheckHistory(History*), which judges a History however it was made. A
// program that records its operations in memory (the deterministic simulator
// in tests/sim) builds a History itself and calls the same checker:
//
//   History h;
//   h.summary.t0 = 0;  h.summary.end = end;  h.summary.heal = heal;
//   h.summary.ttl_ns = ttl;  h.summary.retry_max_ns = retry_max;
//   h.summary.leftover_check_ran = true;
//   h.resources = {"r0"};
//   h.sections.push_back(...);  h.calls.push_back(...);  ...
//   CheckHistory(&h);
//   if (h.summary.violations() != 0) ... FormatSummary(h.summary) ...
//
// Every time in a History is an int64 count of nanoseconds on one monotonic
// clock that every recorded event shares (CLOCK_BOOTTIME for the torture
// tool, the simulated clock for the simulator). Only differences and order
// matter; 0 means "not recorded" where a field says so.

#ifndef REDLOCK_TOOLS_TORTURE_HISTORY_H_
#define REDLOCK_TOOLS_TORTURE_HISTORY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace redlock::torture {

// Monotonic now, in ns.
int64_t NowNs();

// Appends one line (a trailing newline is added) with a single write(2).
void AppendLine(int fd, const std::string& line);

// A write to the fenced storage during a section, as the client saw it.
struct FencedWrite {
  int64_t fence = 0;   // The token sent with it.
  int64_t send = 0;    // When it was sent.
  int64_t ans = 0;     // When the storage's answer came back.
  std::string result;  // accepted, rejected, error
};

// One won lock: a critical section. Its builder fills every field it knows;
// those marked [judged] decide violations, the others only appear in the
// report (details, history.json, timeline).
struct Section {
  int client = -1;
  int64_t seq = -1;      // The client's count of its won locks.
  std::string resource;  // [judged]
  std::string token;
  int64_t fence = 0;  // [judged] 0: no token; the token checks skip it.
  // [judged] A reader (AcquireOptions::shared): readers may overlap each
  // other, never a writer (an exclusive section of the same resource).
  bool shared = false;
  // [judged] A semaphore's permits (AcquirePermits): limit > 0, and the
  // permits this section holds. Judged apart from the locks of the same
  // name: at no instant more permits than the limit.
  int limit = 0;
  int permits = 0;
  // The library's own account of the winning attempt, one letter per
  // master: g granted, d denied, f failed, p pending.
  std::string votes;
  // [judged] When the acquisition was called, and when it returned with the
  // lock (an asynchronous one: when its callback ran). Nonzero.
  int64_t start = 0, ret = 0;
  // [judged] The end of the validity the library reported for the lock
  // (Lock::valid_until(), clock drift already taken off), on the shared
  // clock.
  int64_t valid_until = 0;
  // When the holder started and stopped using the lock; 0: not recorded.
  // [judged] work_end: a holder that stops early (to release, say) must
  // record it, or the section counts as held until valid_until and a next
  // holder after the release is reported as overlapping.
  int64_t work_start = 0, work_end = 0;
  std::vector<FencedWrite> fenced;  // [judged]
  // Unfenced writes made in the section, and how many of them were sent past
  // valid_until. Counted only: no storage can reject them.
  int unfenced = 0, unfenced_late = 0;
  // [judged] The release's result ("ok": the library released the key; any
  // other text: it did not; "": never released) and when it returned. For
  // the liveness check a lock released "ok" is free from release_at on, any
  // other only once its key expired, at ret + ttl_ns.
  std::string release;
  int64_t release_at = 0;
  // End of the interval during which it may count as the holder:
  // min(work_end, valid_until), or valid_until if work_end is not recorded.
  int64_t HoldEnd() const;
};

// An acquisition that did not win. Counted only, per status code; the
// liveness check does not read failures (see CheckHistory(History*)).
struct AcquireFailure {
  int client = -1;
  std::string resource;
  int64_t start = 0, ret = 0;
  std::string code;  // absl::StatusCodeToString(), e.g. "UNAVAILABLE"
};

// Elections (redlock/election.h). A leadership is recorded as a Section
// of the election's name (a fenced lock: its fence is the epoch), so the
// lock rules judge leaders: at most one valid at a time, epochs increasing
// and never given twice, a stale leader's fenced writes refused. What
// observers were told is judged against what leaders wrote: these two.

// A value a leader wrote, or tried to write, as its election's record: the
// campaign's value at revision 1 (recorded once the campaign's lease was
// won, whether or not the campaign then succeeded), then each
// Proclaim()'s, whatever its outcome (a write that failed may still have
// landed on some masters).
struct Proclamation {
  int client = -1;
  std::string election;             // [judged]
  int64_t epoch = 0, revision = 0;  // [judged]
  std::string value;                // [judged]
  int64_t start = 0;                // [judged] When it was sent.
};

// A leader an observer was told of (ObserveOptions::on_leader).
struct LeaderView {
  int client = -1;       // [judged] The observer's client.
  int64_t watch = -1;    // [judged] Which of the client's observations.
  std::string election;  // [judged]
  int64_t epoch = 0, revision = 0;  // [judged]
  std::string value;                // [judged]
  int64_t at = 0;  // [judged] When it was told; one observation's views
                   // are judged in this order (ties: as listed).
};

// A fault the nemesis injected, for the report and the timeline.
struct Fault {
  std::string kind;
  std::string targets;
  int64_t start = 0, end = 0;
};

// An asynchronous operation a client started, and how many times its
// callback ran. The library promises exactly once, also on error and on
// shutdown; `completions` must be read after quiescence (every timer fired
// or cancelled, every connection closed, every owner destroyed), when no
// callback can run any more. The blocking torture client records none.
struct Call {
  int client = -1;
  int64_t id = -1;       // Unique per client; for the report.
  std::string kind;      // "acquire", "extend", "release"...; for the report.
  std::string resource;  // May be empty; places its mark on the timeline.
  int64_t start = 0;     // When the operation was called.
  int completions = 0;   // How many times its callback ran.
};

// A lock key found on a master after the run (every client gone, every
// fault healed): a lock that no release and no expiry removed.
struct Leftover {
  std::string master;  // Which master (the torture tool: its index).
  std::string key;     // "?" if the master could not be read.
  std::string value;   // The key's value, or why it could not be read.
};

// The run's parameters, filled by whoever builds the History (marked
// [input]), and what CheckHistory(History*) found: every other field.
struct Summary {
  // [input] Start and end of the run (end: when the clients were told to
  // stop; only acquisitions that returned by then count for liveness).
  int64_t t0 = 0, end = 0;
  // [input] When every fault was healed; 0: no liveness check.
  int64_t heal = 0;
  // [input] The TTL clients asked for, and the longest delay between two
  // acquisition attempts of a client (the liveness bound, with the TTL).
  int64_t ttl_ns = 0, retry_max_ns = 0;
  // [input] Whether the masters were searched for leftover keys after the
  // run (History::leftover_keys holds what was found). If false, that is
  // one leftover violation: a run whose leftovers were not looked for does
  // not pass.
  bool leftover_check_ran = false;

  // Operations.
  int64_t acquisitions = 0, acquire_failures = 0;
  int64_t fenced_writes = 0, fenced_accepted = 0, fenced_rejected = 0,
          fenced_errors = 0, unfenced_writes = 0;
  int64_t calls_checked = 0;  // History::calls.
  int64_t proclamations = 0, leader_views = 0;
  std::map<std::string, int64_t> faults_by_kind;
  std::map<std::string, int64_t> acquire_failures_by_code;
  // Violations.
  int64_t mutual_exclusion = 0;
  // A reader valid while a writer of the same resource was: one per
  // section that began inside the other side's.
  int64_t reader_with_writer = 0;
  // A semaphore section that began while the permits already held, with its
  // own, exceeded the limit: one per such section.
  int64_t permits_over_limit = 0;
  int64_t stale_fenced_accepted = 0;
  // Sections whose acquisition started after another section of the same
  // resource had returned, yet got a fence token no larger than it: one per
  // such later section, however many earlier ones it fails to exceed.
  int64_t fence_order = 0;
  // Sections that got a fence token another section of the same resource
  // had already got: k sections sharing a token count k - 1.
  int64_t fence_duplicate = 0;
  int64_t liveness = 0;
  // One per leftover key, plus one if the leftover check did not run.
  int64_t leftovers = 0;
  // Calls whose callback did not run exactly once (never, or twice or
  // more): one per such call.
  int64_t callbacks = 0;
  // Elections (CheckLeaderViews()): views told out of (epoch, revision)
  // order, and views of no leader's proclamation: one per such view.
  int64_t view_order = 0;
  int64_t view_unknown = 0;
  // Informational.
  int64_t late_holders = 0;          // work ended past valid_until
  int64_t late_fenced_writes = 0;    // sent past valid_until
  int64_t late_fenced_rejected = 0;  // of those, rejected by the storage
  int64_t late_fenced_accepted_superseded = 0;  // accepted though a higher
                                                // token was accepted before
  int64_t late_unfenced_writes = 0;
  int64_t max_gap_after_heal_ns = 0;
  std::vector<std::string> details;  // One line per violation (capped).
  // Every violation, for the timeline: its kind ("mutual exclusion", "stale
  // fenced write", "fence order", "fence duplicate", "liveness",
  // "callback"), resource and time span.
  struct Mark {
    std::string kind;
    std::string resource;
    int64_t start = 0, end = 0;
  };
  std::vector<Mark> marks;

  int64_t violations() const {
    return mutual_exclusion + reader_with_writer + permits_over_limit +
           stale_fenced_accepted + fence_order + fence_duplicate + liveness +
           leftovers + callbacks + view_order + view_unknown;
  }
};

// A run: what happened ([input], in any order) and its Summary.
struct History {
  std::vector<Section> sections;                    // [input] won locks
  std::vector<AcquireFailure> failed_acquisitions;  // [input]
  std::vector<Fault> faults;                        // [input]
  // [input] Every resource the clients tried to lock, including those they
  // never won: liveness is judged per resource listed here. CheckHistory()
  // adds the sections' resources, sorts and deduplicates it.
  std::vector<std::string> resources;
  std::vector<Call> calls;                  // [input] empty: nothing to check
  std::vector<Leftover> leftover_keys;      // [input] see leftover_check_ran
  std::vector<Proclamation> proclamations;  // [input] elections only
  std::vector<LeaderView> views;            // [input] elections only
  Summary summary;
};

// Reads every *.log in `dir` (the format above) into a History without
// judging it: sections (those without an ACQ record are dropped; their
// unfenced writes are still added to summary.unfenced_writes), failures,
// faults, resources, leftover keys and the summary's [input] fields.
// kNotFound if `dir` cannot be read, has no *.log or no RUN line.
absl::StatusOr<History> ReadHistory(const std::string& dir);

// ReadHistory(dir), then CheckHistory(&h): the history of a torture run,
// judged.
absl::StatusOr<History> CheckHistory(const std::string& dir);

// Runs every check on `h`, built in memory or read from files. Reads the
// [input] and [judged] fields of h->sections, h->failed_acquisitions,
// h->faults, h->resources, h->calls, h->leftover_keys and h->summary; adds
// its counts to the other fields of h->summary, so call it once per History
// on a Summary whose counts are still zero; completes h->resources (see
// there). The checks, per resource:
//   mutual exclusion   taking the sections in order of `ret`, one that
//                      returns before the largest HoldEnd() of those before
//                      it: two holders at once. One per such section.
//                      Readers (Section::shared) are left out of it.
//   reader with writer taking them in the same order, a reader that returns
//                      while a writer is held, or a writer while a reader
//                      is: one per such section. Readers may overlap.
//   permits over limit a semaphore's sections (Section::limit > 0, judged
//                      apart from the lock of the same name), in the same
//                      order: one that returns while the permits held, its
//                      own included, exceed the smallest limit among them.
//                      A section is held until HoldEnd(): valid_until has
//                      the drift bound taken off already.
//   stale fenced write an accepted fenced write whose token is lower than
//                      one the storage had accepted (answered) before it was
//                      sent. One per write.
//   liveness           only if summary.heal > 0 and summary.end > heal. The
//                      lock is free from the latest of: the heal; the end of
//                      every earlier section (its release_at if released
//                      "ok", else ret + ttl_ns); the next acquisition's own
//                      start. Each section returning in [heal, end] must
//                      return within ttl_ns + retry_max_ns + 300ms of that;
//                      one per late section. A resource no section won in
//                      [heal, end] is one violation if end - heal exceeds
//                      that bound. A semaphore's sections are judged apart,
//                      the same way (free once every earlier holder is
//                      gone). Only sections are read, not failures: the
//                      check assumes that some client keeps trying every
//                      listed resource until summary.end.
//   fence tokens       CheckFenceTokens().
// And across the run:
//   leader views       CheckLeaderViews().
//   leftovers          one per h->leftover_keys entry, and one if
//                      summary.leftover_check_ran is false.
//   callbacks          one per call whose `completions` is not 1.
// Each violation adds a line to summary.details (capped; times in seconds
// since summary.t0) and, leftovers excepted, a Summary::Mark.
void CheckHistory(History* h);

// The fence tokens the sections got, judged from their ACQ records alone
// (CheckHistory() calls it; separate so it can be tested without files).
// Per resource, among sections with a token (fence > 0):
//   order      a section whose acquisition started after another's returned
//              (start > other's ret) must have a strictly larger token: the
//              storage cannot tell a stale holder from the current one
//              otherwise. Sections whose acquisitions overlap in time are
//              not ordered, so their tokens may come in either order.
//   duplicate  no token is given out twice.
// Adds to s->fence_order and s->fence_duplicate, and appends to s->marks and
// s->details (times relative to s->t0). O(n log n) in the sections.
void CheckFenceTokens(const std::vector<Section>& sections, Summary* s);

// What observers of elections were told (ObserveOptions::on_leader),
// judged against what leaders proclaimed (CheckHistory() calls it):
//   order    each observation's views (per client and watch, in order of
//            `at`) strictly increase in (epoch, revision): an observer
//            never goes back, nor is told the same view twice. One per
//            view that does not exceed the one before it.
//   unknown  each view is a real leader's: some proclamation of the same
//            election, epoch, revision and value, started no later than
//            the view was told. One per view without one.
// Adds to s->view_order, s->view_unknown, s->proclamations and
// s->leader_views; appends to s->marks and s->details.
void CheckLeaderViews(const std::vector<Proclamation>& proclamations,
                      const std::vector<LeaderView>& views, Summary* s);

// The summary table, for stdout.
std::string FormatSummary(const Summary& s);
// history.json and timeline.svg into `out_dir`.
absl::Status WriteJson(const History& h, const std::string& path);
// The timeline shows the run from `from_s` to `to_s` seconds after its
// start; to_s <= from_s means up to the end.
absl::Status WriteSvg(const History& h, const std::string& path,
                      double from_s = 0, double to_s = 0);

}  // namespace redlock::torture

#endif  // REDLOCK_TOOLS_TORTURE_HISTORY_H_
