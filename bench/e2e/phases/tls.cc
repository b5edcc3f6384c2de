// Copyright 2026 The redlock Authors.
//
// TLS phase: what TLS costs next to plain TCP, on the same five
// redis-server processes, each serving plain TCP on one port and TLS on
// another (--port P --tls-port T, certificates made with `openssl` by
// tests/support/test_certs.h when the phase starts, in a temporary directory
// removed at its end; --tls-auth-clients no). Plain and TLS clients use key
// prefixes of their own (two deployments: a master's member name is
// host:port, and the two ports are two names).
//
//   cycle    whole cycles (acquire + release awaited), async AsyncRedlock
//            and blocking Redlock at N=5, plain and TLS in interleaved
//            blocks (which goes first alternates): p50 and client CPU per
//            cycle (getrusage) as TLS ÷ plain.
//   connect  one master: from before AsyncRedlock::Create() (on an
//            event_base this thread turns) until Health() says connected:
//            TCP connect, the TLS handshake for TLS, and the library's
//            Redis handshake (the same commands for both); plain and TLS in
//            alternating pairs; wall time and this thread's CPU.
//   fresh    a fresh blocking Redlock's Create() + first Acquire() (+
//            Release(), destroyed), N=5, with master 5 SIGSTOPped (the
//            kernel accepts its TCP connection; no TLS handshake is
//            answered) and with every master healthy, plain and TLS, in
//            rotating order.
//
// Starts its own servers; skipped with --masters. Reports results.json's
// "tls".

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
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
#include "redlock/async_redlock.h"
#include "redlock/health.h"
#include "redlock/lock.h"
#include "redlock/options.h"
#include "redlock/redlock.h"
#include "tests/support/redis_client.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_certs.h"

ABSL_FLAG(int, tls_rounds, 16,
          "TLS phase: rounds; in each every cycle configuration runs one "
          "block of --tls_block cycles.");
ABSL_FLAG(int, tls_block, 400, "TLS phase: cycles per block.");
ABSL_FLAG(int, tls_connects, 200,
          "TLS phase: one-master connections of each kind (plain, TLS).");
ABSL_FLAG(int, tls_fresh, 100,
          "TLS phase: fresh clients of each kind (plain / TLS, healthy / "
          "master 5 stopped).");

namespace redlock::bench {
namespace {

constexpr int kMasters = 5;
constexpr int kStoppedIndex = 4;  // Master 5 is the one stopped.

double CpuUsPerCycle(const Samples& s) {
  return s.cpu_cycles > 0 ? 1e6 * s.cpu.total() / s.cpu_cycles : 0;
}

// One cycle configuration: a client kind over one transport.
struct CycleConfig {
  std::string name;  // "async plain", ...
  bool tls = false;
  bool async = false;
  std::unique_ptr<Runner> runner;
  Samples samples;
  std::vector<double> block_p50;
};

// One kind of fresh client.
struct FreshKind {
  std::string name;
  bool tls = false;
  bool stop = false;
  std::vector<double> first_acquire_us, total_us;
  int errors = 0;
  std::string last_error;
  int64_t stopped_pending = 0, stopped_failed = 0, stopped_answered = 0;
};

// One kind of connection (plain or TLS).
struct ConnectKind {
  std::string name;
  bool tls = false;
  std::vector<double> wall_us, cpu_us;
  int errors = 0;
  std::string last_error;
};

// SIGCONTs the server if it is still stopped when the scope ends.
class ContinueOnExit {
 public:
  explicit ContinueOnExit(testing::RedisServer& server) : server_(server) {}
  ~ContinueOnExit() {
    if (server_.stopped()) (void)server_.Continue();
  }

 private:
  testing::RedisServer& server_;
};

class TlsPhase : public Phase {
 public:
  explicit TlsPhase(bool quick)
      : rounds_(quick ? 2 : absl::GetFlag(FLAGS_tls_rounds)),
        block_(quick ? 50 : absl::GetFlag(FLAGS_tls_block)),
        connects_(quick ? 10 : absl::GetFlag(FLAGS_tls_connects)),
        fresh_(quick ? 4 : absl::GetFlag(FLAGS_tls_fresh)) {}

  absl::Status Run(Context& ctx) override {
    if (ctx.cluster == nullptr) {
      skipped_ =
          "starts TLS servers of its own and SIGSTOPs one; not run with "
          "--masters";
    } else {
      skipped_ = RunTls(ctx);
    }
    if (!skipped_.empty()) Log(absl::StrCat("tls: skipped: ", skipped_));
    return absl::OkStatus();
  }

  void AddSettings(const Context& ctx, Json& settings) const override {
    settings["tls_rounds"] = rounds_;
    settings["tls_block"] = block_;
    settings["tls_connects"] = connects_;
    settings["tls_fresh"] = fresh_;
  }

  void AddTargets(std::vector<Target>& targets) const override {
    for (bool async : {true, false}) {
      Target t = Unmeasured(absl::StrCat(
          "TLS: N=5 cycle p50 ≤ 1.3× plain TCP p50, same servers (",
          async ? "async" : "blocking", ")"));
      if (ran_) {
        const CycleConfig& p = *Find(/*tls=*/false, async);
        const CycleConfig& s = *Find(/*tls=*/true, async);
        const Dist dp = Summarize(p.samples.cycle_us);
        const Dist ds = Summarize(s.samples.cycle_us);
        const double r = Ratio(ds.p50, dp.p50);
        t = {t.what,
             absl::StrFormat(
                 "%s (%s vs %s µs; per round %s; CPU per cycle "
                 "%s)",
                 X(r), Us(ds.p50), Us(dp.p50), Spread(RoundRatios(s, p), "—"),
                 X(Ratio(CpuUsPerCycle(s.samples), CpuUsPerCycle(p.samples)))),
             r <= 1.3, true};
      }
      targets.push_back(t);
    }
  }

  void AppendMarkdown(const Context& ctx, std::string& md) const override {
    if (!ran_) return;
    absl::StrAppend(
        &md, "### TLS vs plain TCP (N=5, the same five servers)\n\n",
        "Five more redis-server processes, each serving plain TCP on one "
        "port and TLS on another (`--port P --tls-port T --tls-cert-file "
        "--tls-key-file --tls-ca-cert-file --tls-auth-clients no`; an EC "
        "P-256 CA and server certificate made with `openssl` when the phase "
        "started, in a temporary directory removed at its end). The TLS "
        "clients verify the server's certificate against that CA "
        "(`TlsOptions::ca_file`) and its IP entry 127.0.0.1. Negotiated: ",
        negotiated_.empty() ? "(not read)" : negotiated_,
        ". Plain and TLS clients use key prefixes of their own.\n\n",
        "**Cycles.** Whole cycles (acquire, then release awaited), ", rounds_,
        " rounds; in each every configuration ran ", block_,
        " cycles, plain and TLS of one kind back to back, which goes first "
        "alternating. CPU: getrusage over each block, RUSAGE_THREAD for "
        "async (the whole client runs on the bench thread), RUSAGE_SELF for "
        "blocking. Times in µs.\n\n",
        "| configuration | cycles | p50 | p90 | p99 | acquire p50 | CPU µs "
        "per cycle | user | system | TLS ÷ plain p50 | per round (min / "
        "median / max) | TLS ÷ plain CPU | errors |\n"
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|\n");
    for (const CycleConfig& c : cycles_) {
      const Dist d = Summarize(c.samples.cycle_us);
      const Dist a = Summarize(c.samples.acquire_us);
      const double n = std::max<int64_t>(1, c.samples.cpu_cycles);
      std::string ratio, spread, cpu_ratio;
      if (c.tls) {
        const CycleConfig& p = *Find(false, c.async);
        ratio = X(Ratio(d.p50, Summarize(p.samples.cycle_us).p50));
        spread = Spread(RoundRatios(c, p), "—");
        cpu_ratio =
            X(Ratio(CpuUsPerCycle(c.samples), CpuUsPerCycle(p.samples)));
      }
      absl::StrAppend(
          &md, "| ", c.name, " | ", d.count, " | ", Us(d.p50), " | ", Us(d.p90),
          " | ", Us(d.p99), " | ", Us(a.p50), " | ",
          absl::StrFormat("%.1f", CpuUsPerCycle(c.samples)), " | ",
          absl::StrFormat("%.1f", 1e6 * c.samples.cpu.user / n), " | ",
          absl::StrFormat("%.1f", 1e6 * c.samples.cpu.sys / n), " | ", ratio,
          " | ", spread, " | ", cpu_ratio, " | ", c.samples.errors, " |\n");
    }
    absl::StrAppend(
        &md, "\n**Connecting.** One master (master 1 of the five), ", connects_,
        " connections of each kind in alternating pairs: from before "
        "`AsyncRedlock::Create()` (default options, on an event_base this "
        "thread turns) until `Health()` says connected, which is after the "
        "library's own Redis handshake (INFO, SCRIPT LOAD, CONFIG GET, TIME, "
        "GET of the marker; the same commands on both), so the difference "
        "is the TLS handshake and TLS's cost on those replies. CPU: this "
        "thread's (RUSAGE_THREAD), client side only. Times in µs.\n\n",
        "| transport | connections | p50 | p90 | p99 | max | CPU µs p50 | "
        "errors |\n|---|--:|--:|--:|--:|--:|--:|--:|\n");
    for (const ConnectKind& k : connect_) {
      const Dist d = Summarize(k.wall_us);
      absl::StrAppend(&md, "| ", k.name, " | ", d.count, " | ", Us(d.p50),
                      " | ", Us(d.p90), " | ", Us(d.p99), " | ", Us(d.max),
                      " | ", Us(Median(k.cpu_us)), " | ", k.errors, " |\n");
    }
    absl::StrAppend(
        &md, "\nTLS ÷ plain: p50 ",
        X(Ratio(Median(connect_[1].wall_us), Median(connect_[0].wall_us))),
        ", p99 ",
        X(Ratio(Summarize(connect_[1].wall_us).p99,
                Summarize(connect_[0].wall_us).p99)),
        ", CPU p50 ",
        X(Ratio(Median(connect_[1].cpu_us), Median(connect_[0].cpu_us))),
        ".\n\n");
    absl::StrAppend(
        &md, "**A fresh client's first acquisition.** ", fresh_,
        " fresh blocking clients of each kind, N=5, in an order that rotates "
        "(plain and TLS, every master healthy and master 5 SIGSTOPped: its "
        "kernel accepts the TCP connection, and a TLS handshake gets no "
        "answer): `Redlock::Create()` (default options: connect_timeout ",
        absl::FormatDuration(Options().connect_timeout),
        "), the first `Acquire()` (TTL ", absl::FormatDuration(ctx.ttl),
        ", one attempt), `Release()`, the client destroyed. Both deployments "
        "were marked by an earlier client. Master 5 is SIGCONTed and answers "
        "a PING before the next client. Times in µs from before "
        "`Create()`.\n\n",
        "| client | clients | first acquire p50 | p90 | p99 | max | whole "
        "client p50 | master 5's vote pending / failed / answered | errors "
        "|\n|---|--:|--:|--:|--:|--:|--:|---|--:|\n");
    for (const FreshKind& k : fresh_kinds_) {
      const Dist a = Summarize(k.first_acquire_us);
      absl::StrAppend(&md, "| ", k.name, " | ", a.count, " | ", Us(a.p50),
                      " | ", Us(a.p90), " | ", Us(a.p99), " | ", Us(a.max),
                      " | ", Us(Median(k.total_us)), " | ", k.stopped_pending,
                      " / ", k.stopped_failed, " / ", k.stopped_answered, " | ",
                      k.errors, " |\n");
    }
    const FreshKind& ph = fresh_kinds_[0];
    const FreshKind& ps = fresh_kinds_[1];
    const FreshKind& th = fresh_kinds_[2];
    const FreshKind& ts = fresh_kinds_[3];
    absl::StrAppend(
        &md,
        "\nFirst acquisition, p50 (p99): TLS with master 5 stopped ÷ "
        "plain with master 5 stopped ",
        X(Ratio(Median(ts.first_acquire_us), Median(ps.first_acquire_us))),
        " (",
        X(Ratio(Summarize(ts.first_acquire_us).p99,
                Summarize(ps.first_acquire_us).p99)),
        "); TLS healthy ÷ plain healthy ",
        X(Ratio(Median(th.first_acquire_us), Median(ph.first_acquire_us))),
        "; TLS stopped ÷ TLS healthy ",
        X(Ratio(Median(ts.first_acquire_us), Median(th.first_acquire_us))),
        ".\n\n");
  }

  void AddResults(Json& results) const override {
    Json j = Json::object();
    j["ran"] = ran_;
    j["skipped"] = skipped_;
    if (ran_) {
      j["negotiated"] = negotiated_;
      Json cycles = Json::object();
      for (const CycleConfig& c : cycles_) {
        Json k = Json::object();
        k["cycle"] = DistJson(Summarize(c.samples.cycle_us));
        k["acquire"] = DistJson(Summarize(c.samples.acquire_us));
        k["cpu_us_per_cycle"] = Num(CpuUsPerCycle(c.samples));
        k["block_p50_us"] = Nums(c.block_p50);
        k["errors"] = c.samples.errors;
        k["last_error"] = c.samples.last_error;
        cycles[c.name] = std::move(k);
      }
      j["cycles"] = std::move(cycles);
      Json connect = Json::object();
      for (const ConnectKind& k : connect_) {
        Json o = Json::object();
        o["wall"] = DistJson(Summarize(k.wall_us));
        o["cpu"] = DistJson(Summarize(k.cpu_us));
        o["errors"] = k.errors;
        o["last_error"] = k.last_error;
        connect[k.name] = std::move(o);
      }
      j["connect"] = std::move(connect);
      Json fresh = Json::object();
      for (const FreshKind& k : fresh_kinds_) {
        Json o = Json::object();
        o["first_acquire"] = DistJson(Summarize(k.first_acquire_us));
        o["whole_client"] = DistJson(Summarize(k.total_us));
        o["stopped_vote_pending"] = k.stopped_pending;
        o["stopped_vote_failed"] = k.stopped_failed;
        o["stopped_vote_answered"] = k.stopped_answered;
        o["errors"] = k.errors;
        o["last_error"] = k.last_error;
        fresh[k.name] = std::move(o);
      }
      j["fresh"] = std::move(fresh);
    }
    results["tls"] = std::move(j);
  }

 private:
  const CycleConfig* Find(bool tls, bool async) const {
    for (const CycleConfig& c : cycles_) {
      if (c.tls == tls && c.async == async) return &c;
    }
    return nullptr;
  }

  static std::vector<double> RoundRatios(const CycleConfig& a,
                                         const CycleConfig& b) {
    std::vector<double> rr;
    for (size_t r = 0; r < a.block_p50.size() && r < b.block_p50.size(); ++r) {
      if (a.block_p50[r] > 0 && b.block_p50[r] > 0) {
        rr.push_back(a.block_p50[r] / b.block_p50[r]);
      }
    }
    return rr;
  }

  Options OptionsFor(bool tls, const std::string& prefix) const {
    std::vector<std::string> uris;
    for (int i = 0; i < kMasters; ++i) {
      uris.push_back(tls ? cluster_->server(i).TlsUri()
                         : cluster_->server(i).Uri());
    }
    Options options = ClientOptions(std::move(uris), false);
    options.key_prefix =
        absl::StrCat(kKeyPrefix, "tls-phase:", prefix, tls ? "tls:" : "tcp:");
    if (tls) options.tls.ca_file = certs_->ca_file();
    return options;
  }

  // Returns why the phase was skipped, or "" once it ran.
  std::string RunTls(Context& ctx) {
    absl::StatusOr<std::unique_ptr<testing::TestCerts>> certs =
        testing::TestCerts::Make();
    if (!certs.ok())
      return absl::StrCat("certificates: ", certs.status().ToString());
    certs_ = *std::move(certs);
    testing::RedisServer::Config config;
    config.tls.enabled = true;
    config.tls.plain_port_too = true;
    config.tls.cert_file = certs_->server_cert();
    config.tls.key_file = certs_->server_key();
    config.tls.ca_file = certs_->ca_file();
    config.tls.client_auth = testing::RedisServer::Config::Tls::ClientAuth::kNo;
    absl::StatusOr<std::unique_ptr<testing::RedisCluster>> cluster =
        testing::RedisCluster::Start(kMasters, config);
    if (!cluster.ok()) {
      return absl::StrCat("TLS servers: ", cluster.status().ToString());
    }
    cluster_ = *std::move(cluster);
    Log(absl::StrCat("tls: 5 servers, plain and TLS ports, e.g. ",
                     cluster_->server(0).Uri(), " and ",
                     cluster_->server(0).TlsUri()));

    if (std::string why = RunCycles(ctx); !why.empty()) return why;
    if (std::string why = RunConnects(); !why.empty()) return why;
    if (std::string why = RunFresh(ctx); !why.empty()) return why;
    ran_ = true;
    cluster_.reset();
    certs_.reset();
    return "";
  }

  std::string RunCycles(Context& ctx) {
    for (bool async : {true, false}) {
      for (bool tls : {false, true}) {
        CycleConfig c;
        c.name = absl::StrCat(async ? "async" : "blocking", " N=5, ",
                              tls ? "TLS" : "plain TCP");
        c.tls = tls;
        c.async = async;
        const Options options = OptionsFor(tls, "cycle:");
        const std::string resource =
            absl::StrCat("tls-phase-", async ? "async" : "blocking");
        if (async) {
          absl::StatusOr<std::unique_ptr<AsyncRunner>> r =
              AsyncRunner::Create(options, resource, ctx.ttl);
          if (!r.ok()) return absl::StrCat(c.name, ": ", r.status().ToString());
          c.runner = *std::move(r);
        } else {
          absl::StatusOr<std::unique_ptr<BlockingRunner>> r =
              BlockingRunner::Create(options, resource, ctx.ttl);
          if (!r.ok()) return absl::StrCat(c.name, ": ", r.status().ToString());
          c.runner = *std::move(r);
        }
        if (absl::Status s = WarmUp(*c.runner, 50, absl::Seconds(20));
            !s.ok()) {
          return absl::StrCat(c.name, ": ", s.ToString());
        }
        cycles_.push_back(std::move(c));
      }
    }
    // What was negotiated, from an async TLS client.
    for (const CycleConfig& c : cycles_) {
      if (c.tls && c.async) {
        auto* r = static_cast<AsyncRunner*>(c.runner.get());
        negotiated_ = r->client().Health()[0].tls;
      }
    }
    Log(absl::StrCat("tls: ", rounds_, " rounds x ", block_,
                     " cycles, async and blocking, plain and TLS"));
    for (int round = 0; round < rounds_; ++round) {
      for (size_t pair = 0; pair < cycles_.size(); pair += 2) {
        for (int k = 0; k < 2; ++k) {
          CycleConfig& c = cycles_[pair + ((k + round) % 2)];
          c.block_p50.push_back(RunBlock(*c.runner, block_, c.samples).p50_us);
        }
      }
    }
    for (CycleConfig& c : cycles_) c.runner.reset();
    return "";
  }

  std::string RunConnects() {
    connect_.push_back({"plain TCP", false, {}, {}, 0, ""});
    connect_.push_back({"TLS", true, {}, {}, 0, ""});
    event_base* base = event_base_new();
    if (base == nullptr) return "event_base_new failed";
    // Pairs of one each, which goes first alternating; the first pair is a
    // warm-up, not counted.
    for (int i = -2; i < 2 * connects_; ++i) {
      const int pair = (i + 2) / 2;
      ConnectKind& k = connect_[(i + 2 + pair) % 2];
      Options options = OptionsFor(k.tls, "connect:");
      options.masters.resize(1);
      const Cpu c0 = CpuNow(RUSAGE_THREAD);
      const SteadyTime t0 = Now();
      absl::StatusOr<std::unique_ptr<AsyncRedlock>> client =
          AsyncRedlock::Create(base, std::move(options));
      if (!client.ok()) {
        event_base_free(base);
        return absl::StrCat("connect: ", client.status().ToString());
      }
      const bool up = RunUntil(
          base, [&] { return (*client)->Health()[0].connected; },
          absl::Seconds(5));
      const SteadyTime t1 = Now();
      const Cpu c1 = CpuNow(RUSAGE_THREAD);
      if (i >= 0) {
        if (!up) {
          ++k.errors;
          k.last_error = (*client)->Health()[0].last_error.ToString();
        } else {
          k.wall_us.push_back(MicrosBetween(t0, t1));
          k.cpu_us.push_back(1e6 * (c1 - c0).total());
        }
      }
      client->reset();
      // Lets the closed connection's events run before the next one.
      event_base_loop(base, EVLOOP_NONBLOCK);
    }
    event_base_free(base);
    return "";
  }

  std::string RunFresh(Context& ctx) {
    testing::RedisServer& victim = cluster_->server(kStoppedIndex);
    ContinueOnExit guard(victim);
    absl::StatusOr<std::unique_ptr<testing::RedisClient>> pinger =
        cluster_->Client(kStoppedIndex);
    if (!pinger.ok()) {
      return absl::StrCat("client to master 5: ", pinger.status().ToString());
    }
    for (bool tls : {false, true}) {
      for (bool stop : {false, true}) {
        FreshKind k;
        k.name = absl::StrCat(tls ? "TLS" : "plain TCP", ", ",
                              stop ? "master 5 stopped" : "all healthy");
        k.tls = tls;
        k.stop = stop;
        fresh_kinds_.push_back(std::move(k));
      }
    }
    // An earlier client marks each deployment.
    for (bool tls : {false, true}) {
      const Options options = OptionsFor(tls, "fresh:");
      absl::StatusOr<std::unique_ptr<Redlock>> setup = Redlock::Create(options);
      if (!setup.ok()) {
        return absl::StrCat("fresh setup: ", setup.status().ToString());
      }
      absl::StatusOr<Lock> lock =
          (*setup)->Acquire("tls-fresh-setup", ctx.ttl, absl::Seconds(2));
      if (!lock.ok()) {
        return absl::StrCat("fresh setup acquire: ", lock.status().ToString());
      }
      ReleaseOptions all;
      all.wait_for_all_masters = true;
      (void)(*setup)->Release(*lock, all);
      bool marked = false;
      const SteadyTime deadline = Now() + std::chrono::seconds(5);
      while (!marked && Now() < deadline) {
        int n = 0;
        for (const MasterHealth& h : (*setup)->Health()) {
          n += absl::StartsWith(h.marker, "trusted");
        }
        marked = n == kMasters;
        if (!marked) absl::SleepFor(absl::Milliseconds(10));
      }
      if (!marked) return "fresh setup: the marker is not on all 5";
    }
    Log(absl::StrCat("tls: ", fresh_, " fresh clients of each of 4 kinds"));
    static int serial = 0;
    for (int i = -1; i < fresh_; ++i) {  // i = -1: warm-up, not counted.
      for (int j = 0; j < 4; ++j) {
        FreshKind& k = fresh_kinds_[(j + std::max(i, 0)) % 4];
        if (k.stop) {
          if (absl::Status s = victim.Stop(); !s.ok()) {
            return absl::StrCat("SIGSTOP master 5: ", s.ToString());
          }
        }
        const Options options = OptionsFor(k.tls, "fresh:");
        const std::string resource = absl::StrCat("tls-fresh-", ++serial);
        absl::Status error;
        MasterVote vote;
        const SteadyTime t0 = Now();
        SteadyTime t2 = t0, t4 = t0;
        {
          absl::StatusOr<std::unique_ptr<Redlock>> client =
              Redlock::Create(options);
          if (!client.ok()) {
            error = client.status();
          } else {
            absl::StatusOr<Lock> lock =
                (*client)->Acquire(resource, ctx.ttl, absl::ZeroDuration());
            t2 = Now();
            if (!lock.ok()) {
              error = lock.status();
            } else {
              if (kStoppedIndex < static_cast<int>(lock->votes().size())) {
                vote = lock->votes()[kStoppedIndex];
              }
              absl::StatusOr<ReleaseReport> report = (*client)->Release(*lock);
              if (!report.ok()) error = report.status();
            }
            client->reset();
            t4 = Now();
          }
        }
        if (k.stop) {
          if (absl::Status c = victim.Continue(); !c.ok()) {
            return absl::StrCat("SIGCONT master 5: ", c.ToString());
          }
          const SteadyTime deadline = Now() + std::chrono::seconds(5);
          while (!(*pinger)->Ping().ok() && Now() < deadline) {
          }
        }
        if (i < 0) continue;
        if (!error.ok()) {
          ++k.errors;
          k.last_error = error.ToString();
          continue;
        }
        k.first_acquire_us.push_back(MicrosBetween(t0, t2));
        k.total_us.push_back(MicrosBetween(t0, t4));
        if (k.stop) {
          switch (vote.kind) {
            case MasterVote::Kind::kPending:
              ++k.stopped_pending;
              break;
            case MasterVote::Kind::kFailed:
              ++k.stopped_failed;
              break;
            default:
              ++k.stopped_answered;
          }
        }
      }
    }
    return "";
  }

  const int rounds_;
  const int block_;
  const int connects_;
  const int fresh_;
  bool ran_ = false;
  std::string skipped_;
  std::string negotiated_;
  std::unique_ptr<testing::TestCerts> certs_;
  std::unique_ptr<testing::RedisCluster> cluster_;
  std::vector<CycleConfig> cycles_;
  std::vector<ConnectKind> connect_;
  std::vector<FreshKind> fresh_kinds_;
};

const RegisterPhase kRegistered(60, "tls",
                                [](bool quick) -> std::unique_ptr<Phase> {
                                  return std::make_unique<TlsPhase>(quick);
                                });

}  // namespace
}  // namespace redlock::bench
