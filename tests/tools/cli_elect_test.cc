// Copyright 2026 The redlock Authors.
//
// `redlock elect` (leader election, issue 49) run as a real process against
// five real masters: the command runs only while this process leads, with
// its epoch; a second candidate takes over with a larger epoch once the
// first resigns; --listen and --leader report what the masters hold; a lost
// lease stops the command; status --election shows the lease and records;
// bad input is a usage error. The keys are keys.h's: the lease
// "redlock:__elect__:NAME", the record "redlock:__leader__:NAME" and the
// epoch counter "redlock:__fence__:__elect__:NAME".

#include "tests/tools/cli_fixture.h"

namespace redlock {
namespace {

using namespace ::redlock::cli_testing;  // NOLINT: the shared fixture.

constexpr int kNoLeader = 79;
constexpr char kLease[] = "redlock:__elect__:sched";
constexpr char kRecord[] = "redlock:__leader__:sched";
constexpr char kEpochCounter[] = "redlock:__fence__:__elect__:sched";

class CliElectTest : public CliTest {
 protected:
  // The number after "epoch=" in a line `elect` printed.
  static uint64_t EpochOf(absl::string_view line) {
    uint64_t epoch = 0;
    const size_t at = line.find("epoch=");
    if (at == absl::string_view::npos) return 0;
    absl::string_view rest = line.substr(at + 6);
    rest = rest.substr(0, rest.find(' '));
    return absl::SimpleAtoi(rest, &epoch) ? epoch : 0;
  }

  // The stdout of the n-th run a test started (Start() numbers them from 1).
  std::string Out(int n) const { return Path(absl::StrCat("out.", n)); }

  // A file's one number (and newline), or 0.
  static uint64_t NumberIn(const std::string& path) {
    uint64_t n = 0;
    return absl::SimpleAtoi(absl::StripSuffix(ReadFile(path), "\n"), &n) ? n
                                                                         : 0;
  }

  // Waits until the file at `path` has at least `n` lines.
  bool WaitForLines(const std::string& path, size_t n) {
    const absl::Time deadline = absl::Now() + kBound;
    while (Lines(ReadFile(path)).size() < n) {
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(10));
    }
    return true;
  }

  static std::vector<std::string> Lines(const std::string& text) {
    return absl::StrSplit(text, '\n', absl::SkipEmpty());
  }

  // DEL `key` on every master.
  void DeleteEverywhere(const std::string& key) {
    for (int i = 0; i < cluster_->size(); ++i) {
      auto client = cluster_->Client(i);
      ASSERT_TRUE(client.ok()) << client.status();
      auto del = (*client)->Command({"DEL", key});
      ASSERT_TRUE(del.ok() && !del->is_error()) << del.status();
    }
  }
};

TEST_F(CliElectTest, TheCommandRunsWithItsEpochWhileLeadingAndItsCodePasses) {
  const std::string env_file = Path("env");
  auto cli = Start(
      {"elect", "--value=10.0.0.7:8080", "sched", "--", "sh", "-c",
       absl::StrCat("printf '%s\\n' \"$REDLOCK_EPOCH\" \"$REDLOCK_FENCE\" "
                    "\"$REDLOCK_TOKEN\" \"$REDLOCK_ELECTION\" "
                    "\"${REDLOCK_RESOURCE-unset}\" > ",
                    env_file, ".tmp && mv ", env_file, ".tmp ", env_file, "; ",
                    AwaitFile(Path("go")), "; exit 7")},
      // An outer lock's variables are not passed on.
      {"REDLOCK_EPOCH=999", "REDLOCK_RESOURCE=outer"});
  ASSERT_TRUE(WaitForFile(env_file));
  const std::vector<std::string> lines =
      absl::StrSplit(ReadFile(env_file), '\n');
  ASSERT_GE(lines.size(), 5u);
  uint64_t epoch = 0;
  ASSERT_TRUE(absl::SimpleAtoi(lines[0], &epoch)) << lines[0];
  EXPECT_GE(epoch, 1u);
  EXPECT_NE(epoch, 999u);
  EXPECT_EQ(lines[1], lines[0]) << "REDLOCK_FENCE is the epoch";
  const std::string& token = lines[2];
  EXPECT_EQ(token.size(), 32u) << token;
  EXPECT_EQ(lines[3], "sched");
  EXPECT_EQ(lines[4], "unset");
  // While it runs: the lease holds the token, the record names it, and the
  // epoch counter says the epoch.
  EXPECT_EQ(MastersHolding(kLease, token), 5);
  EXPECT_GE(MastersHolding(kRecord,
                           absl::StrCat(epoch, " 1 ", token, " 10.0.0.7:8080")),
            3);
  EXPECT_GE(MastersHolding(kEpochCounter, lines[0]), 3);

  Touch(Path("go"));
  const Finished f = cli->Wait();
  EXPECT_EQ(f.exit_code, 7) << f;
  EXPECT_EQ(f.out, "") << f;
  // Resigned: the lease is free at once, not after its TTL.
  EXPECT_EQ(MastersWithKey(kLease), 0);
}

TEST_F(CliElectTest,
       ASecondCandidateRunsOnlyAfterTheFirstExitsWithLargerEpoch) {
  auto first = Start(
      {"elect", "--value=first", "sched", "--", "sh", "-c",
       absl::StrCat("echo $REDLOCK_EPOCH > ", Path("first.epoch"), "; ",
                    AwaitFile(Path("go")), "; touch ", Path("first.done"))});
  ASSERT_TRUE(WaitForFile(Path("first.epoch")));
  auto second =
      Start({"elect", "-v", "--value=second", "sched", "--", "sh", "-c",
             absl::StrCat("[ -e ", Path("first.done"), " ] && echo after > ",
                          Path("order"), "; echo $REDLOCK_EPOCH > ",
                          Path("second.epoch"))});
  ASSERT_TRUE(WaitForText(second->err_path(), "campaigning for election sched"))
      << ReadFile(second->err_path());
  // Campaigning, not running: the first still leads.
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_FALSE(Exists(Path("second.epoch")));
  EXPECT_FALSE(second->Done());

  Touch(Path("go"));
  const Finished f1 = first->Wait();
  EXPECT_EQ(f1.exit_code, 0) << f1;
  const Finished f2 = second->Wait();
  EXPECT_EQ(f2.exit_code, 0) << f2;
  EXPECT_EQ(ReadFile(Path("order")), "after\n");
  const uint64_t epoch1 = NumberIn(Path("first.epoch"));
  const uint64_t epoch2 = NumberIn(Path("second.epoch"));
  EXPECT_GE(epoch1, 1u);
  EXPECT_GT(epoch2, epoch1);
}

TEST_F(CliElectTest, WithoutACommandItPrintsTheLeadershipAndResignsOnSigterm) {
  auto holder = Start({"elect", "--value=a b\n", "sched"});
  ASSERT_TRUE(WaitForText(Out(1), "\n")) << ReadFile(Out(1));
  const std::string line = ReadFile(Out(1));
  // The value last, C-escaped: the line stays one line.
  EXPECT_TRUE(absl::StartsWith(line, "name=sched epoch=")) << line;
  EXPECT_TRUE(absl::EndsWith(line, " revision=1 value=a b\\n\n")) << line;
  const uint64_t epoch = EpochOf(line);
  EXPECT_GE(epoch, 1u);

  // --leader: the same line; --json: the same as an object.
  const Finished leader = Run({"elect", "--leader", "sched"});
  EXPECT_EQ(leader.exit_code, 0) << leader;
  EXPECT_EQ(leader.out, line);
  const Finished json = Run({"elect", "--leader", "--json", "sched"});
  EXPECT_EQ(json.exit_code, 0) << json;
  std::optional<Json> parsed = JsonParser(json.out).Parse();
  ASSERT_TRUE(parsed.has_value()) << json;
  EXPECT_EQ((*parsed)["name"].string, "sched");
  EXPECT_EQ((*parsed)["epoch"].number, static_cast<double>(epoch));
  EXPECT_EQ((*parsed)["revision"].number, 1);
  EXPECT_EQ((*parsed)["value"].string, "a b\n");

  ASSERT_EQ(kill(holder->pid(), SIGTERM), 0);
  const Finished f = holder->Wait();
  EXPECT_TRUE(f.exited) << f;
  EXPECT_EQ(f.exit_code, 0) << f;
  EXPECT_EQ(MastersWithKey(kLease), 0);

  const Finished none = Run({"elect", "--leader", "sched"});
  EXPECT_EQ(none.exit_code, kNoLeader) << none;
  EXPECT_EQ(none.out, "") << none;
  EXPECT_TRUE(absl::StrContains(none.err, "election sched has no leader"))
      << none;
}

TEST_F(CliElectTest, ListenPrintsTheLeaderThenTheNextOneInOrder) {
  auto listen = Start({"elect", "--listen", "sched"});
  auto listen_json = Start({"elect", "--listen", "--json", "sched"});
  auto a = Start({"elect", "--value=a", "sched"});
  ASSERT_TRUE(WaitForLines(Out(1), 1)) << ReadFile(Out(1));
  auto b = Start({"elect", "-v", "--value=b", "sched"});
  ASSERT_TRUE(WaitForText(b->err_path(), "campaigning for election sched"))
      << ReadFile(b->err_path());
  ASSERT_EQ(kill(a->pid(), SIGTERM), 0);
  const Finished fa = a->Wait();
  EXPECT_EQ(fa.exit_code, 0) << fa;
  ASSERT_TRUE(WaitForLines(Out(1), 2)) << ReadFile(Out(1));
  ASSERT_TRUE(WaitForLines(Out(2), 2)) << ReadFile(Out(2));

  ASSERT_EQ(kill(listen->pid(), SIGINT), 0);
  ASSERT_EQ(kill(listen_json->pid(), SIGTERM), 0);
  const Finished fl = listen->Wait();
  const Finished fj = listen_json->Wait();
  EXPECT_EQ(fl.exit_code, 0) << fl;
  EXPECT_EQ(fj.exit_code, 0) << fj;

  const std::vector<std::string> lines = Lines(fl.out);
  ASSERT_EQ(lines.size(), 2u) << fl;
  EXPECT_TRUE(absl::StartsWith(lines[0], "name=sched epoch=")) << lines[0];
  EXPECT_TRUE(absl::EndsWith(lines[0], " revision=1 value=a")) << lines[0];
  EXPECT_TRUE(absl::EndsWith(lines[1], " revision=1 value=b")) << lines[1];
  EXPECT_GT(EpochOf(lines[1]), EpochOf(lines[0]));
  // The same leaders as `elect` itself printed.
  EXPECT_EQ(fa.out, lines[0] + "\n");
  ASSERT_TRUE(WaitForText(Out(4), "value=b"));
  EXPECT_EQ(ReadFile(Out(4)), lines[1] + "\n");

  const std::vector<std::string> objects = Lines(fj.out);
  ASSERT_EQ(objects.size(), 2u) << fj;
  std::vector<std::string> values;
  for (const std::string& object : objects) {
    std::optional<Json> parsed = JsonParser(object).Parse();
    ASSERT_TRUE(parsed.has_value()) << object;
    EXPECT_EQ((*parsed)["name"].string, "sched");
    EXPECT_EQ((*parsed)["revision"].number, 1);
    values.push_back((*parsed)["value"].string);
  }
  EXPECT_THAT(values, ::testing::ElementsAre("a", "b"));

  ASSERT_EQ(kill(b->pid(), SIGTERM), 0);
  EXPECT_EQ(b->Wait().exit_code, 0);
}

TEST_F(CliElectTest, ALeaderKilledIsFollowedOnceItsLeaseRunsOut) {
  // Three candidates; the leader's `redlock elect` is SIGKILLed (nothing
  // resigns: its lease expires on the masters).
  auto first = Start(
      {"elect", "--ttl=2s", "sched", "--", "sh", "-c",
       absl::StrCat("echo $REDLOCK_EPOCH > ", Path("first.epoch"),
                    "; echo $$ > ", Path("first.pid"), "; exec sleep 60")});
  ASSERT_TRUE(WaitForFile(Path("first.pid")));
  std::vector<std::unique_ptr<Cli>> others;
  for (const char* name : {"b", "c"}) {
    others.push_back(
        Start({"elect", "-v", "--ttl=2s", "sched", "--", "sh", "-c",
               absl::StrCat("echo $REDLOCK_EPOCH > ", Path(name), ".epoch; ",
                            AwaitFile(Path("go")))}));
    ASSERT_TRUE(
        WaitForText(others.back()->err_path(), "campaigning for election"))
        << ReadFile(others.back()->err_path());
  }
  const absl::Time killed = absl::Now();
  ASSERT_EQ(kill(first->pid(), SIGKILL), 0);
  const Finished f1 = first->Wait();
  EXPECT_EQ(f1.exit_code, 128 + SIGKILL) << f1;
  // Its command, orphaned, is this test's to stop.
  const uint64_t orphan = NumberIn(Path("first.pid"));
  if (orphan > 1) kill(static_cast<pid_t>(orphan), SIGKILL);

  // One of the two leads next, with a larger epoch; the other waits.
  const absl::Time deadline = absl::Now() + kBound;
  while (!Exists(Path("b.epoch")) && !Exists(Path("c.epoch")) &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  const absl::Duration gap = absl::Now() - killed;
  ASSERT_TRUE(Exists(Path("b.epoch")) || Exists(Path("c.epoch")));
  // Within the 2 s lease and the retry delay: a generous bound that proves
  // nobody waited for anything else.
  EXPECT_LT(gap, absl::Seconds(8));
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_FALSE(Exists(Path("b.epoch")) && Exists(Path("c.epoch")))
      << "two leaders at once";
  const std::string next =
      Exists(Path("b.epoch")) ? Path("b.epoch") : Path("c.epoch");
  EXPECT_GT(NumberIn(next), NumberIn(Path("first.epoch")));
  Touch(Path("go"));
  for (auto& cli : others) EXPECT_EQ(cli->Wait().exit_code, 0);
  EXPECT_GT(NumberIn(Path("b.epoch")), NumberIn(Path("first.epoch")));
  EXPECT_GT(NumberIn(Path("c.epoch")), NumberIn(Path("first.epoch")));
  EXPECT_NE(NumberIn(Path("b.epoch")), NumberIn(Path("c.epoch")));
}

TEST_F(CliElectTest, ALeaderStoppedPastItsLeaseStopsItsCommandWhenWoken) {
  // The leader's `redlock elect` (not its command) is SIGSTOPped past its
  // lease; another candidate leads meanwhile. Woken, the first learns it
  // lost, stops its command and exits 76; the command, which ran on
  // unaware, is what fencing (the epoch) is for.
  auto first =
      Start({"elect", "--ttl=3s", "--grace=2s", "sched", "--", "sh", "-c",
             absl::StrCat("echo $REDLOCK_EPOCH > ", Path("first.epoch"),
                          "; trap 'echo term > ", Path("first.term"),
                          "; exit 0' TERM; while :; do sleep 0.05; done")});
  ASSERT_TRUE(WaitForFile(Path("first.epoch"))) << ReadFile(first->err_path());
  auto second =
      Start({"elect", "--ttl=3s", "sched", "--", "sh", "-c",
             absl::StrCat("echo $REDLOCK_EPOCH > ", Path("second.epoch"), "; ",
                          AwaitFile(Path("go")))});
  ASSERT_EQ(kill(first->pid(), SIGSTOP), 0);
  ASSERT_TRUE(WaitForFile(Path("second.epoch")));
  EXPECT_GT(NumberIn(Path("second.epoch")), NumberIn(Path("first.epoch")));
  EXPECT_FALSE(Exists(Path("first.term")));
  ASSERT_EQ(kill(first->pid(), SIGCONT), 0);
  const Finished f1 = first->Wait();
  EXPECT_EQ(f1.exit_code, kLost) << f1;
  EXPECT_TRUE(Exists(Path("first.term")));
  // The second leads on, undisturbed.
  EXPECT_FALSE(second->Done());
  Touch(Path("go"));
  EXPECT_EQ(second->Wait().exit_code, 0);
}

TEST_F(CliElectTest, LosingTheLeaseStopsTheCommandBeforeItExpiresAndExits76) {
  const absl::Duration ttl = absl::Seconds(3);
  auto cli =
      Start({"elect", "--ttl=3s", "--grace=5s", "sched", "--", "sh", "-c",
             absl::StrCat("trap 'echo term > ", Path("term"),
                          "; exit 0' TERM; echo up > ", Path("up"),
                          "; while :; do sleep 0.05; done")});
  ASSERT_TRUE(WaitForFile(Path("up")));
  // The lease was won or extended before this point, so it would have
  // expired at most `ttl` from now; its next extension now fails.
  const absl::Time deleted = absl::Now();
  DeleteEverywhere(kLease);
  const Finished f = cli->Wait();
  EXPECT_EQ(f.exit_code, kLost) << f;
  EXPECT_TRUE(Exists(Path("term")));
  EXPECT_LT(absl::Now() - deleted, ttl) << f;
  EXPECT_TRUE(absl::StrContains(f.err, "lost the leadership of election sched"))
      << f;
}

TEST_F(CliElectTest, WithoutACommandALostLeaseExits76) {
  auto cli = Start({"elect", "--ttl=3s", "sched"});
  ASSERT_TRUE(WaitForText(Out(1), "\n"));
  DeleteEverywhere(kLease);
  const Finished f = cli->Wait();
  EXPECT_EQ(f.exit_code, kLost) << f;
  EXPECT_TRUE(absl::StrContains(f.err, "lost the leadership of election sched"))
      << f;
}

TEST_F(CliElectTest, SigintWhileCampaigningEndsTheCampaignWith130) {
  auto holder = Start({"elect", "--value=holder", "sched"});
  ASSERT_TRUE(WaitForText(Out(1), "\n"));
  auto cli = Start({"elect", "-v", "sched", "--", "touch", Path("ran")});
  ASSERT_TRUE(WaitForText(cli->err_path(), "campaigning for election sched"))
      << ReadFile(cli->err_path());
  ASSERT_EQ(kill(cli->pid(), SIGINT), 0);
  const Finished f = cli->Wait();
  EXPECT_TRUE(f.exited) << f;
  EXPECT_EQ(f.exit_code, 128 + SIGINT) << f;
  EXPECT_TRUE(absl::StrContains(
      f.err, "interrupted by SIGINT while campaigning for election sched"))
      << f;
  EXPECT_FALSE(Exists(Path("ran")));
  // The holder still leads.
  const Finished leader = Run({"elect", "--leader", "sched"});
  EXPECT_TRUE(absl::EndsWith(leader.out, " value=holder\n")) << leader;

  // A bounded wait that runs out is a conflict, as for run.
  const Finished conflict =
      Run({"elect", "--wait=200ms", "sched", "--", "touch", Path("ran")});
  EXPECT_EQ(conflict.exit_code, kConflict) << conflict;
  EXPECT_FALSE(Exists(Path("ran")));
  ASSERT_EQ(kill(holder->pid(), SIGTERM), 0);
  EXPECT_EQ(holder->Wait().exit_code, 0);
}

TEST_F(CliElectTest, StatusElectionShowsTheLeaseRecordsAndEpochCounter) {
  auto holder = Start({"elect", "--value=a", "sched"});
  ASSERT_TRUE(WaitForText(Out(1), "\n"));
  const uint64_t epoch = EpochOf(ReadFile(Out(1)));
  ASSERT_GE(epoch, 1u);
  // One master's record is garbage: shown as such, the leader still found.
  {
    auto client = cluster_->Client(4);
    ASSERT_TRUE(client.ok()) << client.status();
    auto set = (*client)->Command({"SET", kRecord, "garbage"});
    ASSERT_TRUE(set.ok() && !set->is_error()) << set.status();
  }

  const Finished json = Run({"status", "--election", "--json", "sched"});
  EXPECT_EQ(json.exit_code, 0) << json;
  std::optional<Json> parsed = JsonParser(json.out).Parse();
  ASSERT_TRUE(parsed.has_value()) << json;
  EXPECT_EQ((*parsed)["key"].string, kLease);
  EXPECT_TRUE((*parsed)["held"].boolean);
  const Json& leader = (*parsed)["election"]["leader"];
  ASSERT_FALSE(leader.is_null()) << json;
  EXPECT_EQ(leader["epoch"].number, static_cast<double>(epoch));
  EXPECT_EQ(leader["value"].string, "a");
  const std::vector<Json>& masters = (*parsed)["masters"].array;
  ASSERT_EQ(masters.size(), 5u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(masters[i]["fence"].number, static_cast<double>(epoch));
    EXPECT_TRUE(masters[i]["record_matches_lease"].boolean) << i;
    EXPECT_EQ(masters[i]["record"]["value"].string, "a");
  }
  EXPECT_FALSE(masters[4]["record_matches_lease"].boolean);
  EXPECT_EQ(masters[4]["record"]["error"].string, "unreadable");

  const Finished text = Run({"status", "--election", "sched"});
  EXPECT_EQ(text.exit_code, 0) << text;
  EXPECT_TRUE(absl::StrContains(text.out, "matches the lease")) << text;
  EXPECT_TRUE(absl::StrContains(text.out, "unreadable record \"garbage\""))
      << text;
  EXPECT_TRUE(absl::StrContains(
      text.out,
      absl::StrCat("leader: epoch ", epoch, " revision 1 value \"a\"")))
      << text;

  ASSERT_EQ(kill(holder->pid(), SIGTERM), 0);
  EXPECT_EQ(holder->Wait().exit_code, 0);
  const Finished after = Run({"status", "--election", "sched"});
  EXPECT_TRUE(absl::StrContains(after.out, "no leader")) << after;
}

TEST_F(CliElectTest, LeaderIsUnknownWhenTooFewMastersAnswer) {
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cluster_->server(i).Kill().ok());
  const Finished f = Run({"elect", "--leader", "sched"});
  EXPECT_EQ(f.exit_code, kUnavailable) << f;
  EXPECT_EQ(f.out, "") << f;
}

TEST_F(CliElectTest, BadInputIsOneLineAndExitCode64) {
  const std::string masters = absl::StrCat("--masters=", Masters());
  const std::vector<std::vector<std::string>> cases = {
      {masters, "elect", "", "--", "true"},     // empty name
      {masters, "elect", "a b", "--", "true"},  // a space
      {masters, "elect", "a\tb", "--listen"},   // a control character
      {masters, "elect", std::string("--value=") + std::string(4097, 'x'),
       "sched", "--", "true"},              // value too long
      {masters, "elect", "sched", "--"},    // -- without a command
      {masters, "elect", "sched", "true"},  // a command without --
      {masters, "elect", "--listen", "--leader", "sched"},
      {masters, "elect", "--listen", "sched", "--", "true"},
      {masters, "elect", "--leader", "--value=x", "sched"},
      {masters, "elect", "--listen", "--wait=1s", "sched"},
      {masters, "elect", "--json", "sched", "--", "true"},
      {masters, "elect", "--fencing", "sched"},  // not for elect
      {masters, "elect"},                        // no name
      {masters, "status", "--election", "--limit=2", "sched"},
      {masters, "run", "--listen", "job", "--", "true"},
  };
  for (const std::vector<std::string>& args : cases) {
    SCOPED_TRACE(absl::StrJoin(args, " "));
    ExpectUsageError(StartWithEnv(args, {})->Wait());
  }
  // The library's own limit, exactly: 4096 bytes is a value.
  const Finished max =
      Run({"elect", std::string("--value=") + std::string(4096, 'x'), "sched",
           "--", "true"});
  EXPECT_EQ(max.exit_code, 0) << max;
}

}  // namespace
}  // namespace redlock
