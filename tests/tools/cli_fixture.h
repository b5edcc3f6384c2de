// Copyright 2026 The redlock Authors.
//
// What the tests of the `redlock` tool share (cli_test.cc and the files
// beside it): a tiny JSON reader, the tool run as a real process with its
// output and exit code (Cli, Finished), and the fixture that starts real
// masters (CliTest). Each test file defines REDLOCK_CLI_PATH (CMake).

#ifndef REDLOCK_TESTS_TOOLS_CLI_FIXTURE_H_
#define REDLOCK_TESTS_TOOLS_CLI_FIXTURE_H_

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

namespace redlock::cli_testing {

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

inline bool Exists(const std::string& path) {
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

inline std::ostream& operator<<(std::ostream& os, const Finished& f) {
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

  // `redlock run <lock> --ttl=3s --grace=5s <resource> -- <a loop that
  // writes "term" on SIGTERM>` once it runs, three of five masters killed:
  // the tool must stop the command (SIGTERM) and exit kLost before the 3 s
  // TTL can have run out, naming the lock it lost. `lock`: the kind of lock
  // (e.g. {"--limit=2"}; empty for a plain one).
  void ExpectLosingAMajorityStopsTheCommand(std::vector<std::string> lock,
                                            const std::string& resource) {
    const absl::Duration ttl = absl::Seconds(3);
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), lock.begin(), lock.end());
    args.insert(args.end(),
                {"--ttl=3s", "--grace=5s", resource, "--", "sh", "-c",
                 absl::StrCat("trap 'echo term > ", Path("term"),
                              "; exit 0' TERM; echo up > ", Path("up"),
                              "; while :; do sleep 0.05; done")});
    auto cli = Start(args);
    ASSERT_TRUE(WaitForFile(Path("up")));
    // The lock was acquired or extended before this point, so it expires at
    // most `ttl` from now.
    const absl::Time killed = absl::Now();
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(cluster_->server(i).Kill().ok());
    const Finished f = cli->Wait();
    EXPECT_EQ(f.exit_code, kLost) << f;
    EXPECT_TRUE(Exists(Path("term")));
    EXPECT_LT(absl::Now() - killed, ttl) << f;
    EXPECT_TRUE(absl::StrContains(f.err, "lost the lock on " + resource)) << f;
  }

  // How many masters SetUp() starts; a subclass may change it first.
  int masters_ = 5;
  std::unique_ptr<RedisCluster> cluster_;
  std::string dir_;
  int runs_ = 0;
};

// A one-line message on stderr, nothing on stdout, the usage exit code.
inline void ExpectUsageError(const Finished& f) {
  EXPECT_FALSE(f.timed_out) << f;
  EXPECT_EQ(f.exit_code, kUsage) << f;
  EXPECT_EQ(f.out, "") << f;
  EXPECT_TRUE(absl::StartsWith(f.err, "redlock: ")) << f;
  EXPECT_TRUE(absl::EndsWith(f.err, "\n")) << f;
  EXPECT_EQ(std::count(f.err.begin(), f.err.end(), '\n'), 1) << f;
}

}  // namespace redlock::cli_testing

#endif  // REDLOCK_TESTS_TOOLS_CLI_FIXTURE_H_
