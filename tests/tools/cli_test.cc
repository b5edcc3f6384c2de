// Copyright 2026 The redlock Authors.
//
// The `redlock` command-line tool, run as a real process against real
// masters started by the fixture: what its children see and when they run,
// exit codes, signals, a lost lock, the scripting subcommands, status output
// and bad input. TLS, readers and semaphores, and bad clocks each have a
// file of their own beside this one.

#include "tests/tools/cli_fixture.h"

namespace redlock {
namespace {

using namespace ::redlock::cli_testing;  // NOLINT: the shared fixture.

TEST_F(CliTest, TwoRunsAtOnceExactlyOneRunsTheCommand) {
  const std::string script =
      absl::StrCat("echo $$ >> ", Path("marker"), "; ", AwaitFile(Path("go")));
  auto a = Start({"run", "--ttl=20s", "job", "--", "sh", "-c", script});
  auto b = Start({"run", "--ttl=20s", "job", "--", "sh", "-c", script});
  // The loser exits at once; the winner's command waits for "go".
  const absl::Time deadline = absl::Now() + kBound;
  while (!a->Done() && !b->Done() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  Cli* loser = a->Done() ? a.get() : b.get();
  Cli* winner = loser == a.get() ? b.get() : a.get();
  const Finished lost = loser->Wait();
  EXPECT_EQ(lost.exit_code, kConflict) << lost;
  EXPECT_TRUE(absl::StrContains(lost.err, "held by another owner")) << lost;
  EXPECT_FALSE(winner->Done());
  Touch(Path("go"));
  const Finished won = winner->Wait();
  EXPECT_EQ(won.exit_code, 0) << won;
  const std::string marker = ReadFile(Path("marker"));
  EXPECT_EQ(std::count(marker.begin(), marker.end(), '\n'), 1) << marker;
  EXPECT_EQ(MastersWithKey("redlock:job"), 0);
}

// max_ttl is the tool's to set (the library's default, 1h, otherwise): it
// bounds --ttl and is how long the restart guard holds a master back.
TEST_F(CliTest, MaxTtlBoundsTheTtlAndIsChecked) {
  const Finished too_long = Run({"acquire", "--ttl=2h", "job"});
  ExpectUsageError(too_long);
  EXPECT_TRUE(absl::StrContains(too_long.err, "at most 1h")) << too_long;
  ExpectUsageError(Run({"acquire", "--max-ttl=0s", "job"}));
  ExpectUsageError(Run({"acquire", "--max-ttl=25h", "job"}));
  const Finished shorter =
      Run({"acquire", "--max-ttl=10s", "--ttl=20s", "job"});
  ExpectUsageError(shorter);
  EXPECT_TRUE(absl::StrContains(shorter.err, "at most 10s")) << shorter;
  const Finished longer = Run({"acquire", "--max-ttl=3h", "--ttl=2h", "job"});
  ASSERT_EQ(longer.exit_code, 0) << longer;
  const std::string token = KeyValues(longer.out)["token"];
  EXPECT_EQ(Run({"release", "--max-ttl=3h", "job", token}).exit_code, 0);
  EXPECT_EQ(MastersWithKey("redlock:job"), 0);
}

TEST_F(CliTest, HeldElsewhereExitsWithTheConflictCodeUnlessChanged) {
  const Finished held = Run({"acquire", "--ttl=30s", "job"});
  ASSERT_EQ(held.exit_code, 0) << held;
  const std::string touch = absl::StrCat("touch ", Path("ran"));

  const Finished plain = Run({"run", "job", "--", "sh", "-c", touch});
  EXPECT_EQ(plain.exit_code, kConflict) << plain;
  const Finished zero =
      Run({"run", "--conflict-exit-code=0", "job", "--", "sh", "-c", touch});
  EXPECT_EQ(zero.exit_code, 0) << zero;
  const Finished quiet = Run({"run", "--quiet", "--conflict-exit-code", "3",
                              "job", "--", "sh", "-c", touch});
  EXPECT_EQ(quiet.exit_code, 3) << quiet;
  EXPECT_EQ(quiet.err, "") << quiet;
  EXPECT_FALSE(Exists(Path("ran")));
}

TEST_F(CliTest, WithWaitTheSecondRunsAfterTheFirstFinishes) {
  const std::string log = Path("log");
  auto first =
      Start({"run", "--ttl=10s", "job", "--", "sh", "-c",
             absl::StrCat("echo first-start >> ", log, "; ",
                          AwaitFile(Path("go")), "; echo first-end >> ", log)});
  ASSERT_TRUE(WaitForFile(log));
  auto second = Start({"run", "--wait=20s", "job", "--", "sh", "-c",
                       absl::StrCat("echo second >> ", log)});
  // The second keeps waiting while the first holds the lock.
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_FALSE(second->Done());
  Touch(Path("go"));
  const Finished a = first->Wait();
  const Finished b = second->Wait();
  EXPECT_EQ(a.exit_code, 0) << a;
  EXPECT_EQ(b.exit_code, 0) << b;
  EXPECT_EQ(ReadFile(log), "first-start\nfirst-end\nsecond\n");
  // Not a terminal: no progress display.
  EXPECT_FALSE(absl::StrContains(b.err, "\r")) << b;
}

TEST_F(CliTest, TheTimingFileGetsOneLineOfARunsMilestonesInOrder) {
  const std::string timing = Path("timing");
  const Finished f = Run({"run", "job", "--", "sh", "-c", "exit 0"},
                         {absl::StrCat("REDLOCK_TIMING_FILE=", timing)});
  ASSERT_EQ(f.exit_code, 0) << f;
  const std::string text = ReadFile(timing);
  ASSERT_TRUE(absl::EndsWith(text, "\n")) << text;
  const std::vector<std::string> lines =
      absl::StrSplit(absl::StripSuffix(text, "\n"), '\n');
  ASSERT_EQ(lines.size(), 1u) << text;
  const std::vector<std::string> fields = absl::StrSplit(lines[0], ' ');
  const std::vector<std::string> names = {"main",     "configured", "client",
                                          "acquired", "spawning",   "forked",
                                          "reaped",   "released",   "exit"};
  ASSERT_EQ(fields.size(), 2 + names.size()) << text;
  EXPECT_EQ(fields[0], "timing");
  int64_t pid = 0;
  EXPECT_TRUE(absl::SimpleAtoi(fields[1], &pid) && pid > 0) << text;
  int64_t previous = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::vector<std::string> kv =
        absl::StrSplit(fields[2 + i], absl::MaxSplits('=', 1));
    ASSERT_EQ(kv.size(), 2u) << text;
    EXPECT_EQ(kv[0], names[i]) << text;
    int64_t ns = 0;
    ASSERT_TRUE(absl::SimpleAtoi(kv[1], &ns)) << text;
    // On one monotonic clock, in the order the run reaches them.
    EXPECT_GE(ns, previous) << names[i] << " in " << text;
    previous = ns;
  }
}

TEST_F(CliTest, TheCommandsExitCodeBecomesTheTools) {
  const Finished seven = Run({"run", "job", "--", "sh", "-c", "exit 7"});
  EXPECT_EQ(seven.exit_code, 7) << seven;
  const Finished killed =
      Run({"run", "job", "--", "sh", "-c", "kill -KILL $$"});
  EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << killed;
  const Finished not_found = Run({"run", "job", "--", "no-such-command-x"});
  EXPECT_EQ(not_found.exit_code, 127) << not_found;
  // Released every time.
  EXPECT_EQ(MastersWithKey("redlock:job"), 0);
}

TEST_F(CliTest, ArgumentsAfterTheSeparatorReachTheCommandUntouched) {
  const Finished f =
      Run({"run", "job", "--", "sh", "-c",
           absl::StrCat("printf '%s\\n' \"$@\" > ", Path("args")), "sh",
           "--ttl=1s", "--bogus", "--", "-v", "run"});
  EXPECT_EQ(f.exit_code, 0) << f;
  EXPECT_EQ(ReadFile(Path("args")), "--ttl=1s\n--bogus\n--\n-v\nrun\n");
}

// The descriptors of this process that a child inherits (not close-on-exec),
// with 0, 1 and 2, which the Cli helper always opens for the tool.
std::set<int> InheritableFds() {
  std::set<int> fds = {0, 1, 2};
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/self/fd")) {
    int fd = -1;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &fd)) continue;
    const int flags = fcntl(fd, F_GETFD);
    if (flags >= 0 && (flags & FD_CLOEXEC) == 0) fds.insert(fd);
  }
  return fds;
}

TEST_F(CliTest, TheCommandGetsTheDescriptorsTheToolGotAndNoneOfItsOwn) {
  // A descriptor the tool inherits (not close-on-exec) is the command's too;
  // the tool's own (the library's connections, its eventfds) are not.
  const std::string held = Path("held");
  const int fd = open(held.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 3);
  const std::set<int> expected = InheritableFds();
  ASSERT_TRUE(expected.count(fd) == 1);
  // ls lists its own descriptors, the directory it reads among them (a
  // /proc/ path), to the tool's standard output.
  const Finished f = Run({"run", "job", "--", "ls", "-l", "/proc/self/fd"});
  close(fd);
  ASSERT_EQ(f.exit_code, 0) << f;
  std::set<int> seen;
  std::string held_target;
  for (absl::string_view line : absl::StrSplit(f.out, '\n')) {
    const size_t arrow = line.find(" -> ");
    if (arrow == absl::string_view::npos) continue;
    const absl::string_view target = line.substr(arrow + 4);
    if (absl::StartsWith(target, "/proc/")) continue;
    const absl::string_view before = line.substr(0, arrow);
    int n = -1;
    ASSERT_TRUE(absl::SimpleAtoi(before.substr(before.rfind(' ') + 1), &n))
        << line;
    seen.insert(n);
    if (n == fd) held_target = std::string(target);
  }
  EXPECT_EQ(seen, expected) << f.out;
  EXPECT_EQ(held_target, held);
}

TEST_F(CliTest, RunTakesSeveralResourcesAsOneLockAllOrNone) {
  const std::string env_file = Path("env");
  auto cli =
      Start({"run", "--ttl=20s", "stock:7", "orders:42", "--", "sh", "-c",
             absl::StrCat(
                 "printf '%s\\n' \"$REDLOCK_TOKEN\" \"$REDLOCK_RESOURCES\" > ",
                 env_file, ".tmp && mv ", env_file, ".tmp ", env_file, "; ",
                 AwaitFile(Path("go")))});
  ASSERT_TRUE(WaitForFile(env_file));
  const std::vector<std::string> lines =
      absl::StrSplit(ReadFile(env_file), '\n');
  ASSERT_GE(lines.size(), 3u);
  // One token on both keys, on every master; the resources sorted.
  EXPECT_EQ(MastersHolding("redlock:orders:42", lines[0]), 5);
  EXPECT_EQ(MastersHolding("redlock:stock:7", lines[0]), 5);
  EXPECT_EQ(lines[1], "orders:42");
  EXPECT_EQ(lines[2], "stock:7");
  // While it runs, a lock on either one alone is refused, and so is a set
  // that shares one of them.
  const Finished one = Run({"acquire", "stock:7"});
  EXPECT_EQ(one.exit_code, 75) << one;
  const Finished other = Run({"run", "orders:42", "refunds:1", "--", "true"});
  EXPECT_EQ(other.exit_code, 75) << other;
  EXPECT_EQ(MastersWithKey("redlock:refunds:1"), 0);
  Touch(Path("go"));
  const Finished f = cli->Wait();
  EXPECT_EQ(f.exit_code, 0) << f;
  EXPECT_EQ(MastersWithKey("redlock:orders:42"), 0);
  EXPECT_EQ(MastersWithKey("redlock:stock:7"), 0);
}

TEST_F(CliTest, TheCommandSeesTheTokenAndFenceHeldOnTheMasters) {
  const std::string env_file = Path("env");
  auto cli = Start(
      {"run", "--fencing", "--ttl=20s", "job", "--", "sh", "-c",
       absl::StrCat("printf '%s\\n' \"$REDLOCK_TOKEN\" \"$REDLOCK_FENCE\" "
                    "\"$REDLOCK_RESOURCE\" \"$REDLOCK_VALID_UNTIL_MS\" > ",
                    env_file, ".tmp && mv ", env_file, ".tmp ", env_file, "; ",
                    AwaitFile(Path("go")))},
      {"REDLOCK_TOKEN=stale"});
  ASSERT_TRUE(WaitForFile(env_file));
  const std::vector<std::string> lines =
      absl::StrSplit(ReadFile(env_file), '\n');
  ASSERT_GE(lines.size(), 4u);
  const std::string& token = lines[0];
  EXPECT_EQ(token.size(), 32u) << token;
  EXPECT_EQ(MastersHolding("redlock:job", token), 5);
  uint64_t fence = 0;
  ASSERT_TRUE(absl::SimpleAtoi(lines[1], &fence)) << lines[1];
  EXPECT_GE(fence, 1u);
  EXPECT_GE(MastersHolding("redlock:__fence__:job", lines[1]), 3);
  EXPECT_EQ(lines[2], "job");
  int64_t valid_ms = 0;
  ASSERT_TRUE(absl::SimpleAtoi(lines[3], &valid_ms)) << lines[3];
  EXPECT_GT(valid_ms, 0);
  EXPECT_LE(valid_ms, 20000);
  Touch(Path("go"));
  const Finished f = cli->Wait();
  EXPECT_EQ(f.exit_code, 0) << f;
  EXPECT_EQ(MastersWithKey("redlock:job"), 0);

  // Without --fencing an inherited REDLOCK_FENCE is not passed on, and a
  // second grant gets a larger fence.
  const Finished plain = Run(
      {"run", "job", "--", "sh", "-c",
       absl::StrCat("echo \"fence=${REDLOCK_FENCE-unset}\" > ", Path("plain"))},
      {"REDLOCK_FENCE=12345"});
  EXPECT_EQ(plain.exit_code, 0) << plain;
  EXPECT_EQ(ReadFile(Path("plain")), "fence=unset\n");
  const Finished again =
      Run({"run", "--fencing", "job", "--", "sh", "-c",
           absl::StrCat("echo $REDLOCK_FENCE > ", Path("fence2"))});
  EXPECT_EQ(again.exit_code, 0) << again;
  uint64_t fence2 = 0;
  ASSERT_TRUE(absl::SimpleAtoi(
      absl::StripSuffix(ReadFile(Path("fence2")), "\n"), &fence2));
  EXPECT_GT(fence2, fence);
}

TEST_F(CliTest, LosingAMajorityStopsTheCommandBeforeTheLockExpires) {
  ExpectLosingAMajorityStopsTheCommand({}, "job");
}

TEST_F(CliTest, ACommandIgnoringSigtermIsKilledWithItsGroupAfterTheGrace) {
  auto cli = Start(
      {"run", "--ttl=3s", "--grace=300ms", "job", "--", "sh", "-c",
       absl::StrCat("trap '' TERM; sleep 60 & echo $! > ", Path("pid.tmp"),
                    "; mv ", Path("pid.tmp"), " ", Path("pid"), "; wait")});
  ASSERT_TRUE(WaitForFile(Path("pid")));
  int grandchild = 0;
  ASSERT_TRUE(absl::SimpleAtoi(absl::StripSuffix(ReadFile(Path("pid")), "\n"),
                               &grandchild));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cluster_->server(i).Kill().ok());
  const Finished f = cli->Wait();
  EXPECT_EQ(f.exit_code, kLost) << f;
  EXPECT_TRUE(absl::StrContains(f.err, "SIGKILL")) << f;
  // The background `sleep` was in the group too: soon gone, or a zombie
  // waiting for init to reap it.
  const std::string stat_path = absl::StrCat("/proc/", grandchild, "/stat");
  const absl::Time deadline = absl::Now() + kBound;
  std::string stat = ReadFile(stat_path);
  while (!stat.empty() && !absl::StrContains(stat, ") Z ") &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
    stat = ReadFile(stat_path);
  }
  EXPECT_TRUE(stat.empty() || absl::StrContains(stat, ") Z ")) << stat;
}

TEST_F(CliTest, SigtermToTheToolReachesTheCommandAndTheLockIsReleased) {
  auto cli = Start({"run", "--ttl=30s", "job", "--", "sh", "-c",
                    absl::StrCat("trap 'echo term > ", Path("term"),
                                 "; exit 3' TERM; echo up > ", Path("up"),
                                 "; while :; do sleep 0.05; done")});
  ASSERT_TRUE(WaitForFile(Path("up")));
  EXPECT_EQ(MastersWithKey("redlock:job"), 5);
  ASSERT_EQ(kill(cli->pid(), SIGTERM), 0);
  const Finished f = cli->Wait();
  EXPECT_EQ(f.exit_code, 3) << f;
  EXPECT_TRUE(Exists(Path("term")));
  // Released, not left to expire (the TTL is 30s).
  EXPECT_EQ(MastersWithKey("redlock:job"), 0);
}

TEST_F(CliTest, KillingTheToolStopsTheCommand) {
  // Nobody extends the lock once the tool is gone, so the command must not
  // run on: it gets SIGTERM.
  auto cli = Start({"run", "--ttl=30s", "job", "--", "sh", "-c",
                    absl::StrCat("trap 'echo term > ", Path("term"),
                                 "; exit 0' TERM; echo up > ", Path("up"),
                                 "; while :; do sleep 0.05; done")});
  ASSERT_TRUE(WaitForFile(Path("up")));
  ASSERT_EQ(kill(cli->pid(), SIGKILL), 0);
  EXPECT_EQ(cli->Wait().exit_code, 128 + SIGKILL);
  EXPECT_TRUE(WaitForFile(Path("term")));
}

// 130 alone would also be a tool killed by the SIGINT: it must exit by
// itself, say why, and leave the masters as the holder left them.
TEST_F(CliTest, SigintWhileWaitingEndsTheWait) {
  const Finished held = Run({"acquire", "--ttl=30s", "job"});
  ASSERT_EQ(held.exit_code, 0) << held;
  const std::string token = KeyValues(held.out)["token"];
  ASSERT_FALSE(token.empty()) << held;
  auto cli =
      Start({"run", "-v", "--wait=60s", "job", "--", "touch", Path("ran")});
  // Printed once signals are read from the signalfd.
  ASSERT_TRUE(WaitForText(cli->err_path(), "waiting for job"))
      << ReadFile(cli->err_path());
  ASSERT_EQ(kill(cli->pid(), SIGINT), 0);
  const Finished f = cli->Wait();
  EXPECT_TRUE(f.exited) << f;
  EXPECT_EQ(f.exit_code, 128 + SIGINT) << f;
  EXPECT_TRUE(
      absl::StrContains(f.err, "interrupted by SIGINT while waiting for job"))
      << f;
  EXPECT_FALSE(Exists(Path("ran")));
  // The holder's key, untouched, and nothing of the run's.
  EXPECT_EQ(MastersHolding("redlock:job", token), 5);
}

// The wait is one library call given a Cancellation: SIGINT ends it at once,
// and the attempt in flight, which holds masters 3 and 4 while master 2 is
// slow to refuse it, is released before the tool exits instead of being
// left to its 30s TTL.
TEST_F(CliTest, SigintEndsARunsWaitPromptlyAndLeavesNoKeyOfItsOwn) {
  const auto [f, took] = InterruptAnAttemptInFlight(
      {"run", "-v", "--wait=60s", "job", "--", "touch", Path("ran")}, SIGINT);
  EXPECT_TRUE(f.exited) << f;
  EXPECT_EQ(f.exit_code, 128 + SIGINT) << f;
  EXPECT_TRUE(
      absl::StrContains(f.err, "interrupted by SIGINT while waiting for job"))
      << f;
  // Neither the 60s wait nor the slow master's refusal is waited out.
  EXPECT_LT(took, absl::Seconds(2)) << f;
  EXPECT_FALSE(Exists(Path("ran")));
  EXPECT_TRUE(KeyGoneWithin(3, "redlock:job", absl::Seconds(2)));
  EXPECT_TRUE(KeyGoneWithin(4, "redlock:job", absl::Seconds(2)));
  EXPECT_EQ(MastersHolding("redlock:job", "holder-token"), 3);
}

TEST_F(CliTest, SigtermEndsAnAcquiresWaitPromptlyAndLeavesNoKeyOfItsOwn) {
  const auto [f, took] = InterruptAnAttemptInFlight(
      {"acquire", "-v", "--wait=60s", "job"}, SIGTERM);
  EXPECT_TRUE(f.exited) << f;
  EXPECT_EQ(f.exit_code, 128 + SIGTERM) << f;
  EXPECT_TRUE(absl::StrContains(f.err, "interrupted while acquiring job")) << f;
  EXPECT_EQ(f.out, "") << f;
  EXPECT_LT(took, absl::Seconds(2)) << f;
  EXPECT_TRUE(KeyGoneWithin(3, "redlock:job", absl::Seconds(2)));
  EXPECT_TRUE(KeyGoneWithin(4, "redlock:job", absl::Seconds(2)));
  EXPECT_EQ(MastersHolding("redlock:job", "holder-token"), 3);
}

TEST_F(CliTest, SigintWhileTheCommandRunsReachesItAndTheLockIsReleased) {
  auto cli = Start({"run", "--ttl=30s", "job", "--", "sh", "-c",
                    absl::StrCat("trap 'echo int > ", Path("int"),
                                 "; exit 7' INT; echo up > ", Path("up"),
                                 "; while :; do sleep 0.05; done")});
  ASSERT_TRUE(WaitForFile(Path("up")));
  EXPECT_EQ(MastersWithKey("redlock:job"), 5);
  ASSERT_EQ(kill(cli->pid(), SIGINT), 0);
  const Finished f = cli->Wait();
  // The command's own exit code, passed on by a tool that exited normally.
  EXPECT_TRUE(f.exited) << f;
  EXPECT_EQ(f.exit_code, 7) << f;
  EXPECT_TRUE(Exists(Path("int")));
  // Released, not left to expire (the TTL is 30s).
  EXPECT_EQ(MastersWithKey("redlock:job"), 0);
}

TEST_F(CliTest, TooFewMastersIsUnavailableNotAConflict) {
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cluster_->server(i).Kill().ok());
  const Finished run = Run({"run", "job", "--", "touch", Path("ran")});
  EXPECT_EQ(run.exit_code, kUnavailable) << run;
  EXPECT_FALSE(Exists(Path("ran")));
  const Finished acquire = Run({"acquire", "--wait=5s", "job"});
  EXPECT_EQ(acquire.exit_code, kUnavailable) << acquire;
  EXPECT_EQ(acquire.out, "") << acquire;
}

TEST_F(CliTest, AcquireExtendReleaseRoundTrip) {
  const Finished acquired = Run({"acquire", "--ttl=5s", "--fencing", "job"});
  ASSERT_EQ(acquired.exit_code, 0) << acquired;
  std::map<std::string, std::string> kv = KeyValues(acquired.out);
  const std::string token = kv["token"];
  EXPECT_EQ(kv["resource"], "job");
  EXPECT_EQ(kv["key"], "redlock:job");
  EXPECT_EQ(kv["ttl_ms"], "5000");
  EXPECT_FALSE(kv["fence"].empty());
  EXPECT_EQ(MastersHolding("redlock:job", token), 5);
  EXPECT_LE(Pttl(0, "redlock:job"), 5000);

  const Finished extended = Run({"extend", "job", token, "--ttl", "60s"});
  EXPECT_EQ(extended.exit_code, 0) << extended;
  kv = KeyValues(extended.out);
  EXPECT_EQ(kv["result"], "extended");
  // Decided at quorum speed: the masters that had not answered yet are
  // pending (they were sent the extension all the same).
  int extended_on = 0;
  int pending = 0;
  ASSERT_TRUE(absl::SimpleAtoi(kv["extended"], &extended_on)) << extended;
  ASSERT_TRUE(absl::SimpleAtoi(kv["pending"], &pending)) << extended;
  EXPECT_GE(extended_on, 3) << extended;
  EXPECT_EQ(extended_on + pending, 5) << extended;
  EXPECT_THAT(kv[absl::StrCat("master.", cluster_->server(0).Address())],
              ::testing::AnyOf("extended", "pending"));
  for (int i = 0; i < 5; ++i) EXPECT_GT(Pttl(i, "redlock:job"), 5000);

  const Finished wrong = Run({"extend", "--json", "job", "0123abcd"});
  EXPECT_EQ(wrong.exit_code, kLost) << wrong;
  std::optional<Json> json = JsonParser(wrong.out).Parse();
  ASSERT_TRUE(json.has_value()) << wrong.out;
  EXPECT_EQ((*json)["result"].string, "lost");
  EXPECT_EQ((*json)["valid_ms"].number, 0);
  // A failed extension reports no votes of its own; the library's message
  // lists them.
  EXPECT_TRUE(absl::StrContains((*json)["error"].string, "denied"))
      << wrong.out;
  EXPECT_EQ(MastersHolding("redlock:job", token), 5);

  const Finished released = Run({"release", "job", token});
  EXPECT_EQ(released.exit_code, 0) << released;
  EXPECT_EQ(KeyValues(released.out)["released"], "5");
  EXPECT_EQ(MastersWithKey("redlock:job"), 0);
  const Finished again = Run({"release", "job", token});
  EXPECT_EQ(again.exit_code, kLost) << again;

  const Finished as_json = Run({"acquire", "--json", "job"});
  ASSERT_EQ(as_json.exit_code, 0) << as_json;
  json = JsonParser(as_json.out).Parse();
  ASSERT_TRUE(json.has_value()) << as_json.out;
  EXPECT_EQ(MastersHolding("redlock:job", (*json)["token"].string), 5);
  EXPECT_GT((*json)["valid_ms"].number, 0);
}

TEST_F(CliTest, ReleaseAndExtendCountAQuorumLikeTheLibrary) {
  const Finished acquired = Run({"acquire", "--ttl=30s", "job"});
  ASSERT_EQ(acquired.exit_code, 0) << acquired;
  const std::string token = KeyValues(acquired.out)["token"];
  // Two masters down: three still make a quorum of five.
  ASSERT_TRUE(cluster_->server(3).Kill().ok());
  ASSERT_TRUE(cluster_->server(4).Kill().ok());
  const Finished extended = Run({"extend", "job", token});
  EXPECT_EQ(extended.exit_code, 0) << extended;
  EXPECT_EQ(KeyValues(extended.out)["failed"], "2");
  // A third down: nobody can tell whether the token is still held.
  ASSERT_TRUE(cluster_->server(2).Kill().ok());
  const Finished released = Run({"release", "job", token});
  EXPECT_EQ(released.exit_code, kUnavailable) << released;
  EXPECT_EQ(KeyValues(released.out)["released"], "2");
  EXPECT_EQ(MastersWithKey("redlock:job"), 0);
}

// extend adopts the token and extends it through the library: the validity
// it prints is what the library promises after the extension (start of the
// extension + ttl - drift), not the old TTL's and not the bare new TTL.
TEST_F(CliTest, ExtendOfAnAcquiredTokenReportsTheValidityItLeaves) {
  const Finished acquired = Run({"acquire", "--ttl=5s", "job"});
  ASSERT_EQ(acquired.exit_code, 0) << acquired;
  const std::string token = KeyValues(acquired.out)["token"];

  const Finished longer = Run({"extend", "--ttl=60s", "job", token});
  EXPECT_EQ(longer.exit_code, 0) << longer;
  std::map<std::string, std::string> kv = KeyValues(longer.out);
  EXPECT_EQ(kv["result"], "extended");
  EXPECT_EQ(kv["ttl_ms"], "60000");
  int64_t valid_ms = 0;
  ASSERT_TRUE(absl::SimpleAtoi(kv["valid_ms"], &valid_ms)) << longer;
  // drift = 60s * 0.01 + 2ms.
  EXPECT_LE(valid_ms, 60000 - 602) << longer;
  EXPECT_GT(valid_ms, 50000) << longer;
  for (int i = 0; i < 5; ++i) EXPECT_GT(Pttl(i, "redlock:job"), 50000);

  const Finished shorter = Run({"extend", "--json", "--ttl=20s", "job", token});
  EXPECT_EQ(shorter.exit_code, 0) << shorter;
  std::optional<Json> json = JsonParser(shorter.out).Parse();
  ASSERT_TRUE(json.has_value()) << shorter.out;
  EXPECT_EQ((*json)["result"].string, "extended");
  EXPECT_LE((*json)["valid_ms"].number, 20000 - 202) << shorter.out;
  EXPECT_GT((*json)["valid_ms"].number, 15000) << shorter.out;
  EXPECT_TRUE((*json)["error"].is_null()) << shorter.out;
  for (int i = 0; i < 5; ++i) EXPECT_LE(Pttl(i, "redlock:job"), 20000);
}

// The token is checked on every master: a token that differs in its last
// digit, or the 8-character prefix `status` shows, neither deletes nor
// extends the owner's key.
TEST_F(CliTest, ReleaseOrExtendOfAnotherTokenLeavesTheOwnersKey) {
  const Finished acquired = Run({"acquire", "--ttl=30s", "job"});
  ASSERT_EQ(acquired.exit_code, 0) << acquired;
  const std::string token = KeyValues(acquired.out)["token"];
  ASSERT_EQ(token.size(), 32u) << acquired;
  std::string last_digit_off = token;
  last_digit_off.back() = token.back() == '0' ? '1' : '0';

  for (const std::string& other : {last_digit_off, token.substr(0, 8)}) {
    SCOPED_TRACE(other);
    const Finished released = Run({"release", "job", other});
    EXPECT_EQ(released.exit_code, kLost) << released;
    std::map<std::string, std::string> kv = KeyValues(released.out);
    EXPECT_EQ(kv["result"], "lost");
    EXPECT_EQ(kv["released"], "0");
    EXPECT_EQ(kv["not_held"], "5");
    EXPECT_EQ(MastersHolding("redlock:job", token), 5);

    const Finished extended = Run({"extend", "--ttl=60s", "job", other});
    EXPECT_EQ(extended.exit_code, kLost) << extended;
    EXPECT_EQ(KeyValues(extended.out)["result"], "lost");
    for (int i = 0; i < 5; ++i) EXPECT_LE(Pttl(i, "redlock:job"), 30000);
  }
  EXPECT_EQ(MastersHolding("redlock:job", token), 5);
}

TEST_F(CliTest, StatusShowsAMasterSendingAHugeReplyAsUnreachable) {
  testing::HugeHeaderPeer peer;
  ASSERT_NE(peer.port(), 0);
  std::vector<std::string> uris = cluster_->Uris();
  uris.back() = peer.Uri();  // 4 real masters and the hostile peer.
  const Finished status =
      StartWithEnv(Args({"status", "--json", "job"}),
                   {absl::StrCat("REDLOCK_MASTERS=", absl::StrJoin(uris, ","))})
          ->Wait();
  EXPECT_EQ(status.exit_code, 0) << status;  // 4 reachable: a quorum.
  std::optional<Json> json = JsonParser(status.out).Parse();
  ASSERT_TRUE(json.has_value()) << status.out;
  EXPECT_EQ((*json)["reachable"].number, 4);
  const std::vector<Json>& masters = (*json)["masters"].array;
  ASSERT_EQ(masters.size(), 5u);
  EXPECT_FALSE(masters[4]["reachable"].boolean);
  EXPECT_TRUE(absl::StrContains(masters[4]["error"].string, "reply refused"))
      << status.out;
}

TEST_F(CliTest, StatusNamesASecondAddressOfOneServerAndAnEvictingPolicy) {
  if (RedisServer::UsingExternalMasters()) GTEST_SKIP() << "reconfigures";
  auto alias =
      testing::FaultProxy::Start({.upstream_port = cluster_->server(0).port()});
  ASSERT_TRUE(alias.ok()) << alias.status();
  {
    auto client = cluster_->Client(1);
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE(
        (*client)
            ->Command({"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"})
            .ok());
  }
  std::vector<std::string> uris = cluster_->Uris();
  uris.back() = (*alias)->Uri();  // Master 5 is master 1 again.
  const std::string masters =
      absl::StrCat("REDLOCK_MASTERS=", absl::StrJoin(uris, ","));
  const Finished json_run =
      StartWithEnv(Args({"status", "--json", "job"}), {masters})->Wait();
  EXPECT_EQ(json_run.exit_code, 0) << json_run;
  std::optional<Json> json = JsonParser(json_run.out).Parse();
  ASSERT_TRUE(json.has_value()) << json_run.out;
  // Four servers answered, not five.
  EXPECT_EQ((*json)["reachable"].number, 4) << json_run.out;
  const std::vector<Json>& list = (*json)["masters"].array;
  ASSERT_EQ(list.size(), 5u);
  EXPECT_EQ(list[4]["same_server_as"].number, 1) << json_run.out;
  EXPECT_EQ(list[1]["maxmemory_policy"].string, "allkeys-lru");
  EXPECT_EQ(list[0]["maxmemory_policy"].string, "noeviction");
  // The suite's masters run without AOF: flagged, as the library flags them.
  EXPECT_EQ(list[0]["persistence"].string, "no aof, no rdb") << json_run.out;
  EXPECT_FALSE(list[0]["durable"].boolean) << json_run.out;

  const Finished table =
      StartWithEnv(Args({"status", "job"}), {masters})->Wait();
  EXPECT_EQ(table.exit_code, 0) << table;
  EXPECT_TRUE(absl::StrContains(
      table.out,
      absl::StrCat("same server as ", cluster_->server(0).Address())))
      << table.out;
  EXPECT_TRUE(absl::StrContains(table.out,
                                "appendonly no: a restart brings "
                                "back at best the last RDB snapshot"))
      << table.out;
  EXPECT_TRUE(absl::StrContains(table.out, "maxmemory-policy is allkeys-lru"))
      << table.out;
}

// The direct commands reach masters as the library does: a host name is
// resolved (the connection itself takes numeric addresses only).
TEST_F(CliTest, StatusReachesMastersNamedByHostName) {
  std::string masters;
  for (int i = 0; i < 3; ++i) {
    absl::StrAppend(&masters, i == 0 ? "" : ",",
                    "redis://localhost:", cluster_->server(i).port());
  }
  const Finished status =
      StartWithEnv({"--masters", masters, "status", "--json", "job"}, {})
          ->Wait();
  EXPECT_EQ(status.exit_code, 0) << status;
  std::optional<Json> json = JsonParser(status.out).Parse();
  ASSERT_TRUE(json.has_value()) << status.out;
  EXPECT_EQ((*json)["reachable"].number, 3) << status.out;
}

TEST_F(CliTest, StatusJsonMatchesTheMasters) {
  const Finished acquired = Run({"acquire", "--fencing", "--ttl=20s", "job"});
  ASSERT_EQ(acquired.exit_code, 0) << acquired;
  std::map<std::string, std::string> kv = KeyValues(acquired.out);
  const std::string token = kv["token"];
  ASSERT_TRUE(cluster_->server(4).Kill().ok());

  const Finished status = Run({"status", "--json", "job"});
  EXPECT_EQ(status.exit_code, 0) << status;
  std::optional<Json> json = JsonParser(status.out).Parse();
  ASSERT_TRUE(json.has_value()) << status.out;
  EXPECT_EQ((*json)["resource"].string, "job");
  EXPECT_EQ((*json)["key"].string, "redlock:job");
  EXPECT_EQ((*json)["quorum"].number, 3);
  EXPECT_EQ((*json)["reachable"].number, 4);
  EXPECT_TRUE((*json)["held"].boolean);
  EXPECT_EQ((*json)["holder"].string, token.substr(0, 8));
  EXPECT_EQ((*json)["holders"].number, 4);
  const std::vector<Json>& masters = (*json)["masters"].array;
  ASSERT_EQ(masters.size(), 5u);
  for (int i = 0; i < 4; ++i) {
    const Json& m = masters[i];
    SCOPED_TRACE(cluster_->server(i).Address());
    EXPECT_EQ(m["master"].string, cluster_->server(i).Address());
    EXPECT_TRUE(m["reachable"].boolean);
    EXPECT_TRUE(m["held"].boolean);
    EXPECT_EQ(m["token_prefix"].string, token.substr(0, 8));
    EXPECT_GT(m["pttl_ms"].number, 0);
    EXPECT_LE(m["pttl_ms"].number, 20000);
    EXPECT_GE(m["latency_ms"].number, 0);
    const std::optional<std::string> counter = Get(i, "redlock:__fence__:job");
    ASSERT_TRUE(counter.has_value());
    EXPECT_EQ(absl::StrCat(m["fence"].number), *counter);
    const std::optional<std::string> marker = Get(i, "redlock:__deployment__");
    if (marker.has_value()) {
      EXPECT_EQ(m["marker"].string, *marker);
    } else {
      EXPECT_TRUE(m["marker"].is_null());
    }
    auto client = cluster_->Client(i);
    ASSERT_TRUE(client.ok());
    auto info = (*client)->Command({"INFO", "server"});
    ASSERT_TRUE(info.ok());
    EXPECT_TRUE(absl::StrContains(info->str,
                                  absl::StrCat("run_id:", m["run_id"].string)));
    EXPECT_GE(m["uptime_s"].number, 0);
  }
  EXPECT_EQ(masters[4]["master"].string, cluster_->server(4).Address());
  EXPECT_FALSE(masters[4]["reachable"].boolean);
  EXPECT_FALSE(masters[4]["error"].string.empty());

  const Finished table = Run({"status", "job"});
  EXPECT_EQ(table.exit_code, 0) << table;
  EXPECT_TRUE(absl::StrContains(table.out, token.substr(0, 8))) << table;
  EXPECT_TRUE(absl::StrContains(table.out, "down")) << table;

  // Below a quorum of reachable masters, status says so in its exit code.
  ASSERT_TRUE(cluster_->server(3).Kill().ok());
  ASSERT_TRUE(cluster_->server(2).Kill().ok());
  const Finished few = Run({"status", "--json", "job"});
  EXPECT_EQ(few.exit_code, kUnavailable) << few;
  json = JsonParser(few.out).Parse();
  ASSERT_TRUE(json.has_value()) << few.out;
  EXPECT_EQ((*json)["reachable"].number, 2);
  EXPECT_FALSE((*json)["held"].boolean);
}

// `status --prometheus`: "name{labels} value" lines, each after its
// family's # HELP and # TYPE gauge, as a map from "name{labels}" (exactly as
// written) to the value. A malformed line fails the test.
std::map<std::string, double> PrometheusSamples(absl::string_view text) {
  std::map<std::string, double> samples;
  std::set<std::string> typed;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (absl::ConsumePrefix(&line, "# TYPE ")) {
      std::vector<std::string> parts = absl::StrSplit(line, ' ');
      EXPECT_EQ(parts.size(), 2u) << line;
      EXPECT_EQ(parts.back(), "gauge") << line;
      EXPECT_TRUE(typed.insert(parts.front()).second)
          << "typed twice: " << line;
      continue;
    }
    if (absl::StartsWith(line, "# HELP ")) continue;
    const size_t space = line.rfind(' ');
    double value = 0;
    if (space == absl::string_view::npos ||
        !absl::SimpleAtod(line.substr(space + 1), &value)) {
      ADD_FAILURE() << "malformed line: " << line;
      continue;
    }
    const absl::string_view series = line.substr(0, space);
    const std::string name(series.substr(0, series.find('{')));
    EXPECT_TRUE(typed.count(name) == 1) << "no # TYPE before: " << line;
    EXPECT_TRUE(samples.emplace(std::string(series), value).second)
        << "repeated: " << line;
  }
  return samples;
}

TEST_F(CliTest, StatusPrometheusShowsEachMasterAndTheHolderAsGauges) {
  if (RedisServer::UsingExternalMasters()) GTEST_SKIP() << "reconfigures";
  const Finished acquired = Run({"acquire", "--fencing", "--ttl=20s", "job"});
  ASSERT_EQ(acquired.exit_code, 0) << acquired;
  const std::string token = KeyValues(acquired.out)["token"];
  ASSERT_TRUE(cluster_->server(4).Kill().ok());
  // Master 3 without the restart guard's marker, master 2 reborn a moment
  // ago: a client would count neither's grants.
  {
    auto client = cluster_->Client(3);
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE((*client)->Command({"DEL", "redlock:__deployment__"}).ok());
    client = cluster_->Client(2);
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE(
        (*client)
            ->Command({"SET", "redlock:__deployment__", "reborn:1700000000"})
            .ok());
  }

  const Finished status = Run({"status", "--prometheus", "job"});
  EXPECT_EQ(status.exit_code, 0) << status;
  std::map<std::string, double> m = PrometheusSamples(status.out);
  auto of = [&](int i) {
    return absl::StrCat("{resource=\"job\",master=\"",
                        cluster_->server(i).Address(), "\"}");
  };
  for (int i = 0; i < 5; ++i) {
    SCOPED_TRACE(cluster_->server(i).Address());
    const bool up = i < 4;
    EXPECT_EQ(m[absl::StrCat("redlock_master_connected", of(i))], up)
        << status.out;
    EXPECT_EQ(m[absl::StrCat("redlock_master_grants_counted", of(i))], i < 2);
    EXPECT_EQ(m.count(absl::StrCat("redlock_master_lock_ttl_seconds", of(i))),
              up ? 1u : 0u);
    if (!up) continue;
    EXPECT_EQ(m[absl::StrCat("redlock_master_lock_held", of(i))], 1);
    const double ttl =
        m[absl::StrCat("redlock_master_lock_ttl_seconds", of(i))];
    EXPECT_GT(ttl, 0);
    EXPECT_LE(ttl, 20);
    const std::optional<std::string> counter = Get(i, "redlock:__fence__:job");
    ASSERT_TRUE(counter.has_value());
    EXPECT_EQ(absl::StrCat(m[absl::StrCat("redlock_master_fence", of(i))]),
              *counter);
    EXPECT_GE(m[absl::StrCat("redlock_master_ping_seconds", of(i))], 0);
    EXPECT_EQ(m[absl::StrCat("redlock_master_eviction_risk{resource=\"job\","
                             "master=\"",
                             cluster_->server(i).Address(),
                             "\",policy=\"noeviction\"}")],
              0);
    // The suite's masters run without AOF or snapshots.
    EXPECT_EQ(m[absl::StrCat("redlock_master_persistence_risk{resource=\"job\","
                             "master=\"",
                             cluster_->server(i).Address(),
                             "\",persistence=\"no aof, no rdb\"}")],
              1)
        << status.out;
  }
  auto marker = [&](int i, absl::string_view state) {
    return m.count(absl::StrCat("redlock_master_deployment_marker{resource="
                                "\"job\",master=\"",
                                cluster_->server(i).Address(), "\",marker=\"",
                                state, "\"}")) == 1;
  };
  EXPECT_TRUE(marker(0, "trusted")) << status.out;
  EXPECT_TRUE(marker(2, "reborn"));
  EXPECT_TRUE(marker(3, "none"));
  EXPECT_EQ(m["redlock_lock_held{resource=\"job\"}"], 1);
  EXPECT_EQ(m[absl::StrCat("redlock_lock_holder{resource=\"job\",holder=\"",
                           token.substr(0, 8), "\"}")],
            1);
  EXPECT_EQ(m["redlock_lock_holders{resource=\"job\"}"], 4);
  EXPECT_GT(m["redlock_lock_expires_in_seconds{resource=\"job\"}"], 0);
  EXPECT_EQ(m["redlock_masters_reachable{resource=\"job\"}"], 4);
  EXPECT_EQ(m["redlock_masters{resource=\"job\"}"], 5);
  EXPECT_EQ(m["redlock_quorum{resource=\"job\"}"], 3);

  // Below a quorum the metrics are still written, and exit 0: the outage
  // is in the numbers.
  ASSERT_TRUE(cluster_->server(3).Kill().ok());
  ASSERT_TRUE(cluster_->server(2).Kill().ok());
  const Finished few = Run({"status", "--prometheus", "job"});
  EXPECT_EQ(few.exit_code, 0) << few;
  m = PrometheusSamples(few.out);
  EXPECT_EQ(m["redlock_masters_reachable{resource=\"job\"}"], 2) << few.out;
  EXPECT_EQ(m["redlock_lock_held{resource=\"job\"}"], 0);
  EXPECT_FALSE(absl::StrContains(few.out, "redlock_lock_holder{"));
  EXPECT_EQ(m.count("redlock_lock_expires_in_seconds{resource=\"job\"}"), 0u);
}

TEST_F(CliTest, StatusPrometheusEscapesTheResourceAndExcludesJson) {
  const Finished status = Run({"status", "--prometheus", "a\"b\\c"});
  EXPECT_EQ(status.exit_code, 0) << status;
  std::map<std::string, double> m = PrometheusSamples(status.out);
  EXPECT_EQ(m["redlock_lock_held{resource=\"a\\\"b\\\\c\"}"], 0) << status.out;
  EXPECT_EQ(m["redlock_masters_reachable{resource=\"a\\\"b\\\\c\"}"], 5);
  ExpectUsageError(Run({"status", "--prometheus", "--json", "job"}));
  ExpectUsageError(Run({"acquire", "--prometheus", "job"}));
}

TEST_F(CliTest, WaitingOnATerminalShowsWhoHoldsTheLock) {
  const Finished held = Run({"acquire", "--ttl=1500ms", "job"});
  ASSERT_EQ(held.exit_code, 0) << held;
  const std::string token = KeyValues(held.out)["token"];
  int master = -1;
  int slave = -1;
  ASSERT_EQ(openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  auto cli = Start({"run", "--wait=20s", "job", "--", "true"}, {}, slave);
  close(slave);
  std::string screen;
  const absl::Time deadline = absl::Now() + kBound;
  while (absl::Now() < deadline) {
    pollfd p = {master, POLLIN, 0};
    if (poll(&p, 1, 20) > 0) {
      char buffer[4096];
      const ssize_t n = read(master, buffer, sizeof(buffer));
      if (n > 0) {
        screen.append(buffer, n);
        continue;
      }
    }
    if (cli->Done()) break;
  }
  close(master);
  const Finished f = cli->Wait();
  EXPECT_EQ(f.exit_code, 0) << f << screen;
  EXPECT_TRUE(absl::StrContains(screen, "\r")) << screen;
  EXPECT_TRUE(absl::StrContains(screen, "redlock: waiting")) << screen;
  EXPECT_TRUE(absl::StrContains(screen, token.substr(0, 8))) << screen;
  EXPECT_TRUE(absl::StrContains(screen, "expires in")) << screen;
}

TEST_F(CliTest, PasswordsComeFromTheEnvironmentOrAFile) {
  RedisServer::Config config;
  config.requirepass = "s3cret:@";
  auto secured = RedisCluster::Start(3, config);
  ASSERT_TRUE(secured.ok()) << secured.status();
  std::string masters;
  for (int i = 0; i < 3; ++i) {
    absl::StrAppend(&masters, i == 0 ? "" : ",", "redis://",
                    (*secured)->server(i).Address());
  }
  const std::vector<std::string> args = {"--request-timeout=500ms", "status",
                                         "--json", "job"};
  const Finished none =
      StartWithEnv(args, {absl::StrCat("REDLOCK_MASTERS=", masters)})->Wait();
  // The masters refuse every command: as good as unreachable.
  EXPECT_EQ(none.exit_code, kUnavailable) << none;
  EXPECT_TRUE(absl::StrContains(none.out, "NOAUTH")) << none;

  const Finished from_env =
      StartWithEnv(args, {absl::StrCat("REDLOCK_MASTERS=", masters),
                          "REDLOCK_PASSWORD=s3cret:@"})
          ->Wait();
  EXPECT_EQ(from_env.exit_code, 0) << from_env;
  EXPECT_FALSE(absl::StrContains(from_env.out, "NOAUTH")) << from_env;

  std::ofstream(Path("password")) << "s3cret:@\n";
  const Finished from_file =
      StartWithEnv(
          {"--request-timeout=500ms", "--masters", masters, "--password-file",
           Path("password"), "run", "job", "--", "true"},
          {"REDLOCK_PASSWORD=wrong"})
          ->Wait();
  EXPECT_EQ(from_file.exit_code, 0) << from_file;
}

TEST_F(CliTest, AnAclUserComesFromUserAndItsPasswordNeverReachesTheCommand) {
  RedisServer::Config config;
  config.requirepass = "admin-pw";
  auto secured = RedisCluster::Start(3, config);
  ASSERT_TRUE(secured.ok()) << secured.status();
  std::string masters;
  for (int i = 0; i < 3; ++i) {
    auto admin = (*secured)->server(i).Client();
    ASSERT_TRUE(admin.ok()) << admin.status();
    ASSERT_TRUE((*admin)->Command({"AUTH", "admin-pw"}).ok());
    ASSERT_TRUE((*admin)
                    ->Command({"ACL", "SETUSER", "locker", "on", ">locker-pw",
                               "~*", "&*", "+@all"})
                    .ok());
    absl::StrAppend(&masters, i == 0 ? "" : ",", "redis://",
                    (*secured)->server(i).Address());
  }
  std::ofstream(Path("password")) << "locker-pw\n";
  // The command prints its environment: the lock's variables are there,
  // the password is not.
  const Finished run =
      StartWithEnv(
          {"--request-timeout=500ms", "--masters", masters, "--user", "locker",
           "--password-file", Path("password"), "run", "job", "--", "env"},
          {"REDLOCK_PASSWORD=locker-pw"})
          ->Wait();
  EXPECT_EQ(run.exit_code, 0) << run;
  EXPECT_TRUE(absl::StrContains(run.out, "REDLOCK_TOKEN=")) << run;
  EXPECT_FALSE(absl::StrContains(run.out, "locker-pw")) << run;
  // REDLOCK_USER works as --user; a user without a password is refused.
  const Finished from_env =
      StartWithEnv({"--request-timeout=500ms", "status", "--json", "job"},
                   {absl::StrCat("REDLOCK_MASTERS=", masters),
                    "REDLOCK_USER=locker", "REDLOCK_PASSWORD=locker-pw"})
          ->Wait();
  EXPECT_EQ(from_env.exit_code, 0) << from_env;
  const Finished no_password =
      StartWithEnv({"--masters", masters, "--user", "locker", "status", "job"},
                   {})
          ->Wait();
  EXPECT_EQ(no_password.exit_code, kUsage) << no_password;
  EXPECT_TRUE(absl::StrContains(no_password.err, "--user needs a password"))
      << no_password;
}

TEST_F(CliTest, BadInputIsOneLineAndExitCode64) {
  const std::string masters = absl::StrCat("--masters=", Masters());
  const std::vector<std::vector<std::string>> cases = {
      {},                                                  // no subcommand
      {masters, "frobnicate", "job"},                      // unknown
      {masters, "--bogus", "status", "job"},               // unknown option
      {masters, "run", "job"},                             // no --
      {masters, "run", "job", "--"},                       // no command
      {masters, "run", "job", "true"},                     // command, no --
      {masters, "run", "--ttl=-5s", "job", "--", "true"},  // negative
      {masters, "run", "--wait", "-1s", "job", "--", "true"},
      {masters, "run", "--grace=-1s", "job", "--", "true"},
      {masters, "acquire", "--ttl=abc", "job"},  // bad duration
      {masters, "acquire", "--ttl=2h", "job"},   // too long
      {masters, "acquire", "--ttl"},             // no value
      {masters, "acquire", "--conflict-exit-code=300", "job"},
      {masters, "status", "--grace=1s", "job"},                // not for status
      {masters, "release", "job"},                             // no token
      {masters, "status", "job", "--", "true"},                // not run
      {masters, "status", "__fence__:job"},                    // reserved
      {"--masters=http://127.0.0.1:1", "status", "job"},       // bad scheme
      {"--masters=redis://127.0.0.1:99999", "status", "job"},  // bad port
      {"--masters=redis://127.0.0.1:1,redis://127.0.0.1:1", "status", "job"},
      {"status", "job"},  // no masters
      {"--masters", masters.substr(10), "--password-file", Path("missing"),
       "status", "job"},
  };
  for (const std::vector<std::string>& args : cases) {
    SCOPED_TRACE(absl::StrJoin(args, " "));
    ExpectUsageError(StartWithEnv(args, {})->Wait());
  }
}

TEST_F(CliTest, HelpDocumentsSubcommandsExitCodesAndACronLine) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--help"}, {"help"}, {"-h"}}) {
    const Finished f = StartWithEnv(args, {})->Wait();
    EXPECT_EQ(f.exit_code, 0) << f;
    for (absl::string_view word : {"run",
                                   "acquire",
                                   "extend",
                                   "release",
                                   "status",
                                   "--wait",
                                   "--ttl",
                                   "--conflict-exit-code",
                                   "--fencing",
                                   "--grace",
                                   "--json",
                                   "--password-file",
                                   "REDLOCK_MASTERS",
                                   "REDLOCK_PASSWORD",
                                   "REDLOCK_TOKEN",
                                   "REDLOCK_FENCE",
                                   "64",
                                   "69",
                                   "75",
                                   "76",
                                   "0 3 * * *"}) {
      EXPECT_TRUE(absl::StrContains(f.out, word)) << word;
    }
  }
}

}  // namespace
}  // namespace redlock
