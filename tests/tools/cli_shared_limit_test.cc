// Copyright 2026 The redlock Authors.
//
// The `redlock` tool's readers (--shared) and semaphores (--limit), as real
// processes against real masters.

#include <optional>
#include <string>

#include "absl/strings/str_format.h"
#include "redlock/keys.h"
#include "redlock/options.h"
#include "tests/tools/cli_fixture.h"

namespace redlock {
namespace {

using namespace ::redlock::cli_testing;  // NOLINT: the shared fixture.

// --- readers (--shared) and semaphores (--limit) -----------------------------

// How many times `needle` occurs in `text`.
int CountOf(absl::string_view text, absl::string_view needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != absl::string_view::npos;
       at = text.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

// Two readers at once: each command starts, then waits until both have
// started, so they can only finish if both ran at the same time.
TEST_F(CliTest, TwoSharedRunsAtOnceBothRunTheCommand) {
  auto reader = [&](const std::string& me, const std::string& other) {
    return Start({"run", "--shared", "--ttl=20s", "rw", "--", "sh", "-c",
                  absl::StrCat("touch ", Path(me), "; ", AwaitFile(Path(other)),
                               "; [ -e ", Path(other), " ]")});
  };
  auto a = reader("a-in", "b-in");
  auto b = reader("b-in", "a-in");
  const Finished fa = a->Wait();
  const Finished fb = b->Wait();
  EXPECT_EQ(fa.exit_code, 0) << fa;
  EXPECT_EQ(fb.exit_code, 0) << fb;
  EXPECT_EQ(MastersWithKey("redlock:rw"), 0);
}

TEST_F(CliTest, ASharedRunAndAPlainRunExcludeEachOther) {
  const std::string touch = absl::StrCat("touch ", Path("ran"));
  // A reader inside: the writer is refused at once.
  auto reader =
      Start({"run", "--shared", "--ttl=20s", "rw", "--", "sh", "-c",
             absl::StrCat("touch ", Path("in"), "; ", AwaitFile(Path("go")))});
  ASSERT_TRUE(WaitForFile(Path("in")));
  const Finished writer =
      Run({"run", "--wait=0s", "rw", "--", "sh", "-c", touch});
  EXPECT_EQ(writer.exit_code, kConflict) << writer;
  EXPECT_FALSE(Exists(Path("ran")));
  Touch(Path("go"));
  EXPECT_EQ(reader->Wait().exit_code, 0);
  ASSERT_EQ(MastersWithKey("redlock:rw"), 0);

  // A writer inside: a reader is refused at once.
  auto plain = Start(
      {"run", "--ttl=20s", "rw", "--", "sh", "-c",
       absl::StrCat("touch ", Path("in2"), "; ", AwaitFile(Path("go2")))});
  ASSERT_TRUE(WaitForFile(Path("in2")));
  const Finished shared =
      Run({"run", "--shared", "--wait=0s", "rw", "--", "sh", "-c", touch});
  EXPECT_EQ(shared.exit_code, kConflict) << shared;
  EXPECT_FALSE(Exists(Path("ran")));
  Touch(Path("go2"));
  EXPECT_EQ(plain->Wait().exit_code, 0);
  EXPECT_EQ(MastersWithKey("redlock:rw"), 0);
}

// The most commands inside at once, from a log of "+" (in) and "-" (out).
int MostInside(const std::string& log) {
  int inside = 0;
  int most = 0;
  for (char c : log) {
    if (c == '+') most = std::max(most, ++inside);
    if (c == '-') --inside;
  }
  return most;
}

TEST_F(CliTest, RunWithLimitTwoLetsAtMostTwoInsideAtOnce) {
  const std::string log = Path("log");
  auto holder = [&](const std::string& me, const std::string& wait) {
    return Start({"run", "--limit=2", "--ttl=20s", wait, "pool", "--", "sh",
                  "-c",
                  absl::StrCat("echo + >> ", log, "; touch ", Path(me), "; ",
                               AwaitFile(Path("go")), "; echo - >> ", log)});
  };
  auto a = holder("a-in", "--wait=0s");
  auto b = holder("b-in", "--wait=0s");
  ASSERT_TRUE(WaitForFile(Path("a-in")));
  ASSERT_TRUE(WaitForFile(Path("b-in")));
  // Both permits taken: a third without --wait is refused at once ...
  const Finished third =
      Run({"run", "--limit=2", "pool", "--", "sh", "-c",
           absl::StrCat("echo + >> ", log, "; echo - >> ", log)});
  EXPECT_EQ(third.exit_code, kConflict) << third;
  // ... and one with --wait runs once a permit is free.
  auto waiter = holder("c-in", "--wait=20s");
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_FALSE(Exists(Path("c-in")));
  EXPECT_FALSE(waiter->Done());
  Touch(Path("go"));
  for (Cli* cli : {a.get(), b.get(), waiter.get()}) {
    const Finished f = cli->Wait();
    EXPECT_EQ(f.exit_code, 0) << f;
  }
  EXPECT_TRUE(Exists(Path("c-in")));
  const std::string lines = ReadFile(log);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '+'), 3) << lines;
  EXPECT_EQ(MostInside(lines), 2) << lines;
  for (int slot = 0; slot < 2; ++slot) {
    EXPECT_EQ(MastersWithKey(absl::StrCat("redlock:__sem__:pool:", slot)), 0);
  }
}

TEST_F(CliTest, SharedLimitPermitsAndFencingThatDoNotFitAreUsageErrors) {
  const Finished over =
      Run({"run", "--limit=2", "--permits=3", "pool", "--", "true"});
  ExpectUsageError(over);
  EXPECT_TRUE(absl::StrContains(over.err, "--permits")) << over;
  ExpectUsageError(Run({"acquire", "--permits=1", "pool"}));
  ExpectUsageError(Run({"acquire", "--limit=0", "pool"}));
  ExpectUsageError(Run({"acquire", "--limit=1025", "pool"}));
  const Finished both = Run({"acquire", "--shared", "--limit=2", "pool"});
  ExpectUsageError(both);
  EXPECT_TRUE(absl::StrContains(both.err, "--shared")) << both;
  EXPECT_TRUE(absl::StrContains(both.err, "--limit")) << both;
  ExpectUsageError(Run({"acquire", "--fencing", "--shared", "rw"}));
  ExpectUsageError(
      Run({"run", "--fencing", "--limit=2", "pool", "--", "true"}));
  ExpectUsageError(Run({"status", "--shared", "rw"}));
  EXPECT_EQ(MastersWithKey("redlock:__semlimit__:pool"), 0);
}

TEST_F(CliTest, ALimitMismatchExits65NamingBothLimits) {
  const Finished held = Run({"acquire", "--limit=2", "--ttl=20s", "pool"});
  ASSERT_EQ(held.exit_code, 0) << held;
  // --quiet: only errors (the masters' persistence warnings dropped).
  const Finished other = Run({"run", "--quiet", "--limit=3", "pool", "--", "sh",
                              "-c", absl::StrCat("touch ", Path("ran"))});
  EXPECT_EQ(other.exit_code, 65) << other;
  EXPECT_TRUE(absl::StrContains(other.err, "limit mismatch")) << other;
  EXPECT_TRUE(absl::StrContains(other.err, "limit is 3")) << other;
  EXPECT_TRUE(absl::StrContains(other.err, "has 2")) << other;
  EXPECT_EQ(std::count(other.err.begin(), other.err.end(), '\n'), 1) << other;
  EXPECT_FALSE(Exists(Path("ran")));
}

TEST_F(CliTest, AcquireStatusExtendReleaseOfReadersAndPermits) {
  // Two readers.
  const Finished r1 = Run({"acquire", "--shared", "--ttl=20s", "rw"});
  const Finished r2 = Run({"acquire", "--shared", "--ttl=20s", "rw"});
  ASSERT_EQ(r1.exit_code, 0) << r1;
  ASSERT_EQ(r2.exit_code, 0) << r2;
  EXPECT_EQ(KeyValues(r1.out)["shared"], "true") << r1;
  const std::string t1 = KeyValues(r1.out)["token"];
  const std::string t2 = KeyValues(r2.out)["token"];
  const Finished readers = Run({"status", "rw"});
  EXPECT_EQ(readers.exit_code, 0) << readers;
  EXPECT_EQ(CountOf(readers.out, "shared by 2 readers"), 5) << readers;
  EXPECT_TRUE(absl::StrContains(readers.out, "shared by readers on 5/5"))
      << readers;

  // A reader's token is extended and released with --shared; without it
  // the lock key (which holds the readers' marker) is not the token's.
  const Finished wrong = Run({"release", "rw", t1});
  EXPECT_EQ(wrong.exit_code, kLost) << wrong;
  const Finished extended = Run({"extend", "--shared", "--ttl=25s", "rw", t1});
  EXPECT_EQ(extended.exit_code, 0) << extended;
  EXPECT_GT(Pttl(0, absl::StrCat("redlock:__reader__:rw:", t1)), 20000);
  const Finished released = Run({"release", "--shared", "rw", t1});
  EXPECT_EQ(released.exit_code, 0) << released;
  EXPECT_EQ(MastersWithKey(absl::StrCat("redlock:__reader__:rw:", t1)), 0);
  const Finished one = Run({"status", "--json", "rw"});
  std::optional<Json> json = JsonParser(one.out).Parse();
  ASSERT_TRUE(json.has_value()) << one;
  EXPECT_TRUE((*json)["shared"].boolean) << one.out;
  ASSERT_EQ((*json)["masters"].array.size(), 5u);
  for (const Json& m : (*json)["masters"].array) {
    EXPECT_EQ(m["shared_by"].number, 1) << one.out;
    ASSERT_EQ(m["readers"].array.size(), 1u) << one.out;
    EXPECT_EQ(m["readers"].array[0].string, t2.substr(0, 8));
  }
  EXPECT_EQ(Run({"release", "--shared", "rw", t2}).exit_code, 0);
  EXPECT_EQ(MastersWithKey("redlock:rw"), 0);

  // Permits: slots in the output, "permits used" in status (the limit read
  // from the masters), release by token with --limit.
  const Finished p2 =
      Run({"acquire", "--limit=3", "--permits=2", "--ttl=20s", "pool"});
  ASSERT_EQ(p2.exit_code, 0) << p2;
  EXPECT_EQ(KeyValues(p2.out)["slots"], "0,1") << p2;
  EXPECT_EQ(KeyValues(p2.out)["limit"], "3") << p2;
  const std::string token = KeyValues(p2.out)["token"];
  const Finished p1 = Run({"acquire", "--json", "--limit=3", "pool"});
  ASSERT_EQ(p1.exit_code, 0) << p1;
  std::optional<Json> p1_json = JsonParser(p1.out).Parse();
  ASSERT_TRUE(p1_json.has_value()) << p1;
  ASSERT_EQ((*p1_json)["slots"].array.size(), 1u) << p1;
  EXPECT_EQ((*p1_json)["slots"].array[0].number, 2) << p1;
  const Finished used = Run({"status", "pool"});
  EXPECT_EQ(used.exit_code, 0) << used;
  EXPECT_EQ(CountOf(used.out, "permits used 3 of 3"), 5) << used;
  EXPECT_TRUE(absl::StrContains(
      used.out,
      absl::StrCat("0=", token.substr(0, 8), " 1=", token.substr(0, 8))))
      << used;

  const Finished extend =
      Run({"extend", "--limit=3", "--ttl=25s", "pool", token});
  EXPECT_EQ(extend.exit_code, 0) << extend;
  EXPECT_GT(Pttl(0, "redlock:__sem__:pool:1"), 20000);
  const Finished release = Run({"release", "--limit=3", "pool", token});
  EXPECT_EQ(release.exit_code, 0) << release;
  EXPECT_EQ(MastersWithKey("redlock:__sem__:pool:0"), 0);
  EXPECT_EQ(MastersWithKey("redlock:__sem__:pool:1"), 0);
  EXPECT_EQ(MastersWithKey("redlock:__sem__:pool:2"), 5);
  const Finished again = Run({"release", "--limit=3", "pool", token});
  EXPECT_EQ(again.exit_code, kLost) << again;
  const Finished after = Run({"status", "--json", "--limit=3", "pool"});
  std::optional<Json> after_json = JsonParser(after.out).Parse();
  ASSERT_TRUE(after_json.has_value()) << after;
  EXPECT_EQ((*after_json)["limit"].number, 3);
  for (const Json& m : (*after_json)["masters"].array) {
    EXPECT_EQ(m["permits_used"].number, 1) << after.out;
  }
}

// The documented ends: --limit 1024 with all 1024 permits at once, its
// status (1024 slots read from each master) and its extension and release by
// token (the slots found among 1024); and the status of 1024 readers. Every
// one of these replies was refused by the 64 KiB reply bound before: the
// acquire script's list of free slots, MGET of every slot, SMEMBERS of the
// readers' index.
TEST_F(CliTest, TheLargestSemaphoreAndTheMostReadersWorkEndToEnd) {
  const Finished all =
      Run({"acquire", "--limit=1024", "--permits=1024", "--ttl=30s", "wide"});
  ASSERT_EQ(all.exit_code, 0) << all;
  const std::string token = KeyValues(all.out)["token"];
  EXPECT_EQ(MastersWithKey("redlock:__sem__:wide:1023"), 5);
  EXPECT_EQ(Run({"acquire", "--limit=1024", "wide"}).exit_code, kConflict);
  const Finished status = Run({"status", "--json", "wide"});
  EXPECT_EQ(status.exit_code, 0) << status;
  std::optional<Json> json = JsonParser(status.out).Parse();
  ASSERT_TRUE(json.has_value()) << status;
  EXPECT_EQ((*json)["limit"].number, 1024);
  ASSERT_EQ((*json)["masters"].array.size(), 5u);
  for (const Json& m : (*json)["masters"].array) {
    EXPECT_EQ(m["permits_used"].number, 1024) << m["error"].string;
    EXPECT_EQ(m["slots"].array.size(), 1024u);
  }
  const Finished extend =
      Run({"extend", "--limit=1024", "--ttl=40s", "wide", token});
  EXPECT_EQ(extend.exit_code, 0) << extend;
  EXPECT_GT(Pttl(0, "redlock:__sem__:wide:1023"), 30000);
  const Finished release = Run({"release", "--limit=1024", "wide", token});
  EXPECT_EQ(release.exit_code, 0) << release;
  EXPECT_EQ(MastersWithKey("redlock:__sem__:wide:0"), 0);
  EXPECT_EQ(MastersWithKey("redlock:__sem__:wide:1023"), 0);

  // 1024 readers of "rw" on every master, written as the reader script
  // writes them (the tool would take 1024 runs to make them).
  const Options options;
  const std::string index = SharedHoldersKey(options, "rw");
  for (int i = 0; i < 5; ++i) {
    auto client = cluster_->Client(i);
    ASSERT_TRUE(client.ok()) << client.status();
    ASSERT_TRUE((*client)
                    ->Command({"SET", "redlock:rw", "shared", "PX", "30000"})
                    .ok());
    for (int r = 0; r < 1024; ++r) {
      const std::string reader = absl::StrFormat("%032x", r);
      ASSERT_TRUE((*client)
                      ->Command({"SET", SharedHolderKey(options, "rw", reader),
                                 reader, "PX", "30000"})
                      .ok());
      ASSERT_TRUE((*client)->Command({"SADD", index, reader}).ok());
    }
  }
  const Finished readers = Run({"status", "--json", "rw"});
  EXPECT_EQ(readers.exit_code, 0) << readers;
  std::optional<Json> readers_json = JsonParser(readers.out).Parse();
  ASSERT_TRUE(readers_json.has_value()) << readers;
  for (const Json& m : (*readers_json)["masters"].array) {
    EXPECT_EQ(m["shared_by"].number, 1024) << m["error"].string;
  }
}

// The tool's own keep-alive of a permit set (PermitKeeper, run.cc) marks the
// permit lost when an extension fails (admin::MarkLost) and the command is
// stopped before the permit's TTL runs out, saying why.
TEST_F(CliTest, LosingAMajorityStopsAPermitHoldersCommandBeforeItExpires) {
  ExpectLosingAMajorityStopsTheCommand({"--limit=2"}, "pool");
}

// The tool extends a permit set itself (the blocking client has no
// keep-alive for permits): a command that outlives the TTL keeps its slot.
TEST_F(CliTest, RunWithLimitKeepsItsPermitPastTheTtl) {
  // --ttl=2s: extended every 667ms, lost below 1s (twice the 500ms request
  // timeout).
  auto run = Start({"run", "--limit=2", "--ttl=2s", "pool", "--", "sh", "-c",
                    absl::StrCat("echo $REDLOCK_TOKEN > ", Path("token"), "; ",
                                 AwaitFile(Path("go")))});
  ASSERT_TRUE(WaitForText(Path("token"), "\n"));
  const std::string token =
      std::string(absl::StripAsciiWhitespace(ReadFile(Path("token"))));
  absl::SleepFor(absl::Milliseconds(3000));  // 1.5 TTLs.
  EXPECT_GE(MastersHolding("redlock:__sem__:pool:0", token), 3);
  EXPECT_GT(Pttl(0, "redlock:__semlimit__:pool"), 0);
  Touch(Path("go"));
  const Finished f = run->Wait();
  EXPECT_EQ(f.exit_code, 0) << f;
  EXPECT_EQ(MastersWithKey("redlock:__sem__:pool:0"), 0);
  // A TTL that leaves no room for the keep-alive is refused before any
  // permit is taken, as WithLock refuses it for a lock.
  const Finished tight =
      Run({"run", "--limit=2", "--ttl=1s", "pool", "--", "true"});
  EXPECT_EQ(tight.exit_code, kUsage) << tight;
  EXPECT_TRUE(absl::StrContains(tight.err, "safety margin")) << tight;
  EXPECT_EQ(MastersWithKey("redlock:__sem__:pool:0"), 0);
}

}  // namespace
}  // namespace redlock
