// Copyright 2026 The redlock Authors.
//
// redlock-e2e-bench: end-to-end latency, throughput, contention and client
// cost of the library on real redis-server processes, each figure next to a
// floor measured in the same run.
//
//   redlock-e2e-bench                       # starts its own 7 masters
//   redlock-e2e-bench --quick               # CI smoke, well under 20s
//   redlock-e2e-bench --masters=redis://127.0.0.1:7001,...  # external masters
//   redlock-e2e-bench --callgrind=async --callgrind_masters=5 --masters=...
//
// Loopback latency on a shared machine moves by several times within
// seconds, so nothing here is compared with another run. Every latency
// configuration runs in blocks interleaved with blocks of the floor (one
// blocking hiredis connection to one master doing SET NX PX + EVALSHA
// compare-and-delete: one lock cycle without a quorum), and the headline of
// each configuration is its ratio to the floor blocks that ran right before
// its own blocks.
//
// Phases:
//   latency     floor; raw fan-out (the cheapest correct N-master cycle a
//               hand-written hiredis client could do: pipelined fan-out,
//               poll, quorum for acquire, all for release); AsyncRedlock
//               driven on this thread; blocking Redlock; for N = 1, 3, 5, 7.
//               Also the client CPU per cycle (getrusage).
//   fault       acquire latency with one of five masters behind a FaultProxy
//               adding latency each way, interleaved with a client that has
//               no slow master.
//   throughput  one AsyncRedlock on one loop at N = 5 with 1, 8, 64 locks in
//               flight, interleaved with the masters' own capacity for the
//               same commands measured with redis-benchmark.
//   contention  8 blocking clients (own connections) on one resource.
//
// Output: a Markdown report on stdout, progress on stderr, every figure and
// the environment as JSON (--out_json), latency distributions for gnuplot
// (--out_cdf). All traffic goes to the masters given (loopback unless
// --allow_remote) or to servers this process starts on 127.0.0.1 and stops.

#include <event2/event.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <poll.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/config.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "redlock/async_redlock.h"
#include "redlock/lock.h"
#include "redlock/options.h"
#include "redlock/redlock.h"
#include "src/scripts.h"
#include "src/token.h"
#include "tests/support/fault_proxy.h"
#include "tests/support/redis_server.h"

extern char** environ;

ABSL_FLAG(std::string, masters, "",
          "Comma-separated redis:// URIs of external masters (loopback only "
          "unless --allow_remote). Default: start 7 redis-server processes on "
          "free loopback ports and stop them at the end.");
ABSL_FLAG(bool, allow_remote, false,
          "Accept external masters that are not on a loopback address.");
ABSL_FLAG(std::string, out_json, "", "Write every figure as JSON here.");
ABSL_FLAG(std::string, out_cdf, "",
          "Write latency distributions for gnuplot to PREFIX-cycle.tsv and "
          "PREFIX-acquire.tsv.");
ABSL_FLAG(bool, quick, false,
          "CI smoke mode: a few hundred cycles per configuration, short "
          "throughput and contention runs (overrides the counts below).");
ABSL_FLAG(std::string, phases, "latency,fault,throughput,contention",
          "Which phases to run, comma-separated.");
ABSL_FLAG(int, rounds, 16,
          "Latency phase: interleaved rounds; each round runs, for every "
          "configuration, a floor block and then the configuration's block.");
ABSL_FLAG(int, block_cycles, 400, "Latency phase: lock cycles per block.");
ABSL_FLAG(absl::Duration, ttl, absl::Seconds(10),
          "TTL of the locks in the latency, fault and throughput phases.");
ABSL_FLAG(int, fault_rounds, 16, "Fault phase: interleaved rounds.");
ABSL_FLAG(int, fault_block, 250, "Fault phase: acquisitions per block.");
ABSL_FLAG(absl::Duration, fault_latency, absl::Milliseconds(20),
          "Fault phase: latency the proxy adds in each direction.");
ABSL_FLAG(int, throughput_rounds, 4, "Throughput phase: interleaved rounds.");
ABSL_FLAG(absl::Duration, throughput_block, absl::Seconds(1),
          "Throughput phase: how long each in-flight setting runs per round.");
ABSL_FLAG(int, ceiling_requests, 100000,
          "Throughput phase: redis-benchmark requests per master and command "
          "for the ceiling.");
ABSL_FLAG(std::string, redis_benchmark, "redis-benchmark",
          "The redis-benchmark binary (Debian: redis-tools).");
ABSL_FLAG(int, contenders, 8, "Contention phase: clients on one resource.");
ABSL_FLAG(absl::Duration, contention_time, absl::Seconds(6),
          "Contention phase: how long new acquisitions start.");
ABSL_FLAG(absl::Duration, contention_ttl, absl::Seconds(1),
          "Contention phase: lock TTL; each Acquire() may wait twice this.");
ABSL_FLAG(std::string, callgrind, "",
          "Run only one configuration (floor, raw, async or blocking) for "
          "--callgrind_cycles after a warm-up, then exit. For valgrind "
          "--tool=callgrind: run it with two cycle counts and take the "
          "difference.");
ABSL_FLAG(int, callgrind_masters, 5, "Masters for --callgrind (not floor).");
ABSL_FLAG(int, callgrind_cycles, 200, "Cycles for --callgrind.");

namespace redlock::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;
using SteadyTime = SteadyClock::time_point;

constexpr absl::string_view kKeyPrefix = "redlock-bench:";

SteadyTime Now() { return SteadyClock::now(); }
double MicrosBetween(SteadyTime a, SteadyTime b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}
double SecondsBetween(SteadyTime a, SteadyTime b) {
  return std::chrono::duration<double>(b - a).count();
}

void Log(const std::string& line) {
  std::fprintf(stderr, "[e2e] %s\n", line.c_str());
  std::fflush(stderr);
}

// CPU seconds of this thread (RUSAGE_THREAD) or process (RUSAGE_SELF).
struct Cpu {
  double user = 0;
  double sys = 0;
  double total() const { return user + sys; }
  Cpu operator-(const Cpu& o) const { return {user - o.user, sys - o.sys}; }
  Cpu& operator+=(const Cpu& o) {
    user += o.user;
    sys += o.sys;
    return *this;
  }
};

Cpu CpuNow(int who) {
  rusage ru{};
  getrusage(who, &ru);
  return {ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
          ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6};
}

// A field of /proc/self/status in kB (VmRSS, VmHWM), or -1.
int64_t ProcStatusKb(absl::string_view field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, absl::StrCat(field, ":"))) {
      int64_t kb = -1;
      std::vector<absl::string_view> parts =
          absl::StrSplit(line, ' ', absl::SkipEmpty());
      if (parts.size() >= 2 && absl::SimpleAtoi(parts[1], &kb)) return kb;
    }
  }
  return -1;
}

// --- Statistics ---------------------------------------------------------

struct Dist {
  int64_t count = 0;
  double min = 0, mean = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
};

// Nearest-rank quantile of sorted samples.
double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * sorted.size()));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

Dist Summarize(std::vector<double> v) {
  Dist d;
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  d.count = static_cast<int64_t>(v.size());
  d.min = v.front();
  d.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  d.mean = sum / v.size();
  d.p50 = Quantile(v, 0.50);
  d.p90 = Quantile(v, 0.90);
  d.p99 = Quantile(v, 0.99);
  d.p999 = Quantile(v, 0.999);
  return d;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return Quantile(v, 0.5);
}

double Ratio(double a, double b) { return b > 0 ? a / b : 0; }

// --- JSON ----------------------------------------------------------------

class Json {
 public:
  Json& Open(absl::string_view key = {}) { return Begin(key, '{'); }
  Json& OpenArray(absl::string_view key = {}) { return Begin(key, '['); }
  Json& Close() {
    out_ += stack_.back() == '{' ? '}' : ']';
    stack_.pop_back();
    first_ = false;
    return *this;
  }
  Json& Str(absl::string_view key, absl::string_view value) {
    Key(key);
    Quote(value);
    return *this;
  }
  Json& Num(absl::string_view key, double value) {
    Key(key);
    if (std::isfinite(value)) {
      absl::StrAppend(&out_, absl::StrFormat("%.6g", value));
    } else {
      out_ += "null";
    }
    return *this;
  }
  Json& Int(absl::string_view key, int64_t value) {
    Key(key);
    absl::StrAppend(&out_, value);
    return *this;
  }
  Json& Bool(absl::string_view key, bool value) {
    Key(key);
    out_ += value ? "true" : "false";
    return *this;
  }
  Json& Dist(absl::string_view key, const bench::Dist& d) {
    Open(key);
    Int("count", d.count);
    Num("min_us", d.min);
    Num("mean_us", d.mean);
    Num("p50_us", d.p50);
    Num("p90_us", d.p90);
    Num("p99_us", d.p99);
    Num("p999_us", d.p999);
    Num("max_us", d.max);
    return Close();
  }
  Json& Nums(absl::string_view key, const std::vector<double>& values) {
    OpenArray(key);
    for (double v : values) Num({}, v);
    return Close();
  }
  const std::string& str() const { return out_; }

 private:
  Json& Begin(absl::string_view key, char bracket) {
    Key(key);
    out_ += bracket;
    stack_.push_back(bracket);
    first_ = true;
    return *this;
  }
  void Key(absl::string_view key) {
    if (!stack_.empty() && !first_) out_ += ',';
    first_ = false;
    if (!stack_.empty() && stack_.back() == '{') {
      out_ += '\n';
      out_.append(2 * stack_.size(), ' ');
      Quote(key);
      out_ += ": ";
    }
  }
  void Quote(absl::string_view s) {
    out_ += '"';
    for (char c : s) {
      if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        absl::StrAppend(&out_, absl::StrFormat("\\u%04x", c));
      } else {
        out_ += c;
      }
    }
    out_ += '"';
  }

  std::string out_;
  std::string stack_;
  bool first_ = true;
};

// --- Masters -------------------------------------------------------------

struct Master {
  std::string uri;
  MasterAddress address;
};

bool IsLoopback(absl::string_view host) {
  return absl::StartsWith(host, "127.") || host == "::1" || host == "localhost";
}

// Replaces host:port in a redis:// URI, keeping credentials and db.
std::string WithHostPort(absl::string_view uri, absl::string_view host_port) {
  size_t start = uri.find("://");
  start = start == absl::string_view::npos ? 0 : start + 3;
  size_t end = uri.find('/', start);
  if (end == absl::string_view::npos) end = uri.size();
  size_t at = uri.substr(0, end).rfind('@');
  if (at != absl::string_view::npos && at >= start) start = at + 1;
  return absl::StrCat(uri.substr(0, start), host_port, uri.substr(end));
}

std::vector<std::string> UrisOf(const std::vector<Master>& masters, int n) {
  std::vector<std::string> uris;
  for (int i = 0; i < n; ++i) uris.push_back(masters[i].uri);
  return uris;
}

// --- Blocking hiredis ---------------------------------------------------

struct ContextFree {
  void operator()(redisContext* c) const { redisFree(c); }
};
using ContextPtr = std::unique_ptr<redisContext, ContextFree>;
struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyFree>;

std::string DescribeReply(const redisReply* r) {
  if (r == nullptr) return "no reply";
  switch (r->type) {
    case REDIS_REPLY_STATUS:
      return absl::StrCat("+", r->str);
    case REDIS_REPLY_ERROR:
      return absl::StrCat("-", r->str);
    case REDIS_REPLY_INTEGER:
      return absl::StrCat(":", r->integer);
    case REDIS_REPLY_NIL:
      return "nil";
    case REDIS_REPLY_STRING:
      return absl::StrCat("\"", absl::string_view(r->str, r->len), "\"");
    default:
      return "array";
  }
}

absl::StatusOr<ReplyPtr> SyncCommand(redisContext* c,
                                     const std::vector<std::string>& argv) {
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  for (const std::string& a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  ReplyPtr reply(static_cast<redisReply*>(redisCommandArgv(
      c, static_cast<int>(argv.size()), ptrs.data(), lens.data())));
  if (reply == nullptr) {
    return absl::UnavailableError(absl::StrCat(argv[0], ": ", c->errstr));
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    return absl::InternalError(
        absl::StrCat(argv[0], ": ", DescribeReply(reply.get())));
  }
  return reply;
}

absl::StatusOr<ContextPtr> ConnectSync(const MasterAddress& address) {
  const timeval tv = {2, 0};
  ContextPtr c(redisConnectWithTimeout(address.host.c_str(), address.port, tv));
  if (c == nullptr) return absl::InternalError("cannot allocate a context");
  if (c->err != 0) {
    return absl::UnavailableError(
        absl::StrCat("connect to ", address.Name(), ": ", c->errstr));
  }
  redisSetTimeout(c.get(), tv);
  if (address.has_password) {
    std::vector<std::string> auth = {"AUTH"};
    if (!address.user.empty()) auth.push_back(address.user);
    auth.push_back(address.password);
    absl::StatusOr<ReplyPtr> r = SyncCommand(c.get(), auth);
    if (!r.ok()) return r.status();
  }
  if (address.db != 0) {
    absl::StatusOr<ReplyPtr> r =
        SyncCommand(c.get(), {"SELECT", absl::StrCat(address.db)});
    if (!r.ok()) return r.status();
  }
  return c;
}

absl::Status LoadReleaseScript(redisContext* c) {
  const internal::Script& script = internal::ReleaseScript();
  absl::StatusOr<ReplyPtr> r =
      SyncCommand(c, {"SCRIPT", "LOAD", std::string(script.source)});
  if (!r.ok()) return r.status();
  if ((*r)->type != REDIS_REPLY_STRING || (*r)->str != script.sha1) {
    return absl::InternalError(absl::StrCat("SCRIPT LOAD returned ",
                                            DescribeReply(r->get()),
                                            ", expected ", script.sha1));
  }
  return absl::OkStatus();
}

// "INFO server" field of one master, e.g. redis_version.
std::string InfoField(const MasterAddress& address, absl::string_view field) {
  absl::StatusOr<ContextPtr> c = ConnectSync(address);
  if (!c.ok()) return "";
  absl::StatusOr<ReplyPtr> r = SyncCommand(c->get(), {"INFO", "server"});
  if (!r.ok() || (*r)->type != REDIS_REPLY_STRING) return "";
  for (absl::string_view line :
       absl::StrSplit(absl::string_view((*r)->str, (*r)->len), '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, absl::StrCat(field, ":"))) {
      return std::string(line);
    }
  }
  return "";
}

// --- Cycle runners --------------------------------------------------------

struct CycleSample {
  double acquire_us = 0;
  double cycle_us = 0;
};

// One way of taking and releasing a lock, one cycle at a time.
class Runner {
 public:
  virtual ~Runner() = default;
  // One acquire + release, timed.
  virtual absl::Status Cycle(CycleSample* sample) = 0;
  // Lets background work (connecting) progress for `d`.
  virtual void Idle(absl::Duration d) { absl::SleepFor(d); }
  // Whose CPU time a block is charged to: the calling thread when the whole
  // client runs on it, the process when the client has threads of its own.
  virtual int cpu_scope() const { return RUSAGE_THREAD; }
};

std::string TtlMillis(absl::Duration ttl) {
  return absl::StrCat(std::max<int64_t>(1, absl::ToInt64Milliseconds(ttl)));
}

// The floor: one blocking hiredis connection to one master, SET NX PX and
// the EVALSHA compare-and-delete, with a fresh getrandom() token per cycle
// as any correct lock client needs. No quorum, no fan-out, no event loop.
class FloorRunner : public Runner {
 public:
  static absl::StatusOr<std::unique_ptr<FloorRunner>> Create(
      const MasterAddress& address, absl::Duration ttl) {
    absl::StatusOr<ContextPtr> c = ConnectSync(address);
    if (!c.ok()) return c.status();
    if (absl::Status s = LoadReleaseScript(c->get()); !s.ok()) return s;
    return std::unique_ptr<FloorRunner>(
        new FloorRunner(*std::move(c), TtlMillis(ttl)));
  }

  absl::Status Cycle(CycleSample* sample) override {
    const SteadyTime t0 = Now();
    absl::StatusOr<std::string> token = internal::NewToken();
    if (!token.ok()) return token.status();
    const char* set_argv[] = {"SET", key_.data(), token->data(),
                              "NX",  "PX",        ttl_ms_.data()};
    const size_t set_lens[] = {3, key_.size(), token->size(),
                               2, 2,           ttl_ms_.size()};
    ReplyPtr set(static_cast<redisReply*>(
        redisCommandArgv(c_.get(), 6, set_argv, set_lens)));
    if (set == nullptr || set->type != REDIS_REPLY_STATUS ||
        std::strcmp(set->str, "OK") != 0) {
      return absl::InternalError(
          absl::StrCat("floor SET: ", set ? DescribeReply(set.get())
                                          : std::string(c_->errstr)));
    }
    const SteadyTime t1 = Now();
    const std::string& sha = internal::ReleaseScript().sha1;
    const char* del_argv[] = {"EVALSHA", sha.data(), "1", key_.data(),
                              token->data()};
    const size_t del_lens[] = {7, sha.size(), 1, key_.size(), token->size()};
    ReplyPtr del(static_cast<redisReply*>(
        redisCommandArgv(c_.get(), 5, del_argv, del_lens)));
    if (del == nullptr || del->type != REDIS_REPLY_INTEGER ||
        del->integer != 1) {
      return absl::InternalError(
          absl::StrCat("floor EVALSHA: ", del ? DescribeReply(del.get())
                                              : std::string(c_->errstr)));
    }
    const SteadyTime t2 = Now();
    sample->acquire_us = MicrosBetween(t0, t1);
    sample->cycle_us = MicrosBetween(t0, t2);
    return absl::OkStatus();
  }

 private:
  FloorRunner(ContextPtr c, std::string ttl_ms)
      : c_(std::move(c)),
        key_(absl::StrCat(kKeyPrefix, "floor")),
        ttl_ms_(std::move(ttl_ms)) {}

  ContextPtr c_;
  const std::string key_;
  const std::string ttl_ms_;
};

// The cheapest correct N-master cycle a hand-written client could do with
// hiredis: SET to all N written before any reply is read, poll(), acquire
// done at a quorum of OKs; EVALSHA to all, release done when every master
// answered. No timers, no retries, no per-master bookkeeping: what the
// machine itself costs for an N-master cycle.
class RawFanoutRunner : public Runner {
 public:
  static absl::StatusOr<std::unique_ptr<RawFanoutRunner>> Create(
      const std::vector<Master>& masters, int n, absl::Duration ttl) {
    std::vector<ContextPtr> cs;
    for (int i = 0; i < n; ++i) {
      absl::StatusOr<ContextPtr> c = ConnectSync(masters[i].address);
      if (!c.ok()) return c.status();
      if (absl::Status s = LoadReleaseScript(c->get()); !s.ok()) return s;
      cs.push_back(*std::move(c));
    }
    return std::unique_ptr<RawFanoutRunner>(new RawFanoutRunner(
        std::move(cs), TtlMillis(ttl), absl::StrCat(kKeyPrefix, "raw-", n)));
  }

  absl::Status Cycle(CycleSample* sample) override {
    const int n = static_cast<int>(cs_.size());
    const int quorum = n / 2 + 1;
    const SteadyTime t0 = Now();
    absl::StatusOr<std::string> token = internal::NewToken();
    if (!token.ok()) return token.status();
    const char* set_argv[] = {"SET", key_.data(), token->data(),
                              "NX",  "PX",        ttl_ms_.data()};
    const size_t set_lens[] = {3, key_.size(), token->size(),
                               2, 2,           ttl_ms_.size()};
    for (int i = 0; i < n; ++i) {
      redisAppendCommandArgv(cs_[i].get(), 6, set_argv, set_lens);
      set_pending_[i] = 1;
    }
    if (absl::Status s = FlushAll(); !s.ok()) return s;
    int granted = 0;
    absl::Status s = Pump(
        [&](int i, const redisReply* r) -> absl::Status {
          if (r->type != REDIS_REPLY_STATUS || std::strcmp(r->str, "OK") != 0) {
            return absl::InternalError(
                absl::StrCat("raw SET: ", DescribeReply(r)));
          }
          ++granted;
          return absl::OkStatus();
        },
        [&] { return granted >= quorum; });
    if (!s.ok()) return s;
    const SteadyTime t1 = Now();

    const std::string& sha = internal::ReleaseScript().sha1;
    const char* del_argv[] = {"EVALSHA", sha.data(), "1", key_.data(),
                              token->data()};
    const size_t del_lens[] = {7, sha.size(), 1, key_.size(), token->size()};
    for (int i = 0; i < n; ++i) {
      redisAppendCommandArgv(cs_[i].get(), 5, del_argv, del_lens);
      del_pending_[i] = 1;
    }
    if (s = FlushAll(); !s.ok()) return s;
    int released = 0;
    s = Pump(
        [&](int i, const redisReply* r) -> absl::Status {
          if (r->type != REDIS_REPLY_INTEGER || r->integer != 1) {
            return absl::InternalError(
                absl::StrCat("raw EVALSHA: ", DescribeReply(r)));
          }
          ++released;
          return absl::OkStatus();
        },
        [&] { return released == n; });
    if (!s.ok()) return s;
    const SteadyTime t2 = Now();
    sample->acquire_us = MicrosBetween(t0, t1);
    sample->cycle_us = MicrosBetween(t0, t2);
    return absl::OkStatus();
  }

 private:
  RawFanoutRunner(std::vector<ContextPtr> cs, std::string ttl_ms,
                  std::string key)
      : cs_(std::move(cs)),
        ttl_ms_(std::move(ttl_ms)),
        key_(std::move(key)),
        set_pending_(cs_.size(), 0),
        del_pending_(cs_.size(), 0) {}

  absl::Status FlushAll() {
    for (ContextPtr& c : cs_) {
      int done = 0;
      while (!done) {
        if (redisBufferWrite(c.get(), &done) != REDIS_OK) {
          return absl::UnavailableError(c->errstr);
        }
      }
    }
    return absl::OkStatus();
  }

  // Reads replies until `done()`. Replies on one connection come in order,
  // so a SET reply still owed when the EVALSHA is sent is read (and checked)
  // first; `on_reply` gets the replies of the current phase only.
  template <typename OnReply, typename Done>
  absl::Status Pump(OnReply on_reply, Done done) {
    const SteadyTime deadline = Now() + std::chrono::seconds(2);
    std::vector<pollfd> fds;
    std::vector<int> index;
    while (!done()) {
      fds.clear();
      index.clear();
      for (size_t i = 0; i < cs_.size(); ++i) {
        if (set_pending_[i] + del_pending_[i] > 0) {
          fds.push_back({cs_[i]->fd, POLLIN, 0});
          index.push_back(static_cast<int>(i));
        }
      }
      if (fds.empty()) return absl::InternalError("raw: nothing to wait for");
      if (Now() >= deadline)
        return absl::DeadlineExceededError("raw: no reply");
      int rc = poll(fds.data(), fds.size(), 2000);
      if (rc < 0 && errno == EINTR) continue;
      if (rc <= 0) return absl::DeadlineExceededError("raw: poll");
      for (size_t k = 0; k < fds.size(); ++k) {
        if (fds[k].revents == 0) continue;
        const int i = index[k];
        redisContext* c = cs_[i].get();
        if (redisBufferRead(c) != REDIS_OK) {
          return absl::UnavailableError(absl::StrCat("raw: ", c->errstr));
        }
        while (set_pending_[i] + del_pending_[i] > 0) {
          void* raw = nullptr;
          if (redisGetReplyFromReader(c, &raw) != REDIS_OK) {
            return absl::InternalError("raw: protocol error");
          }
          if (raw == nullptr) break;
          ReplyPtr reply(static_cast<redisReply*>(raw));
          if (set_pending_[i]) {
            set_pending_[i] = 0;
            // A SET reply owed from the acquire phase, read during release.
            if (del_pending_[i]) {
              if (reply->type != REDIS_REPLY_STATUS) {
                return absl::InternalError(
                    absl::StrCat("raw late SET: ", DescribeReply(reply.get())));
              }
              continue;
            }
          } else {
            del_pending_[i] = 0;
          }
          if (absl::Status s = on_reply(i, reply.get()); !s.ok()) return s;
        }
      }
    }
    return absl::OkStatus();
  }

  std::vector<ContextPtr> cs_;
  const std::string ttl_ms_;
  const std::string key_;
  std::vector<int> set_pending_;
  std::vector<int> del_pending_;
};

// Turns `base` until `done()` or `timeout`.
template <typename Done>
bool RunUntil(event_base* base, Done done, absl::Duration timeout) {
  const SteadyTime deadline = Now() + absl::ToChronoNanoseconds(timeout);
  while (!done()) {
    if (Now() >= deadline) return false;
    event_base_loop(base, EVLOOP_ONCE);
  }
  return true;
}

void RunFor(event_base* base, absl::Duration d) {
  timeval tv = absl::ToTimeval(d);
  event_base_loopexit(base, &tv);
  event_base_dispatch(base);
}

redlock::Options ClientOptions(std::vector<std::string> uris, bool relaxed) {
  redlock::Options options;
  // One key prefix per master count: each N is its own deployment. The
  // restart guard writes a deployment marker under the prefix, and a client
  // of N=3 must not take masters 2 and 3 for reborn because a client of N=1
  // marked only master 1.
  options.key_prefix = absl::StrCat(kKeyPrefix, "n", uris.size(), ":");
  options.masters = std::move(uris);
  if (relaxed) {
    // Under valgrind everything on the client side is ~50x slower; the
    // instructions of a cycle do not depend on these.
    options.request_timeout = absl::Seconds(2);
    options.connect_timeout = absl::Seconds(5);
    options.stalled_connection_timeout = absl::Seconds(5);
  }
  return options;
}

// AsyncRedlock on an event_base that this (the bench) thread turns: the
// whole client runs on the calling thread, like the floor.
class AsyncRunner : public Runner {
 public:
  static absl::StatusOr<std::unique_ptr<AsyncRunner>> Create(
      redlock::Options options, std::string resource, absl::Duration ttl) {
    event_base* base = event_base_new();
    if (base == nullptr) return absl::InternalError("event_base_new failed");
    if (absl::Status s = ResolveMasterHosts(options); !s.ok()) {
      event_base_free(base);
      return s;
    }
    absl::StatusOr<std::unique_ptr<AsyncRedlock>> client =
        AsyncRedlock::Create(base, std::move(options));
    if (!client.ok()) {
      event_base_free(base);
      return client.status();
    }
    return std::unique_ptr<AsyncRunner>(
        new AsyncRunner(base, *std::move(client), std::move(resource), ttl));
  }

  ~AsyncRunner() override {
    client_.reset();
    event_base_free(base_);
  }

  absl::Status Cycle(CycleSample* sample) override {
    const SteadyTime t0 = Now();
    std::optional<absl::StatusOr<Lock>> lock;
    absl::Status s = client_->AcquireAsync(
        resource_, ttl_, absl::ZeroDuration(),
        [&lock](absl::StatusOr<Lock> l) { lock.emplace(std::move(l)); });
    if (!s.ok()) return s;
    if (!RunUntil(
            base_, [&] { return lock.has_value(); }, absl::Seconds(5))) {
      return absl::DeadlineExceededError("async acquire: no callback in 5s");
    }
    if (!lock->ok()) return lock->status();
    const SteadyTime t1 = Now();
    std::optional<absl::StatusOr<ReleaseReport>> report;
    s = client_->ReleaseAsync(**lock,
                              [&report](absl::StatusOr<ReleaseReport> r) {
                                report.emplace(std::move(r));
                              });
    if (!s.ok()) return s;
    if (!RunUntil(
            base_, [&] { return report.has_value(); }, absl::Seconds(5))) {
      return absl::DeadlineExceededError("async release: no callback in 5s");
    }
    if (!report->ok()) return report->status();
    const SteadyTime t2 = Now();
    sample->acquire_us = MicrosBetween(t0, t1);
    sample->cycle_us = MicrosBetween(t0, t2);
    return absl::OkStatus();
  }

  void Idle(absl::Duration d) override { RunFor(base_, d); }

  event_base* base() const { return base_; }
  AsyncRedlock& client() { return *client_; }

 private:
  AsyncRunner(event_base* base, std::unique_ptr<AsyncRedlock> client,
              std::string resource, absl::Duration ttl)
      : base_(base),
        client_(std::move(client)),
        resource_(std::move(resource)),
        ttl_(ttl) {}

  event_base* const base_;
  std::unique_ptr<AsyncRedlock> client_;
  const std::string resource_;
  const absl::Duration ttl_;
};

// The blocking Redlock: every call is posted to its own loop thread and the
// caller waits, so a cycle costs two thread hand-offs each way.
class BlockingRunner : public Runner {
 public:
  static absl::StatusOr<std::unique_ptr<BlockingRunner>> Create(
      redlock::Options options, std::string resource, absl::Duration ttl) {
    absl::StatusOr<std::unique_ptr<Redlock>> client =
        Redlock::Create(std::move(options));
    if (!client.ok()) return client.status();
    return std::unique_ptr<BlockingRunner>(
        new BlockingRunner(*std::move(client), std::move(resource), ttl));
  }

  absl::Status Cycle(CycleSample* sample) override {
    const SteadyTime t0 = Now();
    absl::StatusOr<Lock> lock =
        client_->Acquire(resource_, ttl_, absl::ZeroDuration());
    if (!lock.ok()) return lock.status();
    const SteadyTime t1 = Now();
    absl::StatusOr<ReleaseReport> report = client_->Release(*lock);
    if (!report.ok()) return report.status();
    const SteadyTime t2 = Now();
    sample->acquire_us = MicrosBetween(t0, t1);
    sample->cycle_us = MicrosBetween(t0, t2);
    return absl::OkStatus();
  }

  int cpu_scope() const override { return RUSAGE_SELF; }

 private:
  BlockingRunner(std::unique_ptr<Redlock> client, std::string resource,
                 absl::Duration ttl)
      : client_(std::move(client)), resource_(std::move(resource)), ttl_(ttl) {}

  std::unique_ptr<Redlock> client_;
  const std::string resource_;
  const absl::Duration ttl_;
};

// Runs cycles until `cycles` succeeded (connections up, scripts loaded,
// caches warm), within `budget`.
absl::Status WarmUp(Runner& runner, int cycles, absl::Duration budget) {
  const SteadyTime deadline = Now() + absl::ToChronoNanoseconds(budget);
  absl::Status last;
  int ok = 0;
  while (ok < cycles) {
    if (Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("warm-up: ", ok, " of ", cycles,
                       " cycles succeeded; last error: ", last.ToString()));
    }
    CycleSample sample;
    last = runner.Cycle(&sample);
    if (last.ok()) {
      ++ok;
    } else {
      runner.Idle(absl::Milliseconds(10));
    }
  }
  return absl::OkStatus();
}

// --- Latency phase ---------------------------------------------------------

struct BlockResult {
  int ok = 0;
  Cpu cpu;
  double wall_s = 0;
  double p50_us = 0;
};

struct Samples {
  std::vector<double> acquire_us;
  std::vector<double> cycle_us;
  Cpu cpu;
  int64_t cpu_cycles = 0;
  double wall_s = 0;
  int errors = 0;
  std::string last_error;
};

BlockResult RunBlock(Runner& runner, int cycles, Samples& out) {
  BlockResult block;
  std::vector<double> cycle_us;
  cycle_us.reserve(cycles);
  const int who = runner.cpu_scope();
  const Cpu cpu0 = CpuNow(who);
  const SteadyTime w0 = Now();
  for (int i = 0; i < cycles; ++i) {
    CycleSample sample;
    absl::Status s = runner.Cycle(&sample);
    if (!s.ok()) {
      ++out.errors;
      out.last_error = s.ToString();
      continue;
    }
    ++block.ok;
    out.acquire_us.push_back(sample.acquire_us);
    cycle_us.push_back(sample.cycle_us);
  }
  block.wall_s = SecondsBetween(w0, Now());
  block.cpu = CpuNow(who) - cpu0;
  block.p50_us = Median(cycle_us);
  out.cycle_us.insert(out.cycle_us.end(), cycle_us.begin(), cycle_us.end());
  out.cpu += block.cpu;
  out.cpu_cycles += block.ok;
  out.wall_s += block.wall_s;
  return block;
}

struct LatencyConfig {
  std::string name;    // "async N=5"
  std::string client;  // floor, raw, async, blocking
  int masters = 1;
  std::unique_ptr<Runner> runner;
  Samples own;
  Samples floor;  // The floor blocks run right before this config's blocks.
  std::vector<double> round_ratio_p50;  // Block p50 / preceding floor p50.
};

double CpuPerCycleUs(const Samples& s) {
  return s.cpu_cycles > 0 ? 1e6 * s.cpu.total() / s.cpu_cycles : 0;
}
double UserPerCycleUs(const Samples& s) {
  return s.cpu_cycles > 0 ? 1e6 * s.cpu.user / s.cpu_cycles : 0;
}
double SysPerCycleUs(const Samples& s) {
  return s.cpu_cycles > 0 ? 1e6 * s.cpu.sys / s.cpu_cycles : 0;
}

// --- Fault phase -------------------------------------------------------

// Acquires, then releases without waiting for the release (so the slow
// master's 2x latency on the release does not pace the loop); Drain() waits
// for every release before the other client runs.
class OpenLoopAcquirer {
 public:
  OpenLoopAcquirer(std::unique_ptr<AsyncRunner> runner, std::string resource,
                   absl::Duration ttl, int slow_index)
      : runner_(std::move(runner)),
        resource_(std::move(resource)),
        ttl_(ttl),
        slow_index_(slow_index) {}

  absl::Status Acquire(double* us, bool* slow_pending) {
    const SteadyTime t0 = Now();
    std::optional<absl::StatusOr<Lock>> lock;
    absl::Status s = runner_->client().AcquireAsync(
        resource_, ttl_, absl::ZeroDuration(),
        [&lock](absl::StatusOr<Lock> l) { lock.emplace(std::move(l)); });
    if (!s.ok()) return s;
    if (!RunUntil(
            runner_->base(), [&] { return lock.has_value(); },
            absl::Seconds(5))) {
      return absl::DeadlineExceededError("acquire: no callback in 5s");
    }
    if (!lock->ok()) return lock->status();
    *us = MicrosBetween(t0, Now());
    if (slow_index_ >= 0) {
      std::vector<MasterVote> votes = (*lock)->votes();
      *slow_pending = slow_index_ < static_cast<int>(votes.size()) &&
                      votes[slow_index_].kind == MasterVote::Kind::kPending;
    }
    ++outstanding_;
    s = runner_->client().ReleaseAsync(
        **lock, [this](absl::StatusOr<ReleaseReport>) { --outstanding_; });
    if (!s.ok()) --outstanding_;
    return absl::OkStatus();
  }

  bool Drain() {
    return RunUntil(
        runner_->base(), [this] { return outstanding_ == 0; },
        absl::Seconds(10));
  }

  AsyncRunner& runner() { return *runner_; }

 private:
  std::unique_ptr<AsyncRunner> runner_;
  const std::string resource_;
  const absl::Duration ttl_;
  const int slow_index_;
  int outstanding_ = 0;
};

struct FaultResult {
  bool ran = false;
  std::string skipped;
  absl::Duration latency;
  Samples fault, nofault;
  std::vector<double> round_ratio_p50;
  int64_t slow_pending = 0;
  int64_t fault_acquisitions = 0;
  testing::FaultProxy::Counters proxy;
};

// --- Throughput phase ------------------------------------------------------

struct ThroughputBlock {
  int64_t cycles = 0;
  int64_t errors = 0;
  double wall_s = 0;
  double cpu_s = 0;
  std::string last_error;
};

// K slots, each cycling acquire -> release on its own resource until `end`.
class ThroughputRun {
 public:
  ThroughputRun(AsyncRedlock* client, absl::Duration ttl, int slots, int tag)
      : client_(client), ttl_(ttl) {
    for (int i = 0; i < slots; ++i) {
      resources_.push_back(absl::StrCat("tp-", tag, "-", i));
    }
  }

  ThroughputBlock Run(event_base* base, absl::Duration duration) {
    ThroughputBlock block;
    const Cpu cpu0 = CpuNow(RUSAGE_THREAD);
    const SteadyTime start = Now();
    end_ = start + absl::ToChronoNanoseconds(duration);
    active_ = static_cast<int>(resources_.size());
    for (int i = 0; i < static_cast<int>(resources_.size()); ++i) Next(i);
    RunUntil(
        base, [this] { return active_ == 0; }, duration + absl::Seconds(10));
    block.wall_s =
        SecondsBetween(start, last_done_ > start ? last_done_ : Now());
    block.cpu_s = (CpuNow(RUSAGE_THREAD) - cpu0).total();
    block.cycles = cycles_;
    block.errors = errors_;
    block.last_error = last_error_;
    return block;
  }

 private:
  void Next(int slot) {
    if (Now() >= end_) {
      --active_;
      return;
    }
    absl::Status s = client_->AcquireAsync(
        resources_[slot], ttl_, absl::ZeroDuration(),
        [this, slot](absl::StatusOr<Lock> lock) {
          if (!lock.ok()) {
            Error(lock.status());
            Next(slot);
            return;
          }
          absl::Status r = client_->ReleaseAsync(
              *lock, [this, slot](absl::StatusOr<ReleaseReport> report) {
                if (report.ok()) {
                  ++cycles_;
                  last_done_ = Now();
                } else {
                  Error(report.status());
                }
                Next(slot);
              });
          if (!r.ok()) {
            Error(r);
            Next(slot);
          }
        });
    if (!s.ok()) {
      Error(s);
      --active_;
    }
  }
  void Error(const absl::Status& s) {
    ++errors_;
    last_error_ = s.ToString();
  }

  AsyncRedlock* const client_;
  const absl::Duration ttl_;
  std::vector<std::string> resources_;
  SteadyTime end_;
  SteadyTime last_done_;
  int active_ = 0;
  int64_t cycles_ = 0;
  int64_t errors_ = 0;
  std::string last_error_;
};

struct CeilingSample {
  double set_cmds_per_s = 0;   // All N masters together, wall-clock based.
  double eval_cmds_per_s = 0;  // Same for EVALSHA.
  double cycles_per_s = 0;     // 1 / (N/set + N/eval).
};

// Runs redis-benchmark against every master at once with the same command,
// and returns the aggregate rate: total requests / wall time of the slowest.
absl::StatusOr<double> RedisBenchmarkAll(const std::vector<Master>& masters,
                                         const std::vector<std::string>& cmd,
                                         int requests) {
  const std::string bin = absl::GetFlag(FLAGS_redis_benchmark);
  struct Child {
    pid_t pid = -1;
    int out = -1;
  };
  std::vector<Child> children;
  const SteadyTime start = Now();
  absl::Status failure;
  for (const Master& m : masters) {
    std::vector<std::string> args = {bin,
                                     "-h",
                                     m.address.host,
                                     "-p",
                                     absl::StrCat(m.address.port),
                                     "-n",
                                     absl::StrCat(requests),
                                     "-c",
                                     "1",
                                     "-P",
                                     "64",
                                     "-r",
                                     "1000000",
                                     "--csv"};
    if (m.address.has_password) {
      if (!m.address.user.empty()) {
        args.insert(args.end(), {"--user", m.address.user});
      }
      args.insert(args.end(), {"-a", m.address.password});
    }
    if (m.address.db != 0) {
      args.insert(args.end(), {"--dbnum", absl::StrCat(m.address.db)});
    }
    args.insert(args.end(), cmd.begin(), cmd.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      failure = absl::InternalError("pipe2 failed");
      break;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, bin.c_str(), &actions, nullptr, argv.data(),
                          environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (rc != 0) {
      close(fds[0]);
      failure = absl::NotFoundError(
          absl::StrCat("cannot run ", bin, ": ", std::strerror(rc)));
      break;
    }
    children.push_back({pid, fds[0]});
  }
  std::string errors;
  for (Child& child : children) {
    int status = 0;
    waitpid(child.pid, &status, 0);
    std::string output;
    char buf[4096];
    ssize_t n;
    while ((n = read(child.out, buf, sizeof(buf))) > 0) output.append(buf, n);
    close(child.out);
    double rps = 0;
    for (absl::string_view line : absl::StrSplit(output, '\n')) {
      std::vector<std::string> cols = absl::StrSplit(line, "\",\"");
      if (cols.size() >= 2 && !absl::StartsWith(line, "\"test\"") &&
          absl::SimpleAtod(cols[1], &rps)) {
        break;
      }
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || rps <= 0) {
      absl::StrAppend(&errors, "redis-benchmark failed: ",
                      absl::StripAsciiWhitespace(output).substr(0, 300), "; ");
    }
  }
  const double wall = SecondsBetween(start, Now());
  if (!failure.ok()) return failure;
  if (!errors.empty()) return absl::InternalError(errors);
  return static_cast<double>(requests) * masters.size() / wall;
}

absl::StatusOr<CeilingSample> MeasureCeiling(const std::vector<Master>& masters,
                                             int requests) {
  const std::string token(32, 'c');
  const std::string key = absl::StrCat(kKeyPrefix, "ceiling:__rand_int__");
  CeilingSample sample;
  absl::StatusOr<double> set = RedisBenchmarkAll(
      masters, {"SET", key, token, "NX", "PX", "10000"}, requests);
  if (!set.ok()) return set.status();
  absl::StatusOr<double> eval = RedisBenchmarkAll(
      masters, {"EVALSHA", internal::ReleaseScript().sha1, "1", key, token},
      requests);
  if (!eval.ok()) return eval.status();
  const double n = static_cast<double>(masters.size());
  sample.set_cmds_per_s = *set;
  sample.eval_cmds_per_s = *eval;
  sample.cycles_per_s = 1.0 / (n / *set + n / *eval);
  return sample;
}

struct ThroughputResult {
  bool ran = false;
  std::string skipped;
  int masters = 0;
  std::vector<int> in_flight;
  std::vector<std::vector<ThroughputBlock>> blocks;  // Per in-flight setting.
  std::vector<CeilingSample> ceilings;
  std::string ceiling_error;
};

double BlockRate(const ThroughputBlock& b) {
  return b.wall_s > 0 ? b.cycles / b.wall_s : 0;
}

// --- Contention phase -------------------------------------------------

struct Grant {
  SteadyTime acquired;
  SteadyTime release_start;
  SteadyTime release_end;
  int contender;
};

struct ContentionResult {
  bool ran = false;
  std::string skipped;
  int contenders = 0;
  int masters = 0;
  absl::Duration ttl;
  absl::Duration wait;
  double duration_s = 0;
  int64_t cycles = 0;
  int64_t failed = 0;
  std::string last_error;
  std::vector<double> wait_us;  // Successful acquisitions.
  double max_wait_us = 0;       // Any acquisition, failed ones included.
  double max_free_gap_us = 0;
  std::vector<double> free_gap_us;
  int64_t overlaps = 0;
  std::vector<int64_t> per_contender;
};

ContentionResult RunContention(const std::vector<Master>& masters,
                               int contenders, absl::Duration duration,
                               absl::Duration ttl) {
  ContentionResult result;
  result.masters = std::min<int>(5, masters.size());
  result.contenders = contenders;
  result.ttl = ttl;
  result.wait = 2 * ttl;
  std::vector<std::unique_ptr<Redlock>> clients;
  for (int i = 0; i < contenders; ++i) {
    absl::StatusOr<std::unique_ptr<Redlock>> client = Redlock::Create(
        ClientOptions(UrisOf(masters, result.masters), /*relaxed=*/false));
    if (!client.ok()) {
      result.skipped = client.status().ToString();
      return result;
    }
    clients.push_back(*std::move(client));
  }
  // Connections up before the clock starts.
  for (auto& client : clients) {
    for (int tries = 0; tries < 200; ++tries) {
      absl::StatusOr<Lock> lock =
          client->Acquire("contention-warmup", ttl, absl::ZeroDuration());
      if (lock.ok()) {
        client->Release(*lock).IgnoreError();
        break;
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
  }
  result.ran = true;
  std::vector<std::vector<Grant>> grants(contenders);
  std::vector<std::vector<double>> waits(contenders);
  std::vector<double> max_wait(contenders, 0);
  std::vector<int64_t> failed(contenders, 0);
  std::vector<std::string> errors(contenders);
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  SteadyTime start, end;
  std::vector<std::thread> threads;
  for (int c = 0; c < contenders; ++c) {
    threads.emplace_back([&, c] {
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      while (Now() < end) {
        const SteadyTime t0 = Now();
        absl::StatusOr<Lock> lock =
            clients[c]->Acquire("contended", ttl, result.wait);
        const SteadyTime t1 = Now();
        const double waited = MicrosBetween(t0, t1);
        max_wait[c] = std::max(max_wait[c], waited);
        if (!lock.ok()) {
          ++failed[c];
          errors[c] = lock.status().ToString();
          continue;
        }
        waits[c].push_back(waited);
        const SteadyTime r0 = Now();
        clients[c]->Release(*lock).IgnoreError();
        grants[c].push_back({t1, r0, Now(), c});
      }
    });
  }
  while (ready.load() < contenders) std::this_thread::yield();
  start = Now();
  end = start + absl::ToChronoNanoseconds(duration);
  go.store(true);
  for (std::thread& t : threads) t.join();
  const SteadyTime finished = Now();
  result.duration_s = SecondsBetween(start, finished);

  std::vector<Grant> all;
  for (int c = 0; c < contenders; ++c) {
    all.insert(all.end(), grants[c].begin(), grants[c].end());
    result.wait_us.insert(result.wait_us.end(), waits[c].begin(),
                          waits[c].end());
    result.max_wait_us = std::max(result.max_wait_us, max_wait[c]);
    result.failed += failed[c];
    if (!errors[c].empty()) result.last_error = errors[c];
    result.per_contender.push_back(static_cast<int64_t>(grants[c].size()));
  }
  result.cycles = static_cast<int64_t>(all.size());
  std::sort(all.begin(), all.end(), [](const Grant& a, const Grant& b) {
    return a.acquired < b.acquired;
  });
  for (size_t i = 1; i < all.size(); ++i) {
    // The next holder can only have won after the previous one started to
    // release: anything else means two holders at once.
    if (all[i].acquired < all[i - 1].release_start) ++result.overlaps;
    const double gap = MicrosBetween(all[i - 1].release_end, all[i].acquired);
    result.free_gap_us.push_back(std::max(0.0, gap));
    result.max_free_gap_us = std::max(result.max_free_gap_us, gap);
  }
  return result;
}

// --- Environment ----------------------------------------------------------

struct Environment {
  std::string date_utc;
  std::string redis_version;
  std::string redis_benchmark_version;
  std::string hiredis_version =
      absl::StrCat(HIREDIS_MAJOR, ".", HIREDIS_MINOR, ".", HIREDIS_PATCH);
  std::string libevent_version = event_get_version();
  std::string abseil_version;
  std::string compiler;
  std::string kernel;
  std::string cpu_model;
  int cores = 0;
  bool optimized = false;
  bool own_masters = true;
  int masters = 0;
};

std::string CommandOutputLine(const std::string& command) {
  std::string out;
  if (FILE* p = popen(command.c_str(), "r")) {
    char buf[256];
    if (std::fgets(buf, sizeof(buf), p) != nullptr) out = buf;
    pclose(p);
  }
  return std::string(absl::StripAsciiWhitespace(out));
}

Environment CollectEnvironment(const std::vector<Master>& masters, bool own) {
  Environment env;
  env.date_utc = absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::Now(),
                                  absl::UTCTimeZone());
  env.redis_version = InfoField(masters[0].address, "redis_version");
  env.redis_benchmark_version = CommandOutputLine(
      absl::StrCat(absl::GetFlag(FLAGS_redis_benchmark), " --version 2>&1"));
#ifdef ABSL_LTS_RELEASE_VERSION
  env.abseil_version = absl::StrCat(ABSL_LTS_RELEASE_VERSION);
#endif
#if defined(__clang__)
  env.compiler = absl::StrCat("clang ", __clang_version__);
#elif defined(__GNUC__)
  env.compiler = absl::StrCat("gcc ", __VERSION__);
#endif
#ifdef __OPTIMIZE__
  env.optimized = true;
#endif
  utsname u{};
  if (uname(&u) == 0) {
    env.kernel = absl::StrCat(u.sysname, " ", u.release, " ", u.machine);
  }
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (absl::StartsWith(line, "model name")) {
      env.cpu_model = std::string(
          absl::StripAsciiWhitespace(line.substr(line.find(':') + 1)));
      break;
    }
  }
  env.cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  env.own_masters = own;
  env.masters = static_cast<int>(masters.size());
  return env;
}

// --- Report ---------------------------------------------------------------

std::string Us(double us) {
  if (us >= 10000) return absl::StrFormat("%.0f", us);
  if (us >= 100) return absl::StrFormat("%.0f", us);
  return absl::StrFormat("%.1f", us);
}
std::string X(double ratio) { return absl::StrFormat("%.2f×", ratio); }

struct Target {
  std::string what;
  std::string measured;
  bool met = false;
  bool evaluated = false;
};

// A target not measured (yet) in this run.
Target Unmeasured(std::string what) {
  Target t;
  t.what = std::move(what);
  return t;
}

struct Settings {
  bool quick = false;
  int rounds = 0;
  int block_cycles = 0;
  absl::Duration ttl;
  int fault_rounds = 0;
  int fault_block = 0;
  int throughput_rounds = 0;
  absl::Duration throughput_block;
  int ceiling_requests = 0;
  int contenders = 0;
  absl::Duration contention_time;
  absl::Duration contention_ttl;
};

Settings ReadSettings() {
  Settings s;
  s.quick = absl::GetFlag(FLAGS_quick);
  s.rounds = absl::GetFlag(FLAGS_rounds);
  s.block_cycles = absl::GetFlag(FLAGS_block_cycles);
  s.ttl = absl::GetFlag(FLAGS_ttl);
  s.fault_rounds = absl::GetFlag(FLAGS_fault_rounds);
  s.fault_block = absl::GetFlag(FLAGS_fault_block);
  s.throughput_rounds = absl::GetFlag(FLAGS_throughput_rounds);
  s.throughput_block = absl::GetFlag(FLAGS_throughput_block);
  s.ceiling_requests = absl::GetFlag(FLAGS_ceiling_requests);
  s.contenders = absl::GetFlag(FLAGS_contenders);
  s.contention_time = absl::GetFlag(FLAGS_contention_time);
  s.contention_ttl = absl::GetFlag(FLAGS_contention_ttl);
  if (s.quick) {
    s.rounds = 3;
    s.block_cycles = 60;
    s.fault_rounds = 3;
    s.fault_block = 60;
    s.throughput_rounds = 1;
    s.throughput_block = absl::Milliseconds(300);
    s.ceiling_requests = 20000;
    s.contention_time = absl::Seconds(1);
  }
  return s;
}

void WriteCdf(
    const std::string& path,
    const std::vector<std::pair<std::string, std::vector<double>>>& series) {
  std::ofstream out(path);
  static const double kQuantiles[] = {
      0.0,   0.05, 0.1,   0.2,   0.3,   0.4,   0.5,   0.6,   0.7,    0.75,
      0.8,   0.85, 0.9,   0.92,  0.94,  0.95,  0.96,  0.97,  0.975,  0.98,
      0.985, 0.99, 0.992, 0.994, 0.995, 0.996, 0.997, 0.998, 0.9985, 0.999};
  bool first = true;
  for (const auto& [name, samples] : series) {
    if (samples.empty()) continue;
    std::vector<double> sorted = samples;
    std::sort(sorted.begin(), sorted.end());
    if (!first) out << "\n\n";
    first = false;
    out << "\"" << name << "\"\t\"quantile\"\n";
    for (double q : kQuantiles) {
      // 1/(1-q) is the "nines" axis of the plot; q = 0 gives 1.
      if (q > 0 && sorted.size() < 1.0 / (1.0 - q)) break;
      out << absl::StrFormat("%.2f\t%.4f\n", Quantile(sorted, q), q);
    }
  }
}

// --- The run --------------------------------------------------------------

absl::Status CheckMasters(const std::vector<Master>& masters,
                          bool allow_remote) {
  for (const Master& m : masters) {
    if (!allow_remote && !IsLoopback(m.address.host)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "master ", m.address.Name(),
          " is not on a loopback address; pass --allow_remote to benchmark "
          "against it"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Master>> ParseMasters(absl::string_view list) {
  std::vector<Master> masters;
  for (absl::string_view uri : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    uri = absl::StripAsciiWhitespace(uri);
    absl::StatusOr<MasterAddress> address = ParseMasterUri(uri);
    if (!address.ok()) return address.status();
    masters.push_back({std::string(uri), *std::move(address)});
  }
  if (masters.empty()) return absl::InvalidArgumentError("no masters given");
  return masters;
}

int RunCallgrind(const std::vector<Master>& masters) {
  const std::string which = absl::GetFlag(FLAGS_callgrind);
  const int n = std::min<int>(absl::GetFlag(FLAGS_callgrind_masters),
                              static_cast<int>(masters.size()));
  const int cycles = absl::GetFlag(FLAGS_callgrind_cycles);
  const absl::Duration ttl = absl::GetFlag(FLAGS_ttl);
  absl::StatusOr<std::unique_ptr<Runner>> runner;
  const std::string resource = absl::StrCat("callgrind-", which, "-", n);
  if (which == "floor") {
    runner = FloorRunner::Create(masters[0].address, ttl);
  } else if (which == "raw") {
    runner = RawFanoutRunner::Create(masters, n, ttl);
  } else if (which == "async") {
    runner = AsyncRunner::Create(ClientOptions(UrisOf(masters, n), true),
                                 resource, ttl);
  } else if (which == "blocking") {
    runner = BlockingRunner::Create(ClientOptions(UrisOf(masters, n), true),
                                    resource, ttl);
  } else {
    Log("--callgrind must be floor, raw, async or blocking");
    return 2;
  }
  if (!runner.ok()) {
    Log(runner.status().ToString());
    return 1;
  }
  if (absl::Status s = WarmUp(**runner, 20, absl::Seconds(60)); !s.ok()) {
    Log(s.ToString());
    return 1;
  }
  int errors = 0;
  for (int i = 0; i < cycles; ++i) {
    CycleSample sample;
    if (!(*runner)->Cycle(&sample).ok()) ++errors;
  }
  std::printf("callgrind config=%s masters=%d cycles=%d errors=%d\n",
              which.c_str(), which == "floor" ? 1 : n, cycles, errors);
  return errors == 0 ? 0 : 1;
}

int Main() {
  const Settings settings = ReadSettings();
  const std::set<std::string> phases = [] {
    std::set<std::string> p;
    for (absl::string_view s :
         absl::StrSplit(absl::GetFlag(FLAGS_phases), ',', absl::SkipEmpty())) {
      p.insert(std::string(absl::StripAsciiWhitespace(s)));
    }
    return p;
  }();
  const SteadyTime run_start = Now();
  const int64_t rss_start_kb = ProcStatusKb("VmRSS");

  // Masters: given, or our own.
  std::unique_ptr<testing::RedisCluster> cluster;
  std::vector<Master> masters;
  const bool own = absl::GetFlag(FLAGS_masters).empty();
  if (own) {
    absl::StatusOr<std::unique_ptr<testing::RedisCluster>> started =
        testing::RedisCluster::Start(7);
    if (!started.ok()) {
      Log(absl::StrCat("cannot start masters: ", started.status().ToString()));
      return 1;
    }
    cluster = *std::move(started);
    for (const std::string& uri : cluster->Uris()) {
      masters.push_back({uri, *ParseMasterUri(uri)});
    }
    Log(absl::StrCat("started 7 masters: ",
                     absl::StrJoin(cluster->Uris(), ",")));
  } else {
    absl::StatusOr<std::vector<Master>> parsed =
        ParseMasters(absl::GetFlag(FLAGS_masters));
    if (!parsed.ok()) {
      Log(parsed.status().ToString());
      return 2;
    }
    masters = *std::move(parsed);
  }
  if (absl::Status s = CheckMasters(masters, absl::GetFlag(FLAGS_allow_remote));
      !s.ok()) {
    Log(s.ToString());
    return 2;
  }
  if (!absl::GetFlag(FLAGS_callgrind).empty()) return RunCallgrind(masters);

  const Environment env = CollectEnvironment(masters, own);
  const int available = static_cast<int>(masters.size());
  const absl::Duration ttl = settings.ttl;

  // ---- Latency -----------------------------------------------------------
  std::unique_ptr<FloorRunner> floor;
  {
    absl::StatusOr<std::unique_ptr<FloorRunner>> f =
        FloorRunner::Create(masters[0].address, ttl);
    if (!f.ok()) {
      Log(absl::StrCat("floor: ", f.status().ToString()));
      return 1;
    }
    floor = *std::move(f);
    if (absl::Status s = WarmUp(*floor, 50, absl::Seconds(10)); !s.ok()) {
      Log(absl::StrCat("floor: ", s.ToString()));
      return 1;
    }
  }
  const int64_t rss_floor_kb = ProcStatusKb("VmRSS");
  std::vector<LatencyConfig> configs;
  Samples floor_all;
  if (phases.count("latency")) {
    for (const char* client : {"raw", "async", "blocking"}) {
      for (int n : {1, 3, 5, 7}) {
        if (n > available) continue;
        LatencyConfig config;
        config.client = client;
        config.masters = n;
        config.name = absl::StrCat(client, " N=", n);
        const std::string resource = absl::StrCat("cycle-", client, "-", n);
        absl::StatusOr<std::unique_ptr<Runner>> runner;
        if (config.client == "raw") {
          runner = RawFanoutRunner::Create(masters, n, ttl);
        } else if (config.client == "async") {
          runner = AsyncRunner::Create(ClientOptions(UrisOf(masters, n), false),
                                       resource, ttl);
        } else {
          runner = BlockingRunner::Create(
              ClientOptions(UrisOf(masters, n), false), resource, ttl);
        }
        if (!runner.ok()) {
          Log(absl::StrCat(config.name, ": ", runner.status().ToString()));
          return 1;
        }
        config.runner = *std::move(runner);
        if (absl::Status s = WarmUp(*config.runner, 50, absl::Seconds(10));
            !s.ok()) {
          Log(absl::StrCat(config.name, ": ", s.ToString()));
          return 1;
        }
        configs.push_back(std::move(config));
      }
    }
  }
  const int64_t rss_clients_kb = ProcStatusKb("VmRSS");
  if (!configs.empty()) {
    Log(absl::StrCat("latency: ", configs.size(), " configurations x ",
                     settings.rounds, " rounds x ", settings.block_cycles,
                     " cycles, each block after a floor block"));
    for (int round = 0; round < settings.rounds; ++round) {
      for (size_t k = 0; k < configs.size(); ++k) {
        // Rotate, so that no configuration always follows the same one.
        LatencyConfig& config = configs[(k + round) % configs.size()];
        BlockResult f = RunBlock(*floor, settings.block_cycles, config.floor);
        BlockResult c =
            RunBlock(*config.runner, settings.block_cycles, config.own);
        if (f.p50_us > 0 && c.p50_us > 0) {
          config.round_ratio_p50.push_back(c.p50_us / f.p50_us);
        }
      }
      Log(absl::StrCat("latency round ", round + 1, "/", settings.rounds));
    }
    for (const LatencyConfig& config : configs) {
      Samples& f = floor_all;
      f.acquire_us.insert(f.acquire_us.end(), config.floor.acquire_us.begin(),
                          config.floor.acquire_us.end());
      f.cycle_us.insert(f.cycle_us.end(), config.floor.cycle_us.begin(),
                        config.floor.cycle_us.end());
      f.cpu += config.floor.cpu;
      f.cpu_cycles += config.floor.cpu_cycles;
      f.wall_s += config.floor.wall_s;
      f.errors += config.floor.errors;
    }
  }

  // ---- One slow master -----------------------------------------------------
  FaultResult fault;
  fault.latency = absl::GetFlag(FLAGS_fault_latency);
  if (phases.count("fault")) {
    if (available < 5) {
      fault.skipped = "needs 5 masters";
    } else if (!IsLoopback(masters[4].address.host)) {
      fault.skipped = "the proxy only fronts loopback masters";
    } else {
      testing::FaultProxy::Config proxy_config;
      proxy_config.upstream_host = masters[4].address.host == "localhost"
                                       ? "127.0.0.1"
                                       : masters[4].address.host;
      proxy_config.upstream_port = masters[4].address.port;
      absl::StatusOr<std::unique_ptr<testing::FaultProxy>> proxy =
          testing::FaultProxy::Start(proxy_config);
      if (!proxy.ok()) {
        fault.skipped =
            absl::StrCat("fault proxy: ", proxy.status().ToString());
      } else {
        std::vector<std::string> slow_uris = UrisOf(masters, 4);
        slow_uris.push_back(WithHostPort(
            masters[4].uri, absl::StrCat("127.0.0.1:", (*proxy)->port())));
        absl::StatusOr<std::unique_ptr<AsyncRunner>> slow_runner =
            AsyncRunner::Create(ClientOptions(slow_uris, false), "slow", ttl);
        absl::StatusOr<std::unique_ptr<AsyncRunner>> fast_runner =
            AsyncRunner::Create(ClientOptions(UrisOf(masters, 5), false),
                                "fast", ttl);
        if (!slow_runner.ok() || !fast_runner.ok()) {
          fault.skipped =
              absl::StrCat("clients: ", slow_runner.status().ToString(), " ",
                           fast_runner.status().ToString());
        } else {
          // Warm up without latency, then switch it on.
          absl::Status w1 = WarmUp(**slow_runner, 20, absl::Seconds(10));
          absl::Status w2 = WarmUp(**fast_runner, 20, absl::Seconds(10));
          (*proxy)->SetLatency(fault.latency, fault.latency);
          OpenLoopAcquirer slow(*std::move(slow_runner), "slow-open", ttl, 4);
          OpenLoopAcquirer fast(*std::move(fast_runner), "fast-open", ttl, -1);
          if (!w1.ok() || !w2.ok()) {
            fault.skipped =
                absl::StrCat("warm-up: ", w1.ToString(), " ", w2.ToString());
          } else {
            fault.ran = true;
            Log(absl::StrCat("fault: ", settings.fault_rounds, " rounds x ",
                             settings.fault_block,
                             " acquisitions, slow master +",
                             absl::FormatDuration(fault.latency), " each way"));
            for (int round = 0; round < settings.fault_rounds; ++round) {
              std::vector<double> p50(2);
              for (int which = 0; which < 2; ++which) {
                // Alternate which client goes first.
                const bool is_slow = (which + round) % 2 == 0;
                OpenLoopAcquirer& client = is_slow ? slow : fast;
                Samples& out = is_slow ? fault.fault : fault.nofault;
                std::vector<double> block;
                for (int i = 0; i < settings.fault_block; ++i) {
                  double us = 0;
                  bool pending = false;
                  absl::Status s = client.Acquire(&us, &pending);
                  if (!s.ok()) {
                    ++out.errors;
                    out.last_error = s.ToString();
                    continue;
                  }
                  block.push_back(us);
                  if (is_slow) {
                    ++fault.fault_acquisitions;
                    fault.slow_pending += pending;
                  }
                }
                if (!client.Drain()) {
                  ++out.errors;
                  out.last_error = "releases did not finish in 10s";
                }
                out.acquire_us.insert(out.acquire_us.end(), block.begin(),
                                      block.end());
                p50[is_slow ? 0 : 1] = Median(block);
              }
              if (p50[1] > 0) fault.round_ratio_p50.push_back(p50[0] / p50[1]);
            }
            fault.proxy = (*proxy)->counters();
          }
        }
      }
    }
    if (!fault.skipped.empty())
      Log(absl::StrCat("fault: skipped: ", fault.skipped));
  }

  // ---- Throughput
  // ------------------------------------------------------------
  ThroughputResult tp;
  if (phases.count("throughput")) {
    tp.masters = std::min(5, available);
    tp.in_flight = {1, 8, 64};
    tp.blocks.resize(tp.in_flight.size());
    std::vector<Master> tp_masters(masters.begin(),
                                   masters.begin() + tp.masters);
    for (const Master& m : tp_masters) {
      absl::StatusOr<ContextPtr> c = ConnectSync(m.address);
      if (c.ok()) LoadReleaseScript(c->get()).IgnoreError();
    }
    absl::StatusOr<std::unique_ptr<AsyncRunner>> runner = AsyncRunner::Create(
        ClientOptions(UrisOf(masters, tp.masters), false), "tp-warmup", ttl);
    absl::Status warm =
        runner.ok() ? WarmUp(**runner, 50, absl::Seconds(10)) : runner.status();
    if (!warm.ok()) {
      tp.skipped = warm.ToString();
    } else {
      tp.ran = true;
      Log(absl::StrCat("throughput: N=", tp.masters, ", ",
                       settings.throughput_rounds,
                       " rounds of 1/8/64 in flight (",
                       absl::FormatDuration(settings.throughput_block),
                       " each) and redis-benchmark"));
      for (int round = 0; round < settings.throughput_rounds; ++round) {
        for (size_t k = 0; k < tp.in_flight.size(); ++k) {
          const size_t i = (k + round) % tp.in_flight.size();
          ThroughputRun run(&(*runner)->client(), ttl, tp.in_flight[i],
                            tp.in_flight[i]);
          tp.blocks[i].push_back(
              run.Run((*runner)->base(), settings.throughput_block));
        }
        absl::StatusOr<CeilingSample> ceiling =
            MeasureCeiling(tp_masters, settings.ceiling_requests);
        if (ceiling.ok()) {
          tp.ceilings.push_back(*ceiling);
        } else {
          tp.ceiling_error = ceiling.status().ToString();
          Log(absl::StrCat("ceiling: ", tp.ceiling_error));
        }
        Log(absl::StrCat("throughput round ", round + 1, "/",
                         settings.throughput_rounds));
      }
    }
  }

  // ---- Contention
  // ------------------------------------------------------------
  ContentionResult contention;
  if (phases.count("contention")) {
    Log(absl::StrCat("contention: ", settings.contenders, " clients, ",
                     absl::FormatDuration(settings.contention_time)));
    contention =
        RunContention(masters, settings.contenders, settings.contention_time,
                      settings.contention_ttl);
  }

  const int64_t rss_end_kb = ProcStatusKb("VmRSS");
  const int64_t hwm_kb = ProcStatusKb("VmHWM");
  const double run_s = SecondsBetween(run_start, Now());

  // ---- Figures -------------------------------------------------------------
  const Dist floor_cycle = Summarize(floor_all.cycle_us);
  const Dist floor_acquire = Summarize(floor_all.acquire_us);
  const double floor_cpu_us = CpuPerCycleUs(floor_all);
  auto find = [&](absl::string_view client, int n) -> const LatencyConfig* {
    for (const LatencyConfig& c : configs) {
      if (c.client == client && c.masters == n) return &c;
    }
    return nullptr;
  };

  // A configuration's ratio to its floor, divided by the raw fan-out's ratio
  // to its floor at the same N: how much the library adds to the cheapest
  // N-master cycle, each normalised by the floor blocks next to it.
  auto RatioToRaw = [&](const LatencyConfig& c, double q) {
    const LatencyConfig* raw = find("raw", c.masters);
    if (raw == nullptr) return 0.0;
    auto to_floor = [q](const LatencyConfig& x) {
      std::vector<double> own = x.own.cycle_us, fl = x.floor.cycle_us;
      std::sort(own.begin(), own.end());
      std::sort(fl.begin(), fl.end());
      return Ratio(Quantile(own, q), Quantile(fl, q));
    };
    return Ratio(to_floor(c), to_floor(*raw));
  };

  std::vector<Target> targets;
  for (const char* client : {"async", "blocking"}) {
    const LatencyConfig* c = find(client, 5);
    Target p50 = Unmeasured(
        absl::StrCat("N=5 cycle p50 ≤ 1.3× floor p50 (", client, ")"));
    Target p99 = Unmeasured(
        absl::StrCat("N=5 cycle p99 ≤ 1.5× floor p99 (", client, ")"));
    Target cpu = Unmeasured(absl::StrCat(
        "client CPU per cycle at N=5 ≤ 1.5 × 5 × floor CPU per cycle (", client,
        ")"));
    if (c != nullptr) {
      const Dist own = Summarize(c->own.cycle_us);
      const Dist fl = Summarize(c->floor.cycle_us);
      const double r50 = Ratio(own.p50, fl.p50);
      const double r99 = Ratio(own.p99, fl.p99);
      p50 = {p50.what,
             absl::StrFormat(
                 "%s (%s vs %s µs; per round %s–%s; raw fan-out N=5: %s, so "
                 "the library adds %s)",
                 X(r50), Us(own.p50), Us(fl.p50),
                 X(*std::min_element(c->round_ratio_p50.begin(),
                                     c->round_ratio_p50.end())),
                 X(*std::max_element(c->round_ratio_p50.begin(),
                                     c->round_ratio_p50.end())),
                 X(r50 / std::max(1e-9, RatioToRaw(*c, 0.5))),
                 X(RatioToRaw(*c, 0.5))),
             r50 <= 1.3, true};
      p99 = {p99.what,
             absl::StrFormat("%s (%s vs %s µs; the library adds %s to raw "
                             "fan-out N=5)",
                             X(r99), Us(own.p99), Us(fl.p99),
                             X(RatioToRaw(*c, 0.99))),
             r99 <= 1.5, true};
      const double cpu_us = CpuPerCycleUs(c->own);
      const double fcpu = CpuPerCycleUs(c->floor);
      const double rc = Ratio(cpu_us, 5 * fcpu);
      cpu = {cpu.what,
             absl::StrFormat("%s of 5×floor (%.1f vs 5 × %.1f µs)", X(rc),
                             cpu_us, fcpu),
             rc <= 1.5, true};
    }
    targets.push_back(p50);
    targets.push_back(p99);
    targets.push_back(cpu);
  }
  Dist fault_acq = Summarize(fault.fault.acquire_us);
  Dist nofault_acq = Summarize(fault.nofault.acquire_us);
  {
    Target t =
        Unmeasured("one slow master: acquire p50 ≤ 1.3× no-fault acquire p50");
    if (fault.ran) {
      const double r = Ratio(fault_acq.p50, nofault_acq.p50);
      t = {t.what,
           absl::StrFormat("%s (%s vs %s µs)", X(r), Us(fault_acq.p50),
                           Us(nofault_acq.p50)),
           r <= 1.3, true};
    }
    targets.push_back(t);
  }
  std::vector<double> tp_rate(tp.in_flight.size(), 0);
  double ceiling_cycles = 0;
  if (tp.ran) {
    for (size_t i = 0; i < tp.in_flight.size(); ++i) {
      std::vector<double> rates;
      for (const ThroughputBlock& b : tp.blocks[i])
        rates.push_back(BlockRate(b));
      tp_rate[i] = Median(rates);
    }
    std::vector<double> cs;
    for (const CeilingSample& c : tp.ceilings) cs.push_back(c.cycles_per_s);
    ceiling_cycles = Median(cs);
  }
  {
    Target t = Unmeasured("64 in flight ≥ 50% of ceiling (N=5)");
    if (tp.ran && ceiling_cycles > 0) {
      const double r = Ratio(tp_rate.back(), ceiling_cycles);
      t = {t.what,
           absl::StrFormat("%.0f%% (%.0f of %.0f cycles/s)", 100 * r,
                           tp_rate.back(), ceiling_cycles),
           r >= 0.5, true};
    }
    targets.push_back(t);
  }
  {
    Target t = Unmeasured(
        "contention: no contender waits a whole TTL while the lock is free");
    if (contention.ran) {
      const double ttl_us = absl::ToDoubleMicroseconds(contention.ttl);
      t = {t.what,
           absl::StrFormat("longest free gap %s ms, longest wait %s ms, TTL %s",
                           Us(contention.max_free_gap_us / 1000),
                           Us(contention.max_wait_us / 1000),
                           absl::FormatDuration(contention.ttl)),
           contention.max_free_gap_us < ttl_us && contention.overlaps == 0,
           true};
    }
    targets.push_back(t);
  }

  // ---- Markdown
  // ---------------------------------------------------------------
  std::string md;
  absl::StrAppend(&md, "### Environment\n\n| | |\n|---|---|\n");
  absl::StrAppend(&md, "| date | ", env.date_utc, " |\n");
  absl::StrAppend(&md, "| masters | ", env.masters, " ",
                  env.own_masters ? "redis-server processes started by the "
                                    "harness on 127.0.0.1 (no persistence)"
                                  : "external (--masters)",
                  " |\n");
  absl::StrAppend(&md, "| redis-server | ", env.redis_version, " |\n");
  absl::StrAppend(&md, "| redis-benchmark | ", env.redis_benchmark_version,
                  " |\n");
  absl::StrAppend(&md, "| hiredis / libevent / Abseil | ", env.hiredis_version,
                  " / ", env.libevent_version, " / ", env.abseil_version,
                  " |\n");
  absl::StrAppend(&md, "| compiler | ", env.compiler,
                  env.optimized ? " (optimised)" : " (NOT optimised)", " |\n");
  absl::StrAppend(&md, "| kernel | ", env.kernel, " |\n");
  absl::StrAppend(&md, "| CPU | ", env.cpu_model, ", ", env.cores,
                  " cores online (shared by the client, every master and "
                  "redis-benchmark) |\n");
  absl::StrAppend(
      &md, "| mode | ",
      settings.quick ? "--quick (smoke: too few samples for the tails)"
                     : "full",
      "; harness wall time ", absl::StrFormat("%.0f", run_s), " s |\n\n");

  if (!configs.empty()) {
    absl::StrAppend(
        &md,
        "### Lock cycle latency (acquire + release, one client, "
        "sequential)\n\n",
        settings.rounds, " rounds; in each, every configuration ran ",
        settings.block_cycles,
        " cycles right after a floor block of the same size. \"×floor\" "
        "compares a configuration with its own floor blocks. Times in µs.\n\n",
        "| configuration | cycles | p50 | p90 | p99 | p99.9 | acquire p50 | "
        "floor p50 | floor p99 | ×floor p50 | ×floor p99 | ×floor p50 per "
        "round (min / median / max) | ÷ raw same N (p50, p99) | errors |\n",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|--:|\n");
    absl::StrAppend(&md, "| **floor** (1 master, blocking hiredis) | ",
                    floor_cycle.count, " | ", Us(floor_cycle.p50), " | ",
                    Us(floor_cycle.p90), " | ", Us(floor_cycle.p99), " | ",
                    Us(floor_cycle.p999), " | ", Us(floor_acquire.p50),
                    " | | | | | | | ", floor_all.errors, " |\n");
    for (const LatencyConfig& c : configs) {
      const Dist own = Summarize(c.own.cycle_us);
      const Dist acq = Summarize(c.own.acquire_us);
      const Dist fl = Summarize(c.floor.cycle_us);
      std::vector<double> rr = c.round_ratio_p50;
      std::sort(rr.begin(), rr.end());
      absl::StrAppend(
          &md, "| ", c.name, " | ", own.count, " | ", Us(own.p50), " | ",
          Us(own.p90), " | ", Us(own.p99), " | ", Us(own.p999), " | ",
          Us(acq.p50), " | ", Us(fl.p50), " | ", Us(fl.p99), " | ",
          X(Ratio(own.p50, fl.p50)), " | ", X(Ratio(own.p99, fl.p99)), " | ",
          rr.empty() ? ""
                     : absl::StrCat(X(rr.front()), " / ", X(Median(rr)), " / ",
                                    X(rr.back())),
          " | ",
          c.client == "raw" ? ""
                            : absl::StrCat(X(RatioToRaw(c, 0.5)), ", ",
                                           X(RatioToRaw(c, 0.99))),
          " | ", c.own.errors, " |\n");
    }
    absl::StrAppend(
        &md,
        "\n`raw`: a hand-written hiredis fan-out (all SETs written before any "
        "reply is read, poll(), quorum of OKs; then EVALSHA to all, wait for "
        "all): what an N-master cycle costs on this machine before any library "
        "code. `async`: AsyncRedlock on an event_base turned by the bench "
        "thread. `blocking`: redlock::Redlock (its own loop thread; the caller "
        "waits).\n\n");

    absl::StrAppend(
        &md, "### Client CPU per cycle\n\n",
        "user + system CPU from getrusage over each block: RUSAGE_THREAD for "
        "floor, raw and async (the whole client runs on the bench thread), "
        "RUSAGE_SELF for blocking (its loop thread included). Redis servers "
        "are "
        "other processes and not counted.\n\n",
        "| configuration | CPU µs/cycle | user | system | floor CPU µs/cycle "
        "(same blocks) | ÷ (N × floor) |\n|---|--:|--:|--:|--:|--:|\n");
    absl::StrAppend(&md, "| floor | ", absl::StrFormat("%.1f", floor_cpu_us),
                    " | ", absl::StrFormat("%.1f", UserPerCycleUs(floor_all)),
                    " | ", absl::StrFormat("%.1f", SysPerCycleUs(floor_all)),
                    " | | |\n");
    for (const LatencyConfig& c : configs) {
      const double cpu = CpuPerCycleUs(c.own);
      const double fcpu = CpuPerCycleUs(c.floor);
      absl::StrAppend(&md, "| ", c.name, " | ", absl::StrFormat("%.1f", cpu),
                      " | ", absl::StrFormat("%.1f", UserPerCycleUs(c.own)),
                      " | ", absl::StrFormat("%.1f", SysPerCycleUs(c.own)),
                      " | ", absl::StrFormat("%.1f", fcpu), " | ",
                      X(Ratio(cpu, c.masters * fcpu)), " |\n");
    }
    absl::StrAppend(
        &md, "\nResident memory: ",
        absl::StrFormat("%.1f MiB at start, %.1f MiB with the floor "
                        "connection, %.1f MiB with all %d latency clients "
                        "connected, %.1f MiB at the end, peak %.1f MiB.\n\n",
                        rss_start_kb / 1024.0, rss_floor_kb / 1024.0,
                        rss_clients_kb / 1024.0,
                        static_cast<int>(configs.size()), rss_end_kb / 1024.0,
                        hwm_kb / 1024.0));
  }

  if (fault.ran) {
    std::vector<double> rr = fault.round_ratio_p50;
    std::sort(rr.begin(), rr.end());
    absl::StrAppend(
        &md, "### Acquire with one slow master (N=5)\n\n",
        "A FaultProxy in front of master 5 adds ",
        absl::FormatDuration(fault.latency),
        " each way for one client; another client with the same five masters "
        "and no proxy runs in alternating blocks of ",
        settings.fault_block,
        " acquisitions (AsyncRedlock on the bench thread; each release is sent "
        "without waiting for it, and drained at the end of the block). Times "
        "in µs.\n\n",
        "| client | acquisitions | p50 | p90 | p99 | p99.9 | errors |\n"
        "|---|--:|--:|--:|--:|--:|--:|\n");
    absl::StrAppend(&md, "| no fault | ", nofault_acq.count, " | ",
                    Us(nofault_acq.p50), " | ", Us(nofault_acq.p90), " | ",
                    Us(nofault_acq.p99), " | ", Us(nofault_acq.p999), " | ",
                    fault.nofault.errors, " |\n");
    absl::StrAppend(&md, "| one slow master | ", fault_acq.count, " | ",
                    Us(fault_acq.p50), " | ", Us(fault_acq.p90), " | ",
                    Us(fault_acq.p99), " | ", Us(fault_acq.p999), " | ",
                    fault.fault.errors, " |\n");
    absl::StrAppend(
        &md, "\nRatio slow/no-fault: p50 ",
        X(Ratio(fault_acq.p50, nofault_acq.p50)), ", p99 ",
        X(Ratio(fault_acq.p99, nofault_acq.p99)),
        rr.empty() ? ""
                   : absl::StrCat("; p50 per round ", X(rr.front()), " / ",
                                  X(Median(rr)), " / ", X(rr.back()),
                                  " (min / median / max)"),
        ". The slow master had not answered when the decision was made in ",
        absl::StrFormat("%.1f%%",
                        100.0 * fault.slow_pending /
                            std::max<int64_t>(1, fault.fault_acquisitions)),
        " of the acquisitions.\n\n");
  }

  if (tp.ran) {
    absl::StrAppend(
        &md, "### Throughput (N=", tp.masters,
        ", one AsyncRedlock on one loop)\n\n", "Each in-flight setting ran ",
        absl::FormatDuration(settings.throughput_block), " per round for ",
        settings.throughput_rounds,
        " rounds, interleaved with the ceiling; figures are medians over "
        "rounds. Ceiling: `redis-benchmark -c 1 -P 64 -r 1000000` (one "
        "connection "
        "per master with 64 commands in flight, as the client has at 64 locks) "
        "against all ",
        tp.masters,
        " masters at once, once with `SET key tok NX PX 10000`, once with "
        "`EVALSHA <release> 1 key tok`; a cycle is one of each on every "
        "master (2·N commands), so ceiling cycles/s = 1 / (N/SET rate + "
        "N/EVALSHA rate).\n\n",
        "| locks in flight | cycles/s | ÷ ceiling | client CPU µs/cycle | "
        "errors |\n|--:|--:|--:|--:|--:|\n");
    for (size_t i = 0; i < tp.in_flight.size(); ++i) {
      double cpu = 0;
      int64_t cycles = 0, errors = 0;
      for (const ThroughputBlock& b : tp.blocks[i]) {
        cpu += b.cpu_s;
        cycles += b.cycles;
        errors += b.errors;
      }
      absl::StrAppend(
          &md, "| ", tp.in_flight[i], " | ",
          absl::StrFormat("%.0f", tp_rate[i]), " | ",
          ceiling_cycles > 0
              ? absl::StrFormat("%.0f%%", 100 * tp_rate[i] / ceiling_cycles)
              : "n/a",
          " | ", absl::StrFormat("%.1f", cycles ? 1e6 * cpu / cycles : 0),
          " | ", errors, " |\n");
    }
    std::vector<double> set_rates, eval_rates;
    for (const CeilingSample& c : tp.ceilings) {
      set_rates.push_back(c.set_cmds_per_s);
      eval_rates.push_back(c.eval_cmds_per_s);
    }
    absl::StrAppend(
        &md, "\nCeiling: ",
        tp.ceilings.empty()
            ? absl::StrCat("not measured (", tp.ceiling_error, ")")
            : absl::StrFormat("%.0f cycles/s (SET %.0f/s, EVALSHA %.0f/s over "
                              "all masters; medians of %d runs)",
                              ceiling_cycles, Median(set_rates),
                              Median(eval_rates),
                              static_cast<int>(tp.ceilings.size())),
        ".\n\n");
  }

  if (contention.ran) {
    const Dist waits = Summarize(contention.wait_us);
    const Dist gaps = Summarize(contention.free_gap_us);
    int64_t lo = 0, hi = 0;
    if (!contention.per_contender.empty()) {
      lo = *std::min_element(contention.per_contender.begin(),
                             contention.per_contender.end());
      hi = *std::max_element(contention.per_contender.begin(),
                             contention.per_contender.end());
    }
    absl::StrAppend(
        &md, "### Contention (", contention.contenders,
        " blocking clients, own connections, one resource, N=",
        contention.masters, ")\n\n", "Each client loops Acquire(ttl ",
        absl::FormatDuration(contention.ttl), ", wait ",
        absl::FormatDuration(contention.wait), ") → Release for ",
        absl::StrFormat("%.1f", contention.duration_s),
        " s (default retry delay 20–60 ms). \"Free gap\": from one holder's "
        "Release() returning to the next holder's Acquire() returning.\n\n",
        "| cycles | cycles/s | wait p50 ms | wait p99 ms | longest wait ms | "
        "failed acquisitions | free gap p50 ms | longest free gap ms | "
        "overlapping holders | grants per client min–max |\n"
        "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    absl::StrAppend(
        &md, "| ", contention.cycles, " | ",
        absl::StrFormat("%.0f", contention.cycles / contention.duration_s),
        " | ", Us(waits.p50 / 1000), " | ", Us(waits.p99 / 1000), " | ",
        Us(contention.max_wait_us / 1000), " | ", contention.failed, " | ",
        Us(gaps.p50 / 1000), " | ", Us(contention.max_free_gap_us / 1000),
        " | ", contention.overlaps, " | ", lo, "–", hi, " |\n\n");
  } else if (!contention.skipped.empty()) {
    absl::StrAppend(&md, "Contention skipped: ", contention.skipped, "\n\n");
  }

  absl::StrAppend(
      &md, "### Targets\n\n| target | this run | met |\n|---|---|---|\n");
  for (const Target& t : targets) {
    absl::StrAppend(&md, "| ", t.what, " | ",
                    t.evaluated ? t.measured : "not measured", " | ",
                    !t.evaluated ? "—"
                    : t.met      ? "yes"
                                 : "**no**",
                    " |\n");
  }
  std::fputs(md.c_str(), stdout);
  std::fflush(stdout);

  // ---- JSON
  // ------------------------------------------------------------------
  if (const std::string path = absl::GetFlag(FLAGS_out_json); !path.empty()) {
    Json j;
    j.Open();
    j.Open("environment")
        .Str("date_utc", env.date_utc)
        .Str("redis_server", env.redis_version)
        .Str("redis_benchmark", env.redis_benchmark_version)
        .Str("hiredis", env.hiredis_version)
        .Str("libevent", env.libevent_version)
        .Str("abseil", env.abseil_version)
        .Str("compiler", env.compiler)
        .Bool("optimized", env.optimized)
        .Str("kernel", env.kernel)
        .Str("cpu", env.cpu_model)
        .Int("cores", env.cores)
        .Bool("own_masters", env.own_masters)
        .Int("masters", env.masters)
        .Close();
    j.Open("settings")
        .Bool("quick", settings.quick)
        .Int("rounds", settings.rounds)
        .Int("block_cycles", settings.block_cycles)
        .Num("ttl_ms", absl::ToDoubleMilliseconds(settings.ttl))
        .Int("fault_rounds", settings.fault_rounds)
        .Int("fault_block", settings.fault_block)
        .Num("fault_latency_ms", absl::ToDoubleMilliseconds(fault.latency))
        .Int("throughput_rounds", settings.throughput_rounds)
        .Num("throughput_block_s",
             absl::ToDoubleSeconds(settings.throughput_block))
        .Int("ceiling_requests", settings.ceiling_requests)
        .Int("contenders", settings.contenders)
        .Num("contention_time_s",
             absl::ToDoubleSeconds(settings.contention_time))
        .Num("contention_ttl_ms",
             absl::ToDoubleMilliseconds(settings.contention_ttl))
        .Num("harness_wall_s", run_s)
        .Close();
    j.Open("floor")
        .Dist("cycle", floor_cycle)
        .Dist("acquire", floor_acquire)
        .Num("cpu_us_per_cycle", floor_cpu_us)
        .Num("cpu_user_us_per_cycle", UserPerCycleUs(floor_all))
        .Num("cpu_sys_us_per_cycle", SysPerCycleUs(floor_all))
        .Int("errors", floor_all.errors)
        .Close();
    j.OpenArray("latency");
    for (const LatencyConfig& c : configs) {
      const Dist own = Summarize(c.own.cycle_us);
      const Dist fl = Summarize(c.floor.cycle_us);
      j.Open()
          .Str("name", c.name)
          .Str("client", c.client)
          .Int("masters", c.masters)
          .Dist("cycle", own)
          .Dist("acquire", Summarize(c.own.acquire_us))
          .Dist("floor_cycle", fl)
          .Dist("floor_acquire", Summarize(c.floor.acquire_us))
          .Num("ratio_p50", Ratio(own.p50, fl.p50))
          .Num("ratio_p90", Ratio(own.p90, fl.p90))
          .Num("ratio_p99", Ratio(own.p99, fl.p99))
          .Num("ratio_p999", Ratio(own.p999, fl.p999))
          .Nums("round_ratio_p50", c.round_ratio_p50)
          .Num("ratio_p50_to_raw", c.client == "raw" ? 1 : RatioToRaw(c, 0.5))
          .Num("ratio_p99_to_raw", c.client == "raw" ? 1 : RatioToRaw(c, 0.99))
          .Str("cpu_scope", c.runner->cpu_scope() == RUSAGE_THREAD
                                ? "RUSAGE_THREAD"
                                : "RUSAGE_SELF")
          .Num("cpu_us_per_cycle", CpuPerCycleUs(c.own))
          .Num("cpu_user_us_per_cycle", UserPerCycleUs(c.own))
          .Num("cpu_sys_us_per_cycle", SysPerCycleUs(c.own))
          .Num("floor_cpu_us_per_cycle", CpuPerCycleUs(c.floor))
          .Num("cpu_ratio_to_n_floor",
               Ratio(CpuPerCycleUs(c.own), c.masters * CpuPerCycleUs(c.floor)))
          .Num("cycles_per_s_sequential",
               c.own.wall_s > 0 ? c.own.cpu_cycles / c.own.wall_s : 0)
          .Int("errors", c.own.errors)
          .Str("last_error", c.own.last_error)
          .Close();
    }
    j.Close();
    j.Open("fault").Bool("ran", fault.ran).Str("skipped", fault.skipped);
    if (fault.ran) {
      j.Num("latency_each_way_ms", absl::ToDoubleMilliseconds(fault.latency))
          .Dist("acquire_no_fault", nofault_acq)
          .Dist("acquire_one_slow", fault_acq)
          .Num("ratio_p50", Ratio(fault_acq.p50, nofault_acq.p50))
          .Num("ratio_p99", Ratio(fault_acq.p99, nofault_acq.p99))
          .Nums("round_ratio_p50", fault.round_ratio_p50)
          .Num("slow_master_pending_fraction",
               static_cast<double>(fault.slow_pending) /
                   std::max<int64_t>(1, fault.fault_acquisitions))
          .Int("errors_no_fault", fault.nofault.errors)
          .Int("errors_one_slow", fault.fault.errors)
          .Str("last_error", fault.fault.last_error + fault.nofault.last_error)
          .Int("proxy_bytes_to_server", fault.proxy.bytes_to_server)
          .Int("proxy_bytes_to_client", fault.proxy.bytes_to_client);
    }
    j.Close();
    j.Open("throughput").Bool("ran", tp.ran).Str("skipped", tp.skipped);
    if (tp.ran) {
      j.Int("masters", tp.masters);
      j.Num("ceiling_cycles_per_s", ceiling_cycles);
      j.OpenArray("ceiling_runs");
      for (const CeilingSample& c : tp.ceilings) {
        j.Open()
            .Num("set_cmds_per_s", c.set_cmds_per_s)
            .Num("evalsha_cmds_per_s", c.eval_cmds_per_s)
            .Num("cycles_per_s", c.cycles_per_s)
            .Close();
      }
      j.Close();
      j.Str("ceiling_error", tp.ceiling_error);
      j.OpenArray("in_flight");
      for (size_t i = 0; i < tp.in_flight.size(); ++i) {
        std::vector<double> rates, cpu;
        int64_t errors = 0;
        std::string last_error;
        for (const ThroughputBlock& b : tp.blocks[i]) {
          rates.push_back(BlockRate(b));
          cpu.push_back(b.cycles ? 1e6 * b.cpu_s / b.cycles : 0);
          errors += b.errors;
          if (!b.last_error.empty()) last_error = b.last_error;
        }
        j.Open()
            .Int("locks", tp.in_flight[i])
            .Num("cycles_per_s", tp_rate[i])
            .Nums("cycles_per_s_per_round", rates)
            .Num("ratio_to_ceiling", Ratio(tp_rate[i], ceiling_cycles))
            .Nums("cpu_us_per_cycle_per_round", cpu)
            .Int("errors", errors)
            .Str("last_error", last_error)
            .Close();
      }
      j.Close();
    }
    j.Close();
    j.Open("contention")
        .Bool("ran", contention.ran)
        .Str("skipped", contention.skipped);
    if (contention.ran) {
      j.Int("contenders", contention.contenders)
          .Int("masters", contention.masters)
          .Num("ttl_ms", absl::ToDoubleMilliseconds(contention.ttl))
          .Num("wait_budget_ms", absl::ToDoubleMilliseconds(contention.wait))
          .Num("duration_s", contention.duration_s)
          .Int("cycles", contention.cycles)
          .Num("cycles_per_s", contention.cycles / contention.duration_s)
          .Int("failed_acquisitions", contention.failed)
          .Str("last_error", contention.last_error)
          .Dist("wait", Summarize(contention.wait_us))
          .Num("longest_wait_us", contention.max_wait_us)
          .Dist("free_gap", Summarize(contention.free_gap_us))
          .Num("longest_free_gap_us", contention.max_free_gap_us)
          .Int("overlapping_holders", contention.overlaps);
      j.OpenArray("grants_per_contender");
      for (int64_t g : contention.per_contender) j.Int({}, g);
      j.Close();
    }
    j.Close();
    j.Open("memory")
        .Int("rss_start_kb", rss_start_kb)
        .Int("rss_with_floor_kb", rss_floor_kb)
        .Int("rss_with_latency_clients_kb", rss_clients_kb)
        .Int("rss_end_kb", rss_end_kb)
        .Int("peak_rss_kb", hwm_kb)
        .Close();
    j.OpenArray("targets");
    for (const Target& t : targets) {
      j.Open()
          .Str("target", t.what)
          .Str("measured", t.measured)
          .Bool("evaluated", t.evaluated)
          .Bool("met", t.met)
          .Close();
    }
    j.Close();
    j.Close();
    std::ofstream out(path);
    out << j.str() << "\n";
    if (!out) Log(absl::StrCat("cannot write ", path));
  }

  if (const std::string prefix = absl::GetFlag(FLAGS_out_cdf);
      !prefix.empty()) {
    std::vector<std::pair<std::string, std::vector<double>>> cycle = {
        {"floor (1 master)", floor_all.cycle_us}};
    for (const LatencyConfig& c : configs) {
      if (c.client == "async" || (c.client != "floor" && c.masters == 5)) {
        cycle.push_back({c.name, c.own.cycle_us});
      }
    }
    WriteCdf(absl::StrCat(prefix, "-cycle.tsv"), cycle);
    WriteCdf(absl::StrCat(prefix, "-acquire.tsv"),
             {{"N=5, no fault", fault.nofault.acquire_us},
              {absl::StrCat("N=5, one master +",
                            absl::FormatDuration(fault.latency), " each way"),
               fault.fault.acquire_us}});
  }
  Log(absl::StrFormat("done in %.1f s", SecondsBetween(run_start, Now())));
  return 0;
}

}  // namespace
}  // namespace redlock::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return redlock::bench::Main();
}
