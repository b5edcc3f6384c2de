// Copyright 2026 The redlock Authors.
//
// The `redlock` tool's permits and readers under bad clocks and SIGKILL:
// three masters, the clock shim LD_PRELOADed into the tool itself.

#include "tests/tools/cli_fixture.h"

namespace redlock {
namespace {

using namespace ::redlock::cli_testing;  // NOLINT: the shared fixture.

// --- issue 24, item 5: permits and readers under bad clocks and SIGKILL ------
//
// Three masters, the clock shim (tests/support/clock_shim.c) LD_PRELOADed
// into the tool itself, and holders killed with SIGKILL.

class CliOnThreeMastersTest : public CliTest {
 protected:
  CliOnThreeMastersTest() { masters_ = 3; }

  // PTTL of `key` on every master, in the masters' order.
  std::vector<int64_t> Pttls(const std::string& key) {
    std::vector<int64_t> out;
    for (int i = 0; i < cluster_->size(); ++i) out.push_back(Pttl(i, key));
    return out;
  }

  // The environment that runs the tool under `clock`'s shim. Under ASan the
  // shim (built without sanitizers) comes ahead of ASan's runtime in the
  // preload list, which ASan refuses unless told not to check the order; the
  // shim only changes the wall clock and calls through to what follows it.
  static std::vector<std::string> ShimEnv(const testing::SkewedClock& clock) {
    std::vector<std::string> env = clock.ServerEnv();
#if defined(__SANITIZE_ADDRESS__)
    const char* asan = std::getenv("ASAN_OPTIONS");
    const std::string before = asan == nullptr ? "" : asan;
    env.push_back(absl::StrCat("ASAN_OPTIONS=", before,
                               before.empty() ? "" : ":",
                               "verify_asan_link_order=0"));
#endif
    return env;
  }

  // Whether process `pid` has the clock shim mapped (it was LD_PRELOADed).
  static bool MapsTheShim(pid_t pid) {
    return absl::StrContains(ReadFile(absl::StrCat("/proc/", pid, "/maps")),
                             testing::SkewedClock::ShimPath());
  }

  // SET `key` `value` PX 60000 on master i.
  void Hold(int i, const std::string& key, const std::string& value) {
    auto client = cluster_->Client(i);
    ASSERT_TRUE(client.ok()) << client.status();
    auto set = (*client)->Command({"SET", key, value, "PX", "60000"});
    ASSERT_TRUE(set.ok() && !set->is_error()) << set.status();
  }

  // Reads "+%s%N" lines written by date(1) into `path`: nanoseconds.
  static int64_t DateNs(const std::string& path) {
    int64_t ns = 0;
    EXPECT_TRUE(
        absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFile(path)), &ns))
        << path << ": " << ReadFile(path);
    return ns;
  }

  // Kills `holder` (a `redlock run` holding `key` with --ttl=2s) with
  // SIGKILL, so that its keep-alive stops with nothing released, and checks
  // that `key` is taken again after the TTL it had left, not before and not
  // never: `refused` (a wait-0 `redlock acquire`) exits kConflict with a
  // message containing `reason` right after the kill and at TTL/2, and
  // `waiter` (an acquire with a wait, started right after the kill) is
  // granted, no earlier than the moment a quorum of masters let `key` go.
  void KillAndSeeTheKeyGoAfterItsTtl(std::unique_ptr<Cli> holder,
                                     const std::string& key,
                                     const std::vector<std::string>& refused,
                                     const std::vector<std::string>& waiter,
                                     absl::string_view reason) {
    // At once, before the first keep-alive extension (667ms after the
    // grant for a 2s TTL): the TTL left is the one the acquisition set.
    ASSERT_FALSE(holder->Done());
    ASSERT_EQ(kill(holder->pid(), SIGKILL), 0);
    const absl::Time killed = absl::Now();
    const Finished dead = holder->Wait();
    EXPECT_EQ(dead.exit_code, 128 + SIGKILL) << dead;
    std::vector<int64_t> pttls = Pttls(key);
    const absl::Time measured = absl::Now();
    std::sort(pttls.begin(), pttls.end());
    // A writer or a permit needs a quorum (2 of 3) of masters free of `key`:
    // the second shortest PTTL says when that is.
    ASSERT_EQ(pttls.size(), 3u);
    const absl::Time freed = measured + absl::Milliseconds(pttls[1]);
    // The key keeps the TTL it had: more than TTL/2 (even had an extension
    // come first, it was at most 667ms before the kill), at most the 2s TTL.
    EXPECT_GT(pttls[0], 1000)
        << "key TTLs after the kill: " << absl::StrJoin(pttls, ",");
    EXPECT_LE(pttls[2], 2000) << absl::StrJoin(pttls, ",");

    auto wait = Start(waiter);
    const Finished at_once = Run(refused);
    EXPECT_EQ(at_once.exit_code, kConflict) << at_once;
    EXPECT_TRUE(absl::StrContains(at_once.err, reason)) << at_once;
    absl::SleepFor(killed + absl::Seconds(1) - absl::Now());  // TTL/2.
    const Finished half = Run(refused);
    const absl::Time half_done = absl::Now();
    EXPECT_EQ(half.exit_code, kConflict) << half;
    EXPECT_TRUE(absl::StrContains(half.err, reason)) << half;
    EXPECT_LT(half_done, freed) << "the TTL/2 check came too late to count";

    // Not never: granted within its wait. Not before: no earlier than a
    // quorum let the key go (less 50ms for the PTTL reading's rounding).
    absl::Time granted = absl::InfinitePast();
    while (!wait->Done() && absl::Now() < killed + kBound) {
      absl::SleepFor(absl::Milliseconds(2));
    }
    granted = absl::Now();
    const Finished got = wait->Wait();
    EXPECT_EQ(got.exit_code, 0) << got;
    EXPECT_GE(granted, freed - absl::Milliseconds(50))
        << "granted " << absl::FormatDuration(freed - granted)
        << " before a quorum let the key go";
    EXPECT_GE(granted, killed + absl::Seconds(1))
        << "granted before TTL/2 had passed since the kill";
  }
};

// Limit 2 across 3 masters. A holds a permit with a true clock; a client
// whose wall clock is an hour ahead and runs twice as fast takes the second
// and keeps it alive; a third is refused. Expiry is by each master's own
// clock (PX), so A's slot keeps the TTL it was given on every master, A
// still extends and releases it, and the fast client's slot lives its own
// TTL, neither longer nor shorter.
TEST_F(CliOnThreeMastersTest, AClientWhoseClockRunsFastChangesNobodysPermit) {
  auto fast = testing::SkewedClock::Create(Path("fast-clock"));
  ASSERT_TRUE(fast.ok()) << fast.status();
  (*fast)->Jump(absl::Hours(1));
  ASSERT_TRUE((*fast)->SetRate(2.0).ok());
  const std::vector<std::string> fast_env = ShimEnv(**fast);

  const absl::Time a_started = absl::Now();
  const Finished a = Run({"acquire", "--limit=2", "--ttl=20s", "pool"});
  ASSERT_EQ(a.exit_code, 0) << a;
  const std::string token_a = KeyValues(a.out)["token"];
  const std::string slot_a =
      absl::StrCat("redlock:__sem__:pool:", KeyValues(a.out)["slots"]);
  ASSERT_EQ(MastersHolding(slot_a, token_a), 3);

  // The fast client: `redlock run` under the shim, extending its permit
  // (TTL 9s, every 3s). Its command's date(1) shows the skew the tool runs
  // under: an hour ahead, two seconds per second.
  auto f = Start(
      {"run", "--limit=2", "--ttl=9s", "pool", "--", "sh", "-c",
       absl::StrCat("date +%s%N > ", Path("date1"), "; sleep 1; ",
                    "date +%s%N > ", Path("date2"), "; echo $REDLOCK_TOKEN > ",
                    Path("token"), "; ", AwaitFile(Path("go")))},
      fast_env);
  ASSERT_TRUE(WaitForText(Path("token"), "\n")) << ReadFile(f->err_path());
  EXPECT_TRUE(MapsTheShim(f->pid())) << "the shim is not in the tool";
  const int64_t true_ns = absl::ToUnixNanos(absl::Now());
  EXPECT_GT(DateNs(Path("date1")) - true_ns, int64_t{3500} * 1000000000);
  EXPECT_GE(DateNs(Path("date2")) - DateNs(Path("date1")),
            int64_t{1900} * 1000000);  // 1s of sleep: 2s on the fast clock.
  const std::string token_f =
      std::string(absl::StripAsciiWhitespace(ReadFile(Path("token"))));
  const std::string slot_f = absl::StrCat(
      "redlock:__sem__:pool:", slot_a == "redlock:__sem__:pool:0" ? 1 : 0);
  EXPECT_EQ(MastersHolding(slot_f, token_f), 3);

  // A third is refused, whatever its clock.
  for (const std::vector<std::string>& env :
       {std::vector<std::string>{}, fast_env}) {
    const Finished third = Run({"acquire", "--limit=2", "pool"}, env);
    EXPECT_EQ(third.exit_code, kConflict) << third;
    EXPECT_TRUE(absl::StrContains(third.err, "held by another owner")) << third;
  }

  // For 3 TTLs of the fast clock's own count (1.5s of true time each)
  // both slots keep the TTLs their holders gave, on every master.
  for (int sample = 0; sample < 6; ++sample) {
    const absl::Duration since_a = absl::Now() - a_started;
    for (int i = 0; i < 3; ++i) {
      const int64_t pa = Pttl(i, slot_a);
      EXPECT_LE(pa, 20000) << "master " << i;
      EXPECT_GT(pa, 20000 - absl::ToInt64Milliseconds(since_a) - 250)
          << "master " << i << " after " << since_a;
      // Extended every 3s to 9s: between 9s - 3s - slack and 9s.
      const int64_t pf = Pttl(i, slot_f);
      EXPECT_LE(pf, 9000) << "master " << i;
      EXPECT_GT(pf, 5000) << "master " << i;
    }
    EXPECT_EQ(MastersHolding(slot_a, token_a), 3);
    EXPECT_EQ(MastersHolding(slot_f, token_f), 3);
    absl::SleepFor(absl::Milliseconds(750));
  }

  // A extends and releases its own slot; the fast client's is untouched.
  const Finished extended =
      Run({"extend", "--limit=2", "--ttl=25s", "pool", token_a});
  EXPECT_EQ(extended.exit_code, 0) << extended;
  for (int i = 0; i < 3; ++i) EXPECT_GT(Pttl(i, slot_a), 20000);
  const Finished released = Run({"release", "--limit=2", "pool", token_a});
  EXPECT_EQ(released.exit_code, 0) << released;
  EXPECT_EQ(MastersWithKey(slot_a), 0);
  EXPECT_EQ(MastersHolding(slot_f, token_f), 3);
  Touch(Path("go"));
  const Finished done = f->Wait();
  EXPECT_EQ(done.exit_code, 0) << done;
  EXPECT_EQ(MastersWithKey(slot_f), 0);
}

// A client whose wall clock runs at a tenth of the true rate takes a permit
// while one master (the one it needs: another holds both slots on master 0)
// answers 400ms late. Validity is measured on the monotonic clock, so what
// the tool prints is at most ttl - 400ms (less the drift): the real time the
// acquisition took is at least the proxy's delay. With the wall clock it
// would have counted 40ms.
TEST_F(CliOnThreeMastersTest,
       AClientWhoseClockRunsSlowNeverReportsMoreValidityThanIsLeft) {
  auto slow = testing::SkewedClock::Create(Path("slow-clock"));
  ASSERT_TRUE(slow.ok()) << slow.status();
  ASSERT_TRUE((*slow)->SetRate(0.1).ok());
  Hold(0, "redlock:__semlimit__:pool", "2");
  Hold(0, "redlock:__sem__:pool:0", "stranger-0");
  Hold(0, "redlock:__sem__:pool:1", "stranger-1");
  auto proxy =
      testing::FaultProxy::Start({.upstream_port = cluster_->server(1).port()});
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  (*proxy)->SetLatency(absl::Milliseconds(400), absl::ZeroDuration());
  std::vector<std::string> uris = cluster_->Uris();
  uris[1] = (*proxy)->Uri();
  std::vector<std::string> env = ShimEnv(**slow);
  env.push_back(absl::StrCat("REDLOCK_MASTERS=", absl::StrJoin(uris, ",")));

  const absl::Time started = absl::Now();
  auto cli = StartWithEnv({"--request-timeout=3s", "acquire", "--limit=2",
                           "--ttl=10s", "--wait=5s", "pool"},
                          env);
  bool mapped = false;
  while (!cli->Done() && !mapped) mapped = MapsTheShim(cli->pid());
  const Finished f = cli->Wait();
  const absl::Duration took = absl::Now() - started;
  ASSERT_EQ(f.exit_code, 0) << f;
  EXPECT_TRUE(mapped) << "the shim was not seen in the tool";
  int64_t valid_ms = 0;
  ASSERT_TRUE(absl::SimpleAtoi(KeyValues(f.out)["valid_ms"], &valid_ms)) << f;
  // ttl - real elapsed (>= 400ms) - drift (10s * 0.01 + 2ms).
  EXPECT_LE(valid_ms, 10000 - 400 - 102)
      << f << "the tool took " << took << " by the test's clock";
  EXPECT_GT(valid_ms, 0) << f;
  // The granted slot is held on masters 1 and 2, with at most its TTL.
  const std::string slot =
      absl::StrCat("redlock:__sem__:pool:", KeyValues(f.out)["slots"]);
  for (int i = 1; i < 3; ++i) {
    EXPECT_EQ(Get(i, slot), KeyValues(f.out)["token"]) << "master " << i;
    EXPECT_LE(Pttl(i, slot), 10000) << "master " << i;
  }
}

// A `redlock run --limit=1` killed with SIGKILL (the tool itself: its
// keep-alive stops, nothing is released) gives its permit back after the
// TTL it left on the masters.
TEST_F(CliOnThreeMastersTest, AKilledPermitHolderGivesItBackAfterItsTtl) {
  auto holder = Start({"run", "--limit=1", "--ttl=2s", "pool", "--", "sh", "-c",
                       absl::StrCat("echo $REDLOCK_TOKEN > ", Path("token"),
                                    "; exec sleep 30")});
  ASSERT_TRUE(WaitForText(Path("token"), "\n")) << ReadFile(holder->err_path());
  const std::string token =
      std::string(absl::StripAsciiWhitespace(ReadFile(Path("token"))));
  ASSERT_EQ(MastersHolding("redlock:__sem__:pool:0", token), 3);
  KillAndSeeTheKeyGoAfterItsTtl(
      std::move(holder), "redlock:__sem__:pool:0",
      {"acquire", "--limit=1", "--wait=0s", "pool"},
      {"acquire", "--limit=1", "--ttl=5s", "--wait=10s", "pool"},
      "held by another owner");
  EXPECT_EQ(MastersHolding("redlock:__sem__:pool:0", token), 0);
}

// The same for a reader (`redlock run --shared`): a writer waits for the
// reader's TTL, not less, not forever.
TEST_F(CliOnThreeMastersTest, AKilledReaderHoldsAWriterOffForItsTtlOnly) {
  auto holder = Start({"run", "--shared", "--ttl=2s", "rw", "--", "sh", "-c",
                       absl::StrCat("echo $REDLOCK_TOKEN > ", Path("token"),
                                    "; exec sleep 30")});
  ASSERT_TRUE(WaitForText(Path("token"), "\n")) << ReadFile(holder->err_path());
  ASSERT_EQ(MastersHolding("redlock:rw", "shared"), 3);
  KillAndSeeTheKeyGoAfterItsTtl(
      std::move(holder), "redlock:rw", {"acquire", "--wait=0s", "rw"},
      {"acquire", "--ttl=5s", "--wait=10s", "rw"}, "held by another owner");
}

}  // namespace
}  // namespace redlock
