// Copyright 2026 The redlock Authors.
//
// The `redlock` command-line tool, run as a real process against real
// masters started by the fixture: what its children see and when they run,
// exit codes, signals, a lost lock, the scripting subcommands, status output
// and bad input.

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fault_proxy.h"
#include "tests/support/hostile_peer.h"
#include "tests/support/redis_server.h"
#include "tests/support/skewed_clock.h"
#include "tests/support/test_certs.h"
#include "tests/support/text_files.h"

extern char** environ;

namespace redlock {
namespace {

using ::redlock::testing::KeyValues;
using ::redlock::testing::ReadFile;

using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;

constexpr char kCli[] = REDLOCK_CLI_PATH;
constexpr int kUsage = 64;
constexpr int kUnavailable = 69;
constexpr int kConflict = 75;
constexpr int kLost = 76;

// Every wait in this file is bounded by this; none is expected to come close.
constexpr absl::Duration kBound = absl::Seconds(20);

// --- a tiny JSON reader, enough to check the tool's output ------------------

struct Json {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  std::map<std::string, Json> object;

  const Json& operator[](const std::string& key) const {
    static const Json* const null = new Json();
    auto it = object.find(key);
    return it == object.end() ? *null : it->second;
  }
  bool is_null() const { return type == Type::kNull; }
};

class JsonParser {
 public:
  explicit JsonParser(absl::string_view text) : text_(text) {}

  std::optional<Json> Parse() {
    std::optional<Json> value = Value();
    SkipSpace();
    if (!value.has_value() || pos_ != text_.size()) return std::nullopt;
    return value;
  }

 private:
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(text_[pos_])) ++pos_;
  }
  bool Consume(absl::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  std::optional<std::string> String() {
    if (!Consume("\"")) return std::nullopt;
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c == '\\') {
        if (pos_ >= text_.size()) return std::nullopt;
        const char e = text_[pos_++];
        switch (e) {
          case 'n':
            c = '\n';
            break;
          case 't':
            c = '\t';
            break;
          case 'r':
            c = '\r';
            break;
          case 'u': {
            int code = 0;
            if (pos_ + 4 > text_.size() ||
                !absl::SimpleHexAtoi(text_.substr(pos_, 4), &code)) {
              return std::nullopt;
            }
            pos_ += 4;
            c = static_cast<char>(code);
            break;
          }
          default:
            c = e;
        }
      } else if (static_cast<unsigned char>(c) < 0x20) {
        return std::nullopt;
      }
      out.push_back(c);
    }
    if (!Consume("\"")) return std::nullopt;
    return out;
  }
  std::optional<Json> Value() {
    SkipSpace();
    Json v;
    if (pos_ >= text_.size()) return std::nullopt;
    const char c = text_[pos_];
    if (Consume("null")) return v;
    if (Consume("true") || Consume("false")) {
      v.type = Json::Type::kBool;
      v.boolean = text_[pos_ - 1] == 'e' && text_[pos_ - 2] == 'u';
      return v;
    }
    if (c == '"') {
      std::optional<std::string> s = String();
      if (!s.has_value()) return std::nullopt;
      v.type = Json::Type::kString;
      v.string = *s;
      return v;
    }
    if (c == '[') {
      ++pos_;
      v.type = Json::Type::kArray;
      SkipSpace();
      if (Consume("]")) return v;
      while (true) {
        std::optional<Json> element = Value();
        if (!element.has_value()) return std::nullopt;
        v.array.push_back(*element);
        SkipSpace();
        if (Consume("]")) return v;
        if (!Consume(",")) return std::nullopt;
      }
    }
    if (c == '{') {
      ++pos_;
      v.type = Json::Type::kObject;
      SkipSpace();
      if (Consume("}")) return v;
      while (true) {
        SkipSpace();
        std::optional<std::string> key = String();
        SkipSpace();
        if (!key.has_value() || !Consume(":")) return std::nullopt;
        std::optional<Json> value = Value();
        if (!value.has_value()) return std::nullopt;
        v.object[*key] = *value;
        SkipSpace();
        if (Consume("}")) return v;
        if (!Consume(",")) return std::nullopt;
      }
    }
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isdigit(text_[pos_]) || text_[pos_] == '-' ||
            text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E' ||
            text_[pos_] == '+')) {
      ++pos_;
    }
    if (start == pos_ ||
        !absl::SimpleAtod(text_.substr(start, pos_ - start), &v.number)) {
      return std::nullopt;
    }
    v.type = Json::Type::kNumber;
    return v;
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

// --- running the tool --------------------------------------------------------

struct Finished {
  int exit_code = -1;  // 128 + N for signal N.
  // It called exit(): exit_code is its own, not a death by signal (a shell
  // would show both as 128 + N).
  bool exited = false;
  std::string out;
  std::string err;
  bool timed_out = false;
};

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// One run of the tool, stdout and stderr into files (or stderr into a
// terminal). Killed if still running when destroyed.
class Cli {
 public:
  Cli(const std::vector<std::string>& args, const std::vector<std::string>& env,
      const std::string& out_path, const std::string& err_path,
      int stderr_fd = -1)
      : out_path_(out_path), err_path_(err_path) {
    std::vector<std::string> argv_strings = {kCli};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    // The host's REDLOCK_* variables must not leak into the tests, and a
    // variable given in `env` replaces the inherited one of its name.
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) {
      if (absl::StartsWith(*e, "REDLOCK_")) continue;
      const absl::string_view name =
          absl::string_view(*e).substr(0, absl::string_view(*e).find('='));
      const bool replaced =
          std::any_of(env.begin(), env.end(), [name](const std::string& v) {
            return absl::StartsWith(v, absl::StrCat(name, "="));
          });
      if (!replaced) env_strings.emplace_back(*e);
    }
    env_strings.insert(env_strings.end(), env.begin(), env.end());
    std::vector<char*> argv = Pointers(argv_strings);
    std::vector<char*> envp = Pointers(env_strings);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                     O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (stderr_fd >= 0) {
      posix_spawn_file_actions_adddup2(&actions, stderr_fd, STDERR_FILENO);
    } else {
      posix_spawn_file_actions_addopen(&actions, STDERR_FILENO,
                                       err_path.c_str(),
                                       O_WRONLY | O_CREAT | O_TRUNC, 0644);
    }
    // A fresh session: no controlling terminal unless stderr_fd is one we
    // hand it, and the test's own terminal never sees its signals.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
    const int err =
        posix_spawn(&pid_, kCli, &actions, &attr, argv.data(), envp.data());
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    EXPECT_EQ(err, 0) << "posix_spawn " << kCli;
    if (err != 0) pid_ = -1;
  }

  ~Cli() {
    if (pid_ > 0 && !finished_.has_value()) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  pid_t pid() const { return pid_; }
  const std::string& err_path() const { return err_path_; }

  // Has it exited? Reaps it if so.
  bool Done() {
    if (finished_.has_value()) return true;
    if (pid_ <= 0) return true;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
    Record(status, false);
    return true;
  }

  const Finished& Wait(absl::Duration timeout = kBound) {
    const absl::Time deadline = absl::Now() + timeout;
    while (!Done()) {
      if (absl::Now() > deadline) {
        kill(pid_, SIGKILL);
        int status = 0;
        waitpid(pid_, &status, 0);
        Record(status, true);
        break;
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
    if (!finished_.has_value()) finished_ = Finished();
    return *finished_;
  }

 private:
  static std::vector<char*> Pointers(std::vector<std::string>& strings) {
    std::vector<char*> p;
    for (std::string& s : strings) p.push_back(s.data());
    p.push_back(nullptr);
    return p;
  }

  void Record(int status, bool timed_out) {
    Finished f;
    f.timed_out = timed_out;
    f.exited = WIFEXITED(status);
    if (WIFEXITED(status)) f.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) f.exit_code = 128 + WTERMSIG(status);
    f.out = ReadFile(out_path_);
    f.err = ReadFile(err_path_);
    finished_ = f;
  }

  std::string out_path_;
  std::string err_path_;
  pid_t pid_ = -1;
  std::optional<Finished> finished_;
};

std::ostream& operator<<(std::ostream& os, const Finished& f) {
  return os << "exit " << f.exit_code
            << (f.exited ? "" : " (not by exit(): a signal or a timeout)")
            << (f.timed_out ? " (timed out)" : "") << "\n--- stdout:\n"
            << f.out << "--- stderr:\n"
            << f.err;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = RedisCluster::Start(masters_);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    char dir[] = "/tmp/redlock_cli_test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }

  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  std::string Path(absl::string_view name) const {
    return absl::StrCat(dir_, "/", name);
  }

  std::string Masters() const { return absl::StrJoin(cluster_->Uris(), ","); }

  // Options every test run gets: generous timeouts for a loaded machine.
  std::vector<std::string> Args(std::vector<std::string> args) const {
    std::vector<std::string> full = {"--request-timeout=500ms"};
    full.insert(full.end(), args.begin(), args.end());
    return full;
  }

  std::unique_ptr<Cli> Start(const std::vector<std::string>& args,
                             std::vector<std::string> env = {},
                             int stderr_fd = -1) {
    env.push_back(absl::StrCat("REDLOCK_MASTERS=", Masters()));
    return StartWithEnv(Args(args), env, stderr_fd);
  }

  std::unique_ptr<Cli> StartWithEnv(const std::vector<std::string>& args,
                                    const std::vector<std::string>& env,
                                    int stderr_fd = -1) {
    const int n = ++runs_;
    return std::make_unique<Cli>(args, env, Path(absl::StrCat("out.", n)),
                                 Path(absl::StrCat("err.", n)), stderr_fd);
  }

  Finished Run(const std::vector<std::string>& args,
               std::vector<std::string> env = {}) {
    return Start(args, std::move(env))->Wait();
  }

  // Waits until `path` exists.
  bool WaitForFile(const std::string& path) {
    const absl::Time deadline = absl::Now() + kBound;
    while (!Exists(path)) {
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return true;
  }

  // Waits until the file at `path` contains `text`.
  bool WaitForText(const std::string& path, absl::string_view text) {
    const absl::Time deadline = absl::Now() + kBound;
    while (!absl::StrContains(ReadFile(path), text)) {
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return true;
  }

  void Touch(const std::string& path) { std::ofstream(path) << "go\n"; }

  // A shell loop that waits (bounded) until `path` exists.
  static std::string AwaitFile(const std::string& path) {
    return absl::StrCat("i=0; while [ ! -e ", path,
                        " ] && [ $i -lt 1000 ]; do sleep 0.02; "
                        "i=$((i+1)); done");
  }

  // GET `key` on master i; nullopt when absent.
  std::optional<std::string> Get(int i, const std::string& key) {
    auto client = cluster_->Client(i);
    EXPECT_TRUE(client.ok()) << client.status();
    if (!client.ok()) return std::nullopt;
    auto value = (*client)->Get(key);
    EXPECT_TRUE(value.ok()) << value.status();
    return value.ok() ? *value : std::nullopt;
  }

  int64_t Pttl(int i, const std::string& key) {
    auto client = cluster_->Client(i);
    EXPECT_TRUE(client.ok()) << client.status();
    if (!client.ok()) return -3;
    auto pttl = (*client)->Pttl(key);
    EXPECT_TRUE(pttl.ok()) << pttl.status();
    return pttl.ok() ? *pttl : -3;
  }

  // How many of the running masters hold `value` under `key`.
  int MastersHolding(const std::string& key, const std::string& value) {
    int n = 0;
    for (int i = 0; i < cluster_->size(); ++i) {
      if (cluster_->server(i).running() && Get(i, key) == value) ++n;
    }
    return n;
  }

  int MastersWithKey(const std::string& key) {
    int n = 0;
    for (int i = 0; i < cluster_->size(); ++i) {
      if (cluster_->server(i).running() && Get(i, key).has_value()) ++n;
    }
    return n;
  }

  // Another owner holds "job" (token "holder-token") on masters 0, 1 and 2,
  // and master 2 answers through `proxy`, 300ms late. Every attempt to take
  // it then wins masters 3 and 4 at once and keeps those keys until master
  // 2's refusal comes: an attempt in flight holds keys of its own. Returns
  // the REDLOCK_MASTERS setting for that (master 2 as the proxy).
  std::string HoldOnThreeWithASlowThird(
      std::unique_ptr<testing::FaultProxy>* proxy) {
    for (int i = 0; i < 3; ++i) {
      auto client = cluster_->Client(i);
      EXPECT_TRUE(client.ok()) << client.status();
      if (!client.ok()) return "";
      auto set = (*client)->Command(
          {"SET", "redlock:job", "holder-token", "PX", "60000"});
      EXPECT_TRUE(set.ok() && !set->is_error()) << set.status();
    }
    auto started = testing::FaultProxy::Start(
        {.upstream_port = cluster_->server(2).port()});
    EXPECT_TRUE(started.ok()) << started.status();
    if (!started.ok()) return "";
    *proxy = *std::move(started);
    (*proxy)->SetLatency(absl::ZeroDuration(), absl::Milliseconds(300));
    std::vector<std::string> uris = cluster_->Uris();
    uris[2] = (*proxy)->Uri();
    return absl::StrCat("REDLOCK_MASTERS=", absl::StrJoin(uris, ","));
  }

  // Runs the tool with `args` (which must include -v and a --wait) on
  // HoldOnThreeWithASlowThird()'s masters, and sends it `signo` once it
  // waits and an attempt of its own holds master 3. Returns how it finished
  // and how long after the signal.
  std::pair<Finished, absl::Duration> InterruptAnAttemptInFlight(
      const std::vector<std::string>& args, int signo) {
    std::unique_ptr<testing::FaultProxy> proxy;
    const std::string masters = HoldOnThreeWithASlowThird(&proxy);
    if (masters.empty()) return {};
    auto cli = StartWithEnv(Args(args), {masters});
    // Printed once signals are read from the signalfd.
    EXPECT_TRUE(WaitForText(cli->err_path(), "waiting for job"))
        << ReadFile(cli->err_path());
    bool in_flight = false;
    const absl::Time deadline = absl::Now() + kBound;
    while (!in_flight && absl::Now() < deadline) {
      in_flight = Get(3, "redlock:job").has_value();
    }
    EXPECT_TRUE(in_flight) << "no attempt of the tool's ever held master 3";
    const absl::Time sent = absl::Now();
    EXPECT_EQ(kill(cli->pid(), signo), 0);
    Finished f = cli->Wait();
    return {f, absl::Now() - sent};
  }

  // Whether master i loses `key` within `timeout`.
  bool KeyGoneWithin(int i, const std::string& key, absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (Get(i, key).has_value()) {
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(10));
    }
    return true;
  }

  // How many masters SetUp() starts; a subclass may change it first.
  int masters_ = 5;
  std::unique_ptr<RedisCluster> cluster_;
  std::string dir_;
  int runs_ = 0;
};

// A one-line message on stderr, nothing on stdout, the usage exit code.
void ExpectUsageError(const Finished& f) {
  EXPECT_FALSE(f.timed_out) << f;
  EXPECT_EQ(f.exit_code, kUsage) << f;
  EXPECT_EQ(f.out, "") << f;
  EXPECT_TRUE(absl::StartsWith(f.err, "redlock: ")) << f;
  EXPECT_TRUE(absl::EndsWith(f.err, "\n")) << f;
  EXPECT_EQ(std::count(f.err.begin(), f.err.end(), '\n'), 1) << f;
}

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
  const absl::Duration ttl = absl::Seconds(3);
  auto cli = Start({"run", "--ttl=3s", "--grace=5s", "job", "--", "sh", "-c",
                    absl::StrCat("trap 'echo term > ", Path("term"),
                                 "; exit 0' TERM; echo up > ", Path("up"),
                                 "; while :; do sleep 0.05; done")});
  ASSERT_TRUE(WaitForFile(Path("up")));
  // The lock was acquired or extended before this point, so it expires at
  // most `ttl` from now.
  const absl::Time killed = absl::Now();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cluster_->server(i).Kill().ok());
  const Finished f = cli->Wait();
  const absl::Duration took = absl::Now() - killed;
  EXPECT_EQ(f.exit_code, kLost) << f;
  EXPECT_TRUE(Exists(Path("term")));
  EXPECT_LT(took, ttl) << f;
  EXPECT_TRUE(absl::StrContains(f.err, "lost the lock on job")) << f;
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

// --- TLS --------------------------------------------------------------------

// The same tool on three TLS-only masters that require a client certificate
// (redis-server's default), with certificates made at test time. The
// fixture's own reads go over each server's Unix socket.
class CliTlsTest : public CliTest {
 protected:
  static void SetUpTestSuite() {
    auto certs = testing::TestCerts::Make();
    ASSERT_TRUE(certs.ok()) << certs.status();
    certs_ = certs->release();
  }
  static void TearDownTestSuite() {
    delete certs_;
    certs_ = nullptr;
  }

  void SetUp() override {
    if (RedisServer::UsingExternalMasters()) {
      GTEST_SKIP() << "starts TLS masters of its own";
    }
    ASSERT_NE(certs_, nullptr);
    auto cluster = RedisCluster::Start(3, ServerConfig(certs_->server_cert()));
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    char dir[] = "/tmp/redlock_cli_tls_test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }

  static RedisServer::Config ServerConfig(const std::string& cert) {
    RedisServer::Config config;
    config.tls.enabled = true;
    config.tls.cert_file = cert;
    config.tls.key_file = certs_->server_key();
    config.tls.ca_file = certs_->ca_file();
    config.tls.client_auth = RedisServer::Config::Tls::ClientAuth::kYes;
    return config;
  }

  // The flags, as redis-cli spells them.
  static std::vector<std::string> TlsFlags() {
    return {"--cacert", certs_->ca_file(),   "--cert", certs_->client_cert(),
            "--key",    certs_->client_key()};
  }
  // The same as REDLOCK_TLS_* variables.
  static std::vector<std::string> TlsEnv() {
    return {absl::StrCat("REDLOCK_TLS_CACERT=", certs_->ca_file()),
            absl::StrCat("REDLOCK_TLS_CERT=", certs_->client_cert()),
            absl::StrCat("REDLOCK_TLS_KEY=", certs_->client_key())};
  }

  static std::vector<std::string> Concat(std::vector<std::string> a,
                                         const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }

  // REDLOCK_MASTERS as redis:// URIs of the TLS ports (for --tls).
  std::string PlainSchemeMasters() const {
    std::vector<std::string> uris;
    for (int i = 0; i < cluster_->size(); ++i) {
      uris.push_back(
          absl::StrCat("redis://", cluster_->server(i).TlsAddress()));
    }
    return absl::StrCat("REDLOCK_MASTERS=", absl::StrJoin(uris, ","));
  }

  static testing::TestCerts* certs_;
};

testing::TestCerts* CliTlsTest::certs_ = nullptr;

// Each master of a `status --json` run reached over TLS 1.3.
void ExpectEveryMasterOverTls(const Finished& f, int masters) {
  EXPECT_EQ(f.exit_code, 0) << f;
  std::optional<Json> json = JsonParser(f.out).Parse();
  ASSERT_TRUE(json.has_value()) << f;
  EXPECT_EQ((*json)["reachable"].number, masters) << f.out;
  const std::vector<Json>& list = (*json)["masters"].array;
  ASSERT_EQ(list.size(), static_cast<size_t>(masters)) << f.out;
  for (const Json& m : list) {
    EXPECT_TRUE(m["reachable"].boolean) << f.out;
    EXPECT_EQ(m["transport"].string, "tls") << f.out;
    EXPECT_TRUE(absl::StartsWith(m["tls"].string, "TLSv1.3 ")) << f.out;
  }
}

TEST_F(CliTlsTest, StatusOverTlsShowsTheTransportAndTheProtocol) {
  ExpectEveryMasterOverTls(Run(Concat(TlsFlags(), {"status", "--json", "job"})),
                           3);
  const Finished table = Run(Concat(TlsFlags(), {"status", "job"}));
  EXPECT_EQ(table.exit_code, 0) << table;
  EXPECT_TRUE(absl::StrContains(table.out, "TLSv1.3")) << table;
}

TEST_F(CliTlsTest, RunOverTlsWithTheEnvironmentHoldsEveryMaster) {
  std::vector<std::string> env = TlsEnv();
  auto cli = Start(
      {"run", "--ttl=20s", "job", "--", "sh", "-c", AwaitFile(Path("go"))},
      env);
  const absl::Time deadline = absl::Now() + kBound;
  while (MastersWithKey("redlock:job") < 3 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(MastersWithKey("redlock:job"), 3);
  // Held: a second run over TLS is refused as a conflict, not an outage.
  const Finished second = Run({"run", "job", "--", "true"}, TlsEnv());
  EXPECT_EQ(second.exit_code, kConflict) << second;
  Touch(Path("go"));
  const Finished f = cli->Wait();
  EXPECT_EQ(f.exit_code, 0) << f;
  EXPECT_EQ(MastersWithKey("redlock:job"), 0);
}

TEST_F(CliTlsTest, TlsFlagOrVariableCarriesRedisUrisOverTls) {
  ExpectEveryMasterOverTls(
      StartWithEnv(Args(Concat(Concat({"--tls"}, TlsFlags()),
                               {"status", "--json", "job"})),
                   {PlainSchemeMasters()})
          ->Wait(),
      3);
  ExpectEveryMasterOverTls(
      StartWithEnv(Args({"status", "--json", "job"}),
                   Concat({PlainSchemeMasters(), "REDLOCK_TLS=1"}, TlsEnv()))
          ->Wait(),
      3);
}

TEST_F(CliTlsTest, WithoutTheCaOrTheClientCertificateTheMastersAreUnreachable) {
  // The system store does not know the test CA.
  const Finished no_ca =
      Run({"status", "--json", "job"},
          {absl::StrCat("REDLOCK_TLS_CERT=", certs_->client_cert()),
           absl::StrCat("REDLOCK_TLS_KEY=", certs_->client_key())});
  EXPECT_EQ(no_ca.exit_code, kUnavailable) << no_ca;
  EXPECT_TRUE(
      absl::StrContains(no_ca.out + no_ca.err, "not signed by a trusted CA"))
      << no_ca;
  const Finished no_cert = Run({"--cacert", certs_->ca_file(), "run", "job",
                                "--", "touch", Path("ran")});
  EXPECT_EQ(no_cert.exit_code, kUnavailable) << no_cert;
  EXPECT_TRUE(
      absl::StrContains(no_cert.out + no_cert.err, "client certificate"))
      << no_cert;
  EXPECT_FALSE(Exists(Path("ran")));
  EXPECT_EQ(MastersWithKey("redlock:job"), 0);
}

TEST_F(CliTlsTest, InsecureSkipsVerificationAndSaysSo) {
  const Finished f =
      Run({"--insecure", "--cert", certs_->client_cert(), "--key",
           certs_->client_key(), "run", "job", "--", "touch", Path("ran")});
  EXPECT_EQ(f.exit_code, 0) << f;
  EXPECT_TRUE(Exists(Path("ran")));
  const std::string err = absl::AsciiStrToLower(f.err);
  EXPECT_TRUE(absl::StrContains(err, "verif") ||
              absl::StrContains(err, "insecure"))
      << f;
  const Finished from_env =
      Run({"run", "job", "--", "true"},
          {"REDLOCK_TLS_INSECURE=1",
           absl::StrCat("REDLOCK_TLS_CERT=", certs_->client_cert()),
           absl::StrCat("REDLOCK_TLS_KEY=", certs_->client_key())});
  EXPECT_EQ(from_env.exit_code, 0) << from_env;
}

TEST_F(CliTlsTest, SniNamesTheCertificatesHost) {
  auto other = RedisServer::Start(ServerConfig(certs_->other_name_cert()));
  ASSERT_TRUE(other.ok()) << other.status();
  const std::string masters =
      absl::StrCat("REDLOCK_MASTERS=", (*other)->TlsUri());
  const Finished by_ip =
      StartWithEnv(Args(Concat(TlsFlags(), {"status", "--json", "job"})),
                   {masters})
          ->Wait();
  EXPECT_EQ(by_ip.exit_code, kUnavailable) << by_ip;
  EXPECT_TRUE(absl::StrContains(by_ip.out + by_ip.err, "does not match"))
      << by_ip;
  ExpectEveryMasterOverTls(
      StartWithEnv(Args(Concat(TlsFlags(), {"--sni", "other.example", "status",
                                            "--json", "job"})),
                   {masters})
          ->Wait(),
      1);
  ExpectEveryMasterOverTls(
      StartWithEnv(Args({"status", "--json", "job"}),
                   Concat({masters, "REDLOCK_TLS_SNI=other.example"}, TlsEnv()))
          ->Wait(),
      1);
}

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
