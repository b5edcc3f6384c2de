// Copyright 2026 The redlock Authors.
//
// The whole client, and the `redlock` tool, run as a Redis ACL user created
// with exactly the rule docs/security.md gives (read from the page at test
// time, between its acl-rule markers), on real redis-servers whose `default`
// user needs a password the library is never given. Then one permission at a
// time is taken away, and the error that reaches the caller, Health() or the
// tool's output is checked for the words that name it.

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "redlock/keys.h"
#include "redlock/redlock.h"
#include "src/algorithm/token.h"
#include "tests/support/heard_messages.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_options.h"
#include "tests/support/text_files.h"

extern char** environ;

namespace redlock {
namespace {

using ::redlock::testing::MarkerState;
using ::redlock::testing::ReadFile;
using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;
using ::redlock::testing::Reply;
using ::testing::HasSubstr;

constexpr char kSecurityDoc[] = REDLOCK_SECURITY_DOC;
constexpr char kReadme[] = REDLOCK_README_ACL_SNIPPET;
constexpr char kCli[] = REDLOCK_CLI_PATH;
constexpr char kAdminPassword[] = "acl-test-admin";
constexpr char kUser[] = "redlock";
// Every wait in this file is bounded by this.
constexpr absl::Duration kBound = absl::Seconds(15);

// The ACL SETUSER line between the acl-rule markers of docs/security.md,
// split into words, with the `<password>` placeholder replaced. Empty if the
// page has no such line.
std::vector<std::string> DocumentedRule(const std::string& password) {
  const std::string doc = ReadFile(kSecurityDoc);
  const size_t begin = doc.find("<!-- acl-rule:begin");
  const size_t end = doc.find("<!-- acl-rule:end -->");
  if (begin == std::string::npos || end == std::string::npos || end < begin) {
    return {};
  }
  for (absl::string_view line : absl::StrSplit(
           absl::string_view(doc).substr(begin, end - begin), '\n')) {
    if (!absl::StartsWith(line, "ACL SETUSER ")) continue;
    const std::string filled =
        absl::StrReplaceAll(line, {{"<password>", password}});
    return absl::StrSplit(filled, ' ', absl::SkipEmpty());
  }
  return {};
}

// Every text Health() gives for its masters, joined.
std::string HealthText(const std::vector<MasterHealth>& health) {
  std::string out;
  for (const MasterHealth& h : health) {
    absl::StrAppend(&out, h.master, "|", h.last_error.ToString(), "|", h.marker,
                    "|", h.grants_count.ToString(), "|", h.member, "|",
                    h.membership, "|", h.persistence, "|",
                    h.durability.ToString(), "|", h.eviction.ToString(), "\n");
  }
  return out;
}

struct ToolRun {
  int exit_code = -1;
  bool timed_out = false;
  std::string out;
  std::string err;
};

std::ostream& operator<<(std::ostream& os, const ToolRun& r) {
  return os << "exit " << r.exit_code << (r.timed_out ? " (timed out)" : "")
            << "\n--- stdout:\n"
            << r.out << "--- stderr:\n"
            << r.err;
}

class AclTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::UsingExternalMasters()) {
      GTEST_SKIP() << "creates ACL users on its own masters";
    }
    // With requirepass the `default` user needs a password the client is
    // never given: whatever the client does, it does as the ACL user.
    RedisServer::Config config;
    config.requirepass = kAdminPassword;
    auto cluster = RedisCluster::Start(3, config);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    auto token = internal::NewToken();
    ASSERT_TRUE(token.ok()) << token.status();
    password_ = *token;
    const std::vector<std::string> rule = DocumentedRule(password_);
    ASSERT_GE(rule.size(), 3u) << "no ACL SETUSER line between the acl-rule "
                                  "markers of "
                               << kSecurityDoc;
    ASSERT_EQ(rule[2], kUser) << "the documented user is not " << kUser;
    for (int i = 0; i < cluster_->size(); ++i) {
      ASSERT_NO_FATAL_FAILURE(Admin(i, rule));
    }
    char dir[] = "/tmp/redlock_acl_test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }

  void TearDown() override {
    if (dir_.empty()) return;
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  // Runs `argv` on master i as the admin; it must answer OK (or anything
  // but an error). Returns the reply.
  Reply Admin(int i, const std::vector<std::string>& argv) {
    auto client = cluster_->Client(i);
    EXPECT_TRUE(client.ok()) << client.status();
    if (!client.ok()) return Reply();
    auto reply = (*client)->Command(argv);
    EXPECT_TRUE(reply.ok()) << reply.status();
    if (!reply.ok()) return Reply();
    EXPECT_FALSE(reply->is_error())
        << absl::StrJoin(argv, " ") << ": " << reply->DebugString();
    return *reply;
  }

  // Takes rules (e.g. "-evalsha") away from the user on every master.
  void Restrict(const std::vector<std::string>& rules) {
    std::vector<std::string> argv = {"ACL", "SETUSER", kUser};
    argv.insert(argv.end(), rules.begin(), rules.end());
    for (int i = 0; i < cluster_->size(); ++i) Admin(i, argv);
  }

  std::vector<std::string> Uris() const {
    std::vector<std::string> uris;
    for (int i = 0; i < cluster_->size(); ++i) {
      uris.push_back(absl::StrCat("redis://", kUser, ":", password_, "@",
                                  cluster_->server(i).Address()));
    }
    return uris;
  }

  std::unique_ptr<Redlock> Client(Options options) {
    auto client = Redlock::Create(std::move(options));
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }
  std::unique_ptr<Redlock> Client() {
    return Client(testing::TestOptions(Uris()));
  }

  // Waits (bounded) until `pred(client.Health())` holds; false if it never
  // did.
  template <typename Pred>
  bool AwaitHealth(const Redlock& client, Pred pred) {
    const absl::Time deadline = absl::Now() + kBound;
    while (absl::Now() < deadline) {
      if (pred(client.Health())) return true;
      absl::SleepFor(absl::Milliseconds(10));
    }
    return false;
  }

  std::optional<std::string> Get(int i, const std::string& key) {
    auto client = cluster_->Client(i);
    EXPECT_TRUE(client.ok()) << client.status();
    if (!client.ok()) return std::nullopt;
    auto value = (*client)->Get(key);
    EXPECT_TRUE(value.ok()) << value.status();
    return value.ok() ? *value : std::nullopt;
  }

  // The tool with `args`, REDLOCK_MASTERS naming the ACL user's URIs (the
  // tool takes a user only inside a URI), bounded by kBound.
  ToolRun Tool(std::vector<std::string> args) {
    const int n = ++runs_;
    const std::string out_path = absl::StrCat(dir_, "/out.", n);
    const std::string err_path = absl::StrCat(dir_, "/err.", n);
    std::vector<std::string> argv = {kCli, "--request-timeout=500ms"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      if (!absl::StartsWith(*e, "REDLOCK_")) env.emplace_back(*e);
    }
    env.push_back(absl::StrCat("REDLOCK_MASTERS=", absl::StrJoin(Uris(), ",")));
    std::vector<char*> argv_p, env_p;
    for (std::string& s : argv) argv_p.push_back(s.data());
    argv_p.push_back(nullptr);
    for (std::string& s : env) env_p.push_back(s.data());
    env_p.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid = -1;
    ToolRun run;
    const int spawned =
        posix_spawn(&pid, kCli, &actions, nullptr, argv_p.data(), env_p.data());
    posix_spawn_file_actions_destroy(&actions);
    EXPECT_EQ(spawned, 0) << "posix_spawn " << kCli;
    if (spawned != 0) return run;
    int status = 0;
    const absl::Time deadline = absl::Now() + kBound;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (absl::Now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        run.timed_out = true;
        break;
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
    if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) run.exit_code = 128 + WTERMSIG(status);
    run.out = ReadFile(out_path);
    run.err = ReadFile(err_path);
    return run;
  }

  std::unique_ptr<RedisCluster> cluster_;
  std::string password_;
  std::string dir_;
  std::atomic<int> runs_ = 0;
};

AcquireOptions Ttl(absl::Duration ttl, bool fencing = false) {
  AcquireOptions options;
  options.ttl = ttl;
  options.fencing = fencing;
  return options;
}

// A release that waits for every master's answer.
ReleaseOptions AllMasters() {
  ReleaseOptions options;
  options.wait_for_all_masters = true;
  return options;
}

TEST_F(AclTest, TheDocumentedRuleRunsTheWholeClient) {
  auto client = Client();
  ASSERT_NE(client, nullptr);
  const Options defaults;

  // Acquire (SET NX) and extend (the extend script), then release.
  auto lock = client->Acquire("job", Ttl(absl::Seconds(10)));
  ASSERT_TRUE(lock.ok()) << lock.status();
  ASSERT_TRUE(client->Extend(*lock, absl::Seconds(20)).ok());
  auto released = client->Release(*lock, AllMasters());
  ASSERT_TRUE(released.ok()) << released.status();
  EXPECT_EQ(released->released, 3) << DescribeVotes(released->votes);

  // Fencing: the fenced acquire reads the counters and the marker, the
  // fence write raises them.
  auto fenced = client->Acquire("fenced", Ttl(absl::Seconds(10), true));
  ASSERT_TRUE(fenced.ok()) << fenced.status();
  EXPECT_GT(fenced->fence(), 0u);
  for (int i = 0; i < cluster_->size(); ++i) {
    EXPECT_EQ(Get(i, FenceCounterKey(defaults, "fenced")),
              absl::StrCat(fenced->fence()))
        << "master " << i;
  }
  auto fenced_again = client->Acquire("fenced", Ttl(absl::Seconds(10), true));
  EXPECT_FALSE(fenced_again.ok()) << "held: a second owner got it";
  ASSERT_TRUE(client->Release(*fenced).ok());

  // Keep-alive: a 900ms lock held for 1.5s by extensions.
  HoldOptions hold;
  hold.extend_every = absl::Milliseconds(200);
  const absl::Status held = client->WithLock(
      "kept", Ttl(absl::Milliseconds(900)),
      [](const Lock& l) {
        const absl::Time until = absl::Now() + absl::Milliseconds(1500);
        while (absl::Now() < until) {
          if (l.lost()) return l.lost_reason();
          absl::SleepFor(absl::Milliseconds(20));
        }
        return absl::OkStatus();
      },
      std::move(hold));
  EXPECT_TRUE(held.ok()) << held;

  // A semaphore's permit and two readers: their scripts' set and TTL
  // commands (the last reader's release walks the readers' index).
  SemaphoreOptions sem;
  sem.limit = 2;
  auto permit = client->AcquirePermits("pool", sem, Ttl(absl::Seconds(10)));
  ASSERT_TRUE(permit.ok()) << permit.status();
  ASSERT_TRUE(client->Extend(*permit, absl::Seconds(10)).ok());
  ASSERT_TRUE(client->Release(*permit, AllMasters()).ok());
  AcquireOptions reader = Ttl(absl::Seconds(10));
  reader.shared = true;
  auto first = client->Acquire("shelf", reader);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = client->Acquire("shelf", reader);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_TRUE(client->Extend(*second, absl::Seconds(10)).ok());
  ASSERT_TRUE(client->Release(*first, AllMasters()).ok());
  ASSERT_TRUE(client->Release(*second, AllMasters()).ok());
  for (int i = 0; i < cluster_->size(); ++i) {
    EXPECT_EQ(Get(i, LockKey(defaults, "shelf")), std::nullopt)
        << "master " << i;
  }

  // Wake-ups: a waiter that would poll only every 10s gets the lock soon
  // after the holder's release (the release script's PUBLISH, heard on its
  // SUBSCRIBE).
  auto holder_lock = client->Acquire("woken", Ttl(absl::Seconds(30)));
  ASSERT_TRUE(holder_lock.ok()) << holder_lock.status();
  Options waiter_options = testing::TestOptions(Uris());
  waiter_options.retry.min_delay = absl::Seconds(10);
  waiter_options.retry.max_delay = absl::Seconds(10);
  auto waiter = Client(std::move(waiter_options));
  ASSERT_NE(waiter, nullptr);
  absl::StatusOr<Lock> waited = absl::UnknownError("not run");
  std::thread waiting([&] {
    AcquireOptions options = Ttl(absl::Seconds(10));
    options.wait = absl::Seconds(8);
    waited = waiter->Acquire("woken", options);
  });
  ASSERT_TRUE(AwaitHealth(*waiter, [](const std::vector<MasterHealth>& h) {
    for (const MasterHealth& m : h) {
      if (m.subscriber_requests < 1) return false;
    }
    return true;
  }));
  absl::SleepFor(absl::Milliseconds(300));  // Its SUBSCRIBE confirmed.
  const absl::Time release_at = absl::Now();
  ASSERT_TRUE(client->Release(*holder_lock, AllMasters()).ok());
  waiting.join();
  ASSERT_TRUE(waited.ok()) << waited.status();
  EXPECT_LT(absl::Now() - release_at, absl::Seconds(5))
      << "not woken: it waited for its 10s poll";
  for (const MasterHealth& h : testing::AwaitEveryMasterHeard(*waiter)) {
    EXPECT_GE(h.subscriber_messages, 1) << h.master;
  }
  ASSERT_TRUE(waiter->Release(*waited).ok());

  // The restart guard: markers written and read back, persistence read.
  const std::vector<MasterHealth> health = client->Health();
  ASSERT_EQ(health.size(), 3u);
  for (const MasterHealth& h : health) {
    EXPECT_TRUE(h.connected) << h.master;
    EXPECT_TRUE(h.last_error.ok()) << h.master << ": " << h.last_error;
    EXPECT_EQ(h.marker, "trusted") << h.master;
    EXPECT_TRUE(h.grants_count.ok()) << h.master << ": " << h.grants_count;
    EXPECT_EQ(h.persistence, "no aof, no rdb") << h.master;
    EXPECT_EQ(h.noscript_fallbacks, 0) << h.master;
  }
  for (int i = 0; i < cluster_->size(); ++i) {
    EXPECT_EQ(MarkerState(Get(i, DeploymentMarkerKey(defaults))), "trusted")
        << "master " << i;
  }
  // The password appears in nothing the client reports.
  EXPECT_THAT(HealthText(health), ::testing::Not(HasSubstr(password_)));
  EXPECT_THAT(DescribeVotes(lock->votes()),
              ::testing::Not(HasSubstr(password_)));
}

TEST(AclDocTest, TheReadmeShowsTheDocumentedRule) {
  const std::vector<std::string> rule = DocumentedRule("<password>");
  ASSERT_FALSE(rule.empty());
  EXPECT_THAT(ReadFile(kReadme), HasSubstr(absl::StrJoin(rule, " ")));
}

// Every Redis command the library and the tool can send, as their source
// spells it: each redis.call('x') and redis.pcall('x') in the Lua, and each
// string literal that starts an argv ({"X", ...} or {"X", "SUB", ...}) in
// src/ and tools/redlock/. Lower case; a container command with its
// subcommand as "script|load". Words that are not commands (a CLI11 option
// name such as "RESOURCE") are in it too; the caller asks the server.
std::set<std::string> CommandsInTheSource() {
  static const std::set<std::string> kContainers = {"script", "config",
                                                    "client", "acl"};
  const std::regex lua(R"re(redis\.p?call\('([a-z]+)')re");
  const std::regex argv(R"re(\{"([A-Z]+)"(, "([A-Z]+)")?)re");
  std::set<std::string> commands;
  for (const char* dir : {"src", "tools/redlock"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(
             std::filesystem::path(REDLOCK_SOURCE_DIR) / dir)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".cc" && ext != ".h") continue;
      const std::string text = ReadFile(entry.path().string());
      for (std::sregex_iterator m(text.begin(), text.end(), lua), end; m != end;
           ++m) {
        commands.insert((*m)[1]);
      }
      for (std::sregex_iterator m(text.begin(), text.end(), argv), end;
           m != end; ++m) {
        std::string name = absl::AsciiStrToLower((*m)[1].str());
        if (kContainers.count(name) > 0 && (*m)[3].matched) {
          absl::StrAppend(&name, "|", absl::AsciiStrToLower((*m)[3].str()));
        }
        commands.insert(name);
      }
    }
  }
  return commands;
}

// The documented rule allows every command the source can send, judged by
// the server itself (ACL DRYRUN, with keys and channels under the rule's
// patterns). The one exception is documented: `redlock reconfigure`'s SCAN,
// for which security.md asks the operator to add +scan. A command with no
// sample arguments here (a new one) fails the test until it is added, and
// so does one the rule refuses.
TEST_F(AclTest, TheRuleAllowsEveryCommandTheLibraryAndTheToolSend) {
  const std::string k = "redlock:acl-dryrun";
  const std::map<std::string, std::vector<std::string>> kSamples = {
      {"get", {k}},
      {"set", {k, "v", "PX", "1000"}},
      {"del", {k}},
      {"exists", {k}},
      {"pexpire", {k, "1000"}},
      {"pttl", {k}},
      {"publish", {k, "released"}},
      {"subscribe", {k}},
      {"unsubscribe", {k}},
      {"sadd", {k, "m"}},
      {"srem", {k, "m"}},
      {"scard", {k}},
      {"smembers", {k}},
      {"sscan", {k, "0", "COUNT", "100"}},
      {"mget", {k, k}},
      {"time", {}},
      {"info", {"server"}},
      {"ping", {}},
      {"select", {"0"}},
      {"eval", {"return 1", "1", k}},
      {"evalsha", {std::string(40, 'a'), "1", k}},
      {"script|load", {"return 1"}},
      {"config|get", {"appendonly"}},
      {"scan", {"0", "MATCH", "redlock:__fence__:*", "COUNT", "100"}},
  };
  // Documented as the operator's to add (docs/security.md, "redlock
  // reconfigure ... add +scan").
  const std::set<std::string> kOperatorOnly = {"scan"};
  const std::set<std::string> found = CommandsInTheSource();
  int checked = 0;
  for (const std::string& name : found) {
    if (name == "auth") continue;  // Redis always allows AUTH.
    const std::string command = name.substr(0, name.find('|'));
    const Reply info = Admin(0, {"COMMAND", "INFO", command});
    if (info.elements.empty() || info.elements[0].type != Reply::Type::kArray) {
      continue;  // Not a Redis command.
    }
    const auto sample = kSamples.find(name);
    if (sample == kSamples.end()) {
      ADD_FAILURE() << "the source sends " << name
                    << ", which this test has no sample arguments for: add "
                       "them, and the permission to docs/security.md";
      continue;
    }
    std::vector<std::string> dryrun = {"ACL", "DRYRUN", kUser};
    for (absl::string_view part : absl::StrSplit(name, '|')) {
      dryrun.emplace_back(part);
    }
    dryrun.insert(dryrun.end(), sample->second.begin(), sample->second.end());
    const Reply verdict = Admin(0, dryrun);
    ++checked;
    const bool allowed = verdict.str == "OK";
    if (kOperatorOnly.count(name) > 0) {
      EXPECT_FALSE(allowed) << name << " is allowed: security.md says the "
                            << "operator must add it";
    } else {
      EXPECT_TRUE(allowed) << "the documented rule does not allow " << name
                           << ", which the source sends: "
                           << verdict.DebugString();
    }
  }
  // The parse found the commands (a broken pattern must not pass quietly).
  EXPECT_GE(checked, 20) << absl::StrJoin(found, " ");
  for (const char* expected : {"set", "evalsha", "script|load", "config|get",
                               "pexpire", "publish", "mget", "sscan"}) {
    EXPECT_EQ(found.count(expected), 1u) << expected;
  }
}

TEST_F(AclTest, AfterAScriptFlushTheEvalFallbackRunsAsTheUser) {
  auto client = Client();
  ASSERT_NE(client, nullptr);
  auto lock = client->Acquire("job", Ttl(absl::Seconds(10)));
  ASSERT_TRUE(lock.ok()) << lock.status();
  for (int i = 0; i < cluster_->size(); ++i) Admin(i, {"SCRIPT", "FLUSH"});
  ASSERT_TRUE(client->Extend(*lock, absl::Seconds(10)).ok());
  // The extension is won at quorum: the last master's fallback may still
  // be on its way.
  EXPECT_TRUE(AwaitHealth(*client, [](const std::vector<MasterHealth>& h) {
    for (const MasterHealth& m : h) {
      if (m.noscript_fallbacks != 1) return false;
    }
    return true;
  }));
  for (const MasterHealth& h : client->Health()) {
    EXPECT_EQ(h.noscript_fallbacks, 1) << h.master;
  }
  ASSERT_TRUE(client->Release(*lock).ok());
}

TEST_F(AclTest, TheToolRunsAsTheUserAndNeverPrintsItsPassword) {
  const ToolRun run = Tool({"run", "--fencing", "job", "--", "true"});
  EXPECT_EQ(run.exit_code, 0) << run;
  const ToolRun status = Tool({"status", "--json", "job"});
  EXPECT_EQ(status.exit_code, 0) << status;
  EXPECT_THAT(status.out, HasSubstr("\"marker\":\"trusted:")) << status;
  EXPECT_THAT(status.out, ::testing::Not(HasSubstr("NOPERM"))) << status;
  const ToolRun table = Tool({"status", "job"});
  EXPECT_EQ(table.exit_code, 0) << table;
  for (const ToolRun* r : {&run, &status, &table}) {
    EXPECT_THAT(r->out + r->err, ::testing::Not(HasSubstr(password_))) << *r;
  }
}

// The tool's semaphore paths as the documented user: acquire, extend and
// release by token find the permit set's slots with MGET, and status lists
// them with it (issue 46: the rule once lacked +mget, and these failed).
TEST_F(AclTest, TheToolsSemaphorePathsRunAsTheUser) {
  const ToolRun acquired = Tool({"acquire", "--limit=3", "--ttl=30s", "pool"});
  ASSERT_EQ(acquired.exit_code, 0) << acquired;
  std::string token;
  for (absl::string_view line : absl::StrSplit(acquired.out, '\n')) {
    if (absl::ConsumePrefix(&line, "token=")) token = std::string(line);
  }
  ASSERT_FALSE(token.empty()) << acquired;
  const ToolRun status = Tool({"status", "--limit=3", "pool"});
  EXPECT_EQ(status.exit_code, 0) << status;
  EXPECT_THAT(status.out + status.err, ::testing::Not(HasSubstr("NOPERM")))
      << status;
  const ToolRun extended =
      Tool({"extend", "--limit=3", "--ttl=30s", "pool", token});
  EXPECT_EQ(extended.exit_code, 0) << extended;
  const ToolRun released = Tool({"release", "--limit=3", "pool", token});
  EXPECT_EQ(released.exit_code, 0) << released;
  for (const ToolRun* r : {&acquired, &status, &extended, &released}) {
    EXPECT_THAT(r->out + r->err, ::testing::Not(HasSubstr("NOPERM"))) << *r;
  }
}

TEST_F(AclTest, WithoutEvalshaAFencedAcquisitionNamesIt) {
  Restrict({"-evalsha"});
  auto client = Client();
  ASSERT_NE(client, nullptr);
  auto lock = client->Acquire("job", Ttl(absl::Seconds(10), true));
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(lock.status().message(),
              HasSubstr("NOPERM this user has no permissions to run the "
                        "'evalsha' command"));
}

TEST_F(AclTest, WithoutScriptLoadTheHandshakeFailsAndHealthNamesIt) {
  Restrict({"-script|load"});
  auto client = Client();
  ASSERT_NE(client, nullptr);
  EXPECT_TRUE(AwaitHealth(*client, [](const std::vector<MasterHealth>& h) {
    for (const MasterHealth& m : h) {
      if (!absl::StrContains(m.last_error.message(),
                             "SCRIPT LOAD failed: NOPERM") ||
          !absl::StrContains(m.last_error.message(), "'script|load'")) {
        return false;
      }
    }
    return true;
  })) << HealthText(client->Health());
  auto lock = client->Acquire("job", Ttl(absl::Seconds(10)));
  ASSERT_FALSE(lock.ok());
  EXPECT_THAT(lock.status().message(), HasSubstr("'script|load'"));
}

TEST_F(AclTest, OutsideTheKeyPatternTheErrorsSayKeys) {
  Restrict({"resetkeys", "~other:*"});
  auto client = Client();
  ASSERT_NE(client, nullptr);
  // The handshake's GET of the marker is refused first.
  EXPECT_TRUE(AwaitHealth(*client, [](const std::vector<MasterHealth>& h) {
    for (const MasterHealth& m : h) {
      if (!absl::StrContains(m.last_error.message(),
                             "GET marker failed: NOPERM this user has no "
                             "permissions to access one of the keys")) {
        return false;
      }
    }
    return true;
  })) << HealthText(client->Health());
}

TEST_F(AclTest, OutsideTheKeyPatternALockKeyIsRefusedSayingKeys) {
  // The library's own keys (marker, counters) allowed, the lock keys not.
  Restrict({"resetkeys", "~redlock:__*"});
  auto client = Client();
  ASSERT_NE(client, nullptr);
  auto lock = client->Acquire("job", Ttl(absl::Seconds(10)));
  ASSERT_FALSE(lock.ok());
  EXPECT_THAT(lock.status().message(),
              HasSubstr("NOPERM this user has no permissions to access one "
                        "of the keys used as arguments"));
}

TEST_F(AclTest, WithoutTheChannelPatternReleaseFailsSayingPublish) {
  Restrict({"resetchannels"});
  auto client = Client();
  ASSERT_NE(client, nullptr);
  // SET NX publishes nothing: the acquisition works.
  auto lock = client->Acquire("job", Ttl(absl::Seconds(10)));
  ASSERT_TRUE(lock.ok()) << lock.status();
  auto report = client->Release(*lock, AllMasters());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->failed, 3) << DescribeVotes(report->votes);
  EXPECT_FALSE(report->freed);
  for (const MasterVote& vote : report->votes) {
    EXPECT_THAT(vote.error.message(), HasSubstr("can't publish to the channel"))
        << vote.master;
  }
  // The script is not rolled back: the key was deleted before the refused
  // PUBLISH (docs/security.md says so).
  for (int i = 0; i < cluster_->size(); ++i) {
    EXPECT_EQ(Get(i, LockKey(Options(), "job")), std::nullopt)
        << "master " << i;
  }
}

TEST_F(AclTest, WithoutTheChannelPatternWaitersPollAndHealthSaysWhy) {
  Restrict({"resetchannels"});
  auto holder = Client();
  ASSERT_NE(holder, nullptr);
  auto held = holder->Acquire("job", Ttl(absl::Seconds(10)));
  ASSERT_TRUE(held.ok()) << held.status();
  auto waiter = Client();
  ASSERT_NE(waiter, nullptr);
  AcquireOptions options = Ttl(absl::Seconds(10));
  options.wait = absl::Milliseconds(400);
  // Held elsewhere: it waits, subscribing to be woken, and is refused.
  EXPECT_FALSE(waiter->Acquire("job", options).ok());
  for (const MasterHealth& h : waiter->Health()) {
    EXPECT_THAT(h.wakeups.message(), HasSubstr("NOPERM")) << h.master;
    EXPECT_THAT(h.wakeups.message(), HasSubstr("channel")) << h.master;
  }
}

TEST_F(AclTest, WithoutDelTheReleaseFailsAndAclLogNamesTheCommand) {
  Restrict({"-del"});
  auto client = Client();
  ASSERT_NE(client, nullptr);
  auto lock = client->Acquire("job", Ttl(absl::Seconds(10)));
  ASSERT_TRUE(lock.ok()) << lock.status();
  auto report = client->Release(*lock, AllMasters());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->failed, 3) << DescribeVotes(report->votes);
  for (const MasterVote& vote : report->votes) {
    // Redis 7.0's words for a command refused inside a script do not name
    // the command...
    EXPECT_THAT(vote.error.message(),
                HasSubstr("can't run this command or subcommand"))
        << vote.master;
  }
  // ... its ACL LOG does.
  const Reply log = Admin(0, {"ACL", "LOG", "1"});
  ASSERT_EQ(log.elements.size(), 1u) << log.DebugString();
  std::map<std::string, std::string> entry;
  const std::vector<Reply>& fields = log.elements[0].elements;
  for (size_t i = 0; i + 1 < fields.size(); i += 2) {
    entry[fields[i].str] = fields[i + 1].str;
  }
  EXPECT_EQ(entry["reason"], "command");
  EXPECT_EQ(entry["context"], "lua");
  EXPECT_EQ(entry["object"], "del");
  EXPECT_EQ(entry["username"], kUser);
}

TEST_F(AclTest, WithoutConfigGetPersistenceIsUnknownAndHealthSaysWhy) {
  Restrict({"-config|get"});
  auto client = Client();
  ASSERT_NE(client, nullptr);
  // Not fatal: the lock works.
  auto lock = client->Acquire("job", Ttl(absl::Seconds(10)));
  ASSERT_TRUE(lock.ok()) << lock.status();
  ASSERT_TRUE(client->Release(*lock).ok());
  for (const MasterHealth& h : client->Health()) {
    EXPECT_TRUE(h.last_error.ok()) << h.master << ": " << h.last_error;
    EXPECT_THAT(h.persistence,
                HasSubstr("unknown (CONFIG GET refused: NOPERM this user has "
                          "no permissions to run the 'config|get' command"))
        << h.master;
    EXPECT_THAT(h.durability.message(), HasSubstr("ACL +config|get"))
        << h.master;
  }
}

// An error reply to one of status's reads (here MGET refused) does not stop
// the reads after it: the persistence is still read with CONFIG GET, not
// reported unknown with no reason (issue 46).
TEST_F(AclTest, TheToolWithoutMgetNamesItAndStillReadsPersistence) {
  Restrict({"-mget"});
  const ToolRun status = Tool({"status", "--json", "--limit=3", "pool"});
  EXPECT_FALSE(status.timed_out) << status;
  EXPECT_THAT(status.out + status.err,
              HasSubstr("no permissions to run the 'mget' command"))
      << status;
  EXPECT_THAT(status.out, HasSubstr("\"persistence\":\"")) << status;
  EXPECT_THAT(status.out,
              ::testing::Not(HasSubstr("\"persistence\":\"unknown")))
      << status;
}

TEST_F(AclTest, TheToolWithoutPttlNamesIt) {
  Restrict({"-pttl"});
  const ToolRun status = Tool({"status", "job"});
  EXPECT_FALSE(status.timed_out) << status;
  EXPECT_THAT(status.out + status.err,
              HasSubstr("no permissions to run the 'pttl' command"))
      << status;
}

// Each permission docs/security.md lists as optional for the library is
// optional: without it a client still takes and releases a lock, a reader
// and a permit, and `redlock run` still works. (+config|get and the
// channel pattern have tests of their own above, which show what is lost.)
TEST_F(AclTest, EachOptionalPermissionIsOptionalForTheLock) {
  for (const std::string permission :
       {"ping", "sscan", "mget", "select", "eval"}) {
    SCOPED_TRACE(permission);
    Restrict({"-" + permission});
    auto client = Client();
    ASSERT_NE(client, nullptr);
    absl::StatusOr<Lock> lock = client->TryAcquire("job", absl::Seconds(10));
    ASSERT_TRUE(lock.ok()) << lock.status();
    EXPECT_TRUE(client->Release(*lock).ok());
    AcquireOptions options;
    options.ttl = absl::Seconds(10);
    options.shared = true;
    absl::StatusOr<Lock> reader = client->Acquire("rw", options);
    ASSERT_TRUE(reader.ok()) << reader.status();
    EXPECT_TRUE(client->Release(*reader).ok());
    options.shared = false;
    SemaphoreOptions sem;
    sem.limit = 3;
    absl::StatusOr<Lock> permit = client->AcquirePermits("pool", sem, options);
    ASSERT_TRUE(permit.ok()) << permit.status();
    EXPECT_TRUE(client->Release(*permit).ok());
    const ToolRun run = Tool({"run", "job", "--", "true"});
    EXPECT_EQ(run.exit_code, 0) << run;
    Restrict({"+" + permission});
  }
}

// Every subcommand of the tool, with each kind of lock it takes (plain,
// --fencing, --shared, --limit, several resources), as the documented user;
// then reconfigure, which the rule alone cannot finish (it SCANs for the
// fencing counters, which security.md keeps out of the rule: SCAN lists key
// names outside the key pattern too) and which finishes once the operator's
// user is given +scan, as the page says.
TEST_F(AclTest, EverySubcommandWithEveryKindOfLockRunsAsTheUser) {
  // A short max_ttl, the same for every run, so that reconfigure's wait
  // (max_ttl * 1.01 + 3 s) fits the test.
  const std::vector<std::string> common = {"--max-ttl=2s"};
  auto tool = [&](std::vector<std::string> args) {
    args.insert(args.begin() + 1, common.begin(), common.end());
    return Tool(std::move(args));
  };
  std::vector<ToolRun> runs;
  auto expect_ok = [&](const ToolRun& r, absl::string_view what) {
    EXPECT_EQ(r.exit_code, 0) << what << ": " << r;
    runs.push_back(r);
  };
  struct Kind {
    std::vector<std::string> flags;
    std::vector<std::string> resources;
  };
  const std::vector<Kind> kinds = {{{}, {"job"}},
                                   {{"--fencing"}, {"fenced"}},
                                   {{"--shared"}, {"shelf"}},
                                   {{"--limit=3"}, {"pool"}},
                                   {{"--limit=3", "--permits=2"}, {"pool2"}},
                                   {{}, {"a", "b", "c"}}};
  for (const Kind& kind : kinds) {
    const std::string what = absl::StrJoin(kind.flags, " ") + " " +
                             absl::StrJoin(kind.resources, " ");
    SCOPED_TRACE(what);
    std::vector<std::string> run = {"run", "--ttl=2s"};
    run.insert(run.end(), kind.flags.begin(), kind.flags.end());
    run.insert(run.end(), kind.resources.begin(), kind.resources.end());
    run.insert(run.end(), {"--", "true"});
    expect_ok(tool(run), "run");
    // The other subcommands take one resource: each of them in turn.
    for (const std::string& resource : kind.resources) {
      std::vector<std::string> acquire = {"acquire", "--ttl=2s"};
      acquire.insert(acquire.end(), kind.flags.begin(), kind.flags.end());
      acquire.push_back(resource);
      const ToolRun acquired = tool(acquire);
      expect_ok(acquired, "acquire");
      const std::string token = testing::KeyValues(acquired.out)["token"];
      ASSERT_FALSE(token.empty()) << acquired;
      // status takes --limit, not --fencing, --shared or --permits.
      std::vector<std::string> status = {"status"};
      for (const std::string& flag : kind.flags) {
        if (absl::StartsWith(flag, "--limit")) status.push_back(flag);
      }
      status.push_back(resource);
      const ToolRun shown = tool(status);
      expect_ok(shown, "status");
      // The holder shows: a semaphore's in its slots (its resource key, a
      // plain lock's, is "not held"), a reader as one, any other lock as
      // the key's holder.
      std::string holder = token.substr(0, 8);
      if (status.size() > 2) holder = "=" + holder;  // --limit: a slot.
      if (kind.flags == std::vector<std::string>{"--shared"}) {
        holder = "shared by 1 reader ";
      }
      EXPECT_THAT(shown.out, HasSubstr(holder)) << shown;
      // extend and release take --shared and --limit (the key layout), not
      // --fencing or --permits.
      std::vector<std::string> by_token;
      for (const std::string& flag : kind.flags) {
        if (flag == "--shared" || absl::StartsWith(flag, "--limit")) {
          by_token.push_back(flag);
        }
      }
      std::vector<std::string> extend = {"extend", "--ttl=2s"};
      extend.insert(extend.end(), by_token.begin(), by_token.end());
      extend.insert(extend.end(), {resource, token});
      expect_ok(tool(extend), "extend");
      std::vector<std::string> release = {"release"};
      release.insert(release.end(), by_token.begin(), by_token.end());
      release.insert(release.end(), {resource, token});
      expect_ok(tool(release), "release");
    }
  }
  // A contended plain lock waited for: the waiting writer's retries (PTTL
  // in its script), the wake-up's SUBSCRIBE, and the release that hands the
  // lock to the waiter (its hand-off entry and channel).
  const ToolRun held = tool({"acquire", "--ttl=2s", "contended"});
  expect_ok(held, "acquire to hold");
  ToolRun waited;
  std::thread waiter([&] {
    waited = tool({"acquire", "--ttl=2s", "--wait=5s", "contended"});
  });
  absl::SleepFor(absl::Milliseconds(500));
  expect_ok(
      tool({"release", "contended", testing::KeyValues(held.out)["token"]}),
      "release to a waiter");
  waiter.join();
  expect_ok(waited, "acquire --wait behind a holder");

  // reconfigure A,B,C -> A,B,D, as the user, D set up like the others.
  RedisServer::Config config;
  config.requirepass = kAdminPassword;
  auto d = RedisServer::Start(config);
  ASSERT_TRUE(d.ok()) << d.status();
  {
    auto admin = (*d)->Client();
    ASSERT_TRUE(admin.ok()) << admin.status();
    auto set = (*admin)->Command(DocumentedRule(password_));
    ASSERT_TRUE(set.ok() && !set->is_error()) << "ACL SETUSER on D";
  }
  std::vector<std::string> old_list = Uris();
  std::vector<std::string> new_list = {
      old_list[0], old_list[1],
      absl::StrCat("redis://", kUser, ":", password_, "@", (*d)->Address())};
  const std::string masters =
      absl::StrCat("--masters=", absl::StrJoin(old_list, ","));
  const std::string to = absl::StrCat("--to=", absl::StrJoin(new_list, ","));
  expect_ok(tool({"reconfigure", masters, to}), "reconfigure: begin");
  const ToolRun refused = tool({"reconfigure", masters, to, "--wait=10s"});
  EXPECT_NE(refused.exit_code, 0) << refused;
  EXPECT_THAT(refused.out, HasSubstr("permissions to run the 'scan' command"))
      << refused;
  EXPECT_THAT(refused.err, HasSubstr("give the operator's user +scan"))
      << refused;
  auto allow_scan = [&](testing::RedisClient& admin) {
    auto set = admin.Command({"ACL", "SETUSER", kUser, "+scan"});
    ASSERT_TRUE(set.ok() && !set->is_error()) << "ACL SETUSER +scan";
  };
  for (int i = 0; i < cluster_->size(); ++i) {
    auto admin = cluster_->Client(i);
    ASSERT_TRUE(admin.ok()) << admin.status();
    allow_scan(**admin);
  }
  {
    auto admin = (*d)->Client();
    ASSERT_TRUE(admin.ok()) << admin.status();
    allow_scan(**admin);
  }
  const ToolRun finished = tool({"reconfigure", masters, to, "--wait=10s"});
  expect_ok(finished, "reconfigure: finish with +scan");
  EXPECT_THAT(finished.out, HasSubstr("finished")) << finished;
  const std::string new_masters =
      absl::StrCat("--masters=", absl::StrJoin(new_list, ","));
  expect_ok(tool({"run", new_masters, "--ttl=2s", "--fencing", "fenced", "--",
                  "true"}),
            "run on the new members");
  for (const ToolRun& r : runs) {
    EXPECT_THAT(r.out + r.err, ::testing::Not(HasSubstr("NOPERM"))) << r;
    EXPECT_THAT(r.out + r.err, ::testing::Not(HasSubstr(password_))) << r;
  }
}

}  // namespace
}  // namespace redlock
