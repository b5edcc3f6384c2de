// Copyright 2026 The redlock Authors.
//
// TLS and Unix domain sockets on real redis-server processes (Debian's 7.0
// serves both), with throw-away certificates made by TestCerts at test time:
// a verified connection, each way verification fails (and says why in the
// failed vote), mutual TLS, the wrong transport on either side (a clear
// error within the connect timeout, no hang), skipping verification (warned
// once per connection), a deployment mixing TLS, TCP and a Unix socket, one
// server under two transports counted once, the restart guard and the fault
// proxy and wake-ups over TLS, and Health()'s transport and TLS columns.
//
// The fixture reaches a TLS-only server over its Unix socket
// (RedisServer::Client()), so what the tests read on the masters never
// depends on the library's TLS.

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "redlock/health.h"
#include "redlock/keys.h"
#include "redlock/options.h"
#include "redlock/redlock.h"
#include "tests/support/fault_proxy.h"
#include "tests/support/guard_expectations.h"
#include "tests/support/heard_messages.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_certs.h"
#include "tests/support/test_options.h"

namespace redlock {
namespace {

using ::redlock::testing::FaultProxy;
using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;
using ::redlock::testing::TestCerts;
using ::redlock::testing::TestOptions;
using ::testing::HasSubstr;
using ClientAuth = RedisServer::Config::Tls::ClientAuth;

constexpr char kJob[] = "job";
// Every wait below is bounded by this; none should come near it.
constexpr absl::Duration kBound = absl::Seconds(10);

// Collects Options::on_warning calls (loop thread) for the test thread.
class Warnings {
 public:
  std::function<void(absl::string_view)> Sink() {
    return [this](absl::string_view text) {
      absl::MutexLock lock(&mu_);
      all_.emplace_back(text);
    };
  }
  // The warnings about skipped certificate verification (the restart guard
  // warns too, about the fixture's masters' persistence).
  int AboutVerification() const {
    absl::MutexLock lock(&mu_);
    int n = 0;
    for (const std::string& w : all_) {
      const std::string lower = absl::AsciiStrToLower(w);
      if (absl::StrContains(lower, "verif") ||
          absl::StrContains(lower, "insecure")) {
        ++n;
      }
    }
    return n;
  }
  std::string All() const {
    absl::MutexLock lock(&mu_);
    return absl::StrJoin(all_, " | ");
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::string> all_;
};

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto certs = TestCerts::Make();
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
  }

  // A TLS-only server (plus the Unix socket the fixture uses) serving
  // `cert` (default: the good server certificate).
  static RedisServer::Config TlsConfig(ClientAuth auth = ClientAuth::kNo,
                                       std::string cert = "") {
    RedisServer::Config config;
    config.tls.enabled = true;
    config.tls.cert_file = cert.empty() ? certs_->server_cert() : cert;
    config.tls.key_file = certs_->server_key();
    config.tls.ca_file = certs_->ca_file();
    config.tls.client_auth = auth;
    return config;
  }

  static std::unique_ptr<RedisServer> MustStart(RedisServer::Config config) {
    auto server = RedisServer::Start(std::move(config));
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? *std::move(server) : nullptr;
  }

  // TestOptions trusting the test CA.
  static Options TlsClientOptions(std::vector<std::string> masters) {
    Options options = TestOptions(std::move(masters));
    options.tls.ca_file = certs_->ca_file();
    return options;
  }

  static std::unique_ptr<Redlock> MakeClient(Options options) {
    auto client = Redlock::Create(std::move(options));
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  static AcquireOptions Waiting(absl::Duration wait,
                                absl::Duration ttl = absl::Seconds(30)) {
    AcquireOptions options;
    options.ttl = ttl;
    options.wait = wait;
    return options;
  }

  static bool Eventually(const std::function<bool()>& done) {
    const absl::Time deadline = absl::Now() + kBound;
    while (!done()) {
      if (absl::Now() >= deadline) return false;
      absl::SleepFor(absl::Milliseconds(10));
    }
    return true;
  }

  // GET on a server through the fixture's own connection.
  static std::optional<std::string> Value(const RedisServer& server,
                                          const std::string& key) {
    auto client = server.Client();
    EXPECT_TRUE(client.ok()) << client.status();
    if (!client.ok()) return "<error>";
    auto value = (*client)->Get(key);
    EXPECT_TRUE(value.ok()) << value.status();
    return value.ok() ? *value : "<error>";
  }

  // One attempt on a one-master deployment that cannot connect: the
  // attempt's error and the master's last_error together (the reason may be
  // in either, depending on whether the vote came from a connect that had
  // already failed). Also checks the attempt fails as an outage, never as a
  // grant, and that the call came back within the bound.
  // `took`, if given, is how long the attempt itself took.
  static std::string FailureOfOneAttempt(Redlock& client,
                                         absl::Duration* took = nullptr) {
    const absl::Time start = absl::Now();
    absl::StatusOr<Lock> lock = client.TryAcquire(kJob, absl::Seconds(10));
    if (took != nullptr) *took = absl::Now() - start;
    EXPECT_LT(absl::Now() - start, kBound) << "the attempt hung";
    EXPECT_FALSE(lock.ok()) << "granted over a connection that must fail";
    if (lock.ok()) return "<granted>";
    EXPECT_EQ(lock.status().code(), absl::StatusCode::kUnavailable)
        << lock.status();
    // The connect's own failure, once it has been recorded.
    Eventually([&] { return !client.Health()[0].last_error.ok(); });
    const MasterHealth health = client.Health()[0];
    EXPECT_FALSE(health.connected);
    EXPECT_EQ(health.tls, "") << "not connected, yet a TLS session";
    return absl::StrCat(lock.status().message(),
                        " | last_error: ", health.last_error.message());
  }

  static TestCerts* certs_;
};

TestCerts* TlsTest::certs_ = nullptr;

// --- verified TLS -----------------------------------------------------------

TEST_F(TlsTest, AVerifiedDeploymentAcquiresExtendsAndReleases) {
  auto cluster = RedisCluster::Start(3, TlsConfig());
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  std::vector<std::string> uris = (*cluster)->Uris();
  for (const std::string& uri : uris) ASSERT_THAT(uri, HasSubstr("rediss://"));
  auto client = MakeClient(TlsClientOptions(uris));
  ASSERT_NE(client, nullptr);

  absl::StatusOr<Lock> lock =
      client->Acquire(kJob, Waiting(absl::Seconds(5), absl::Seconds(5)));
  ASSERT_TRUE(lock.ok()) << lock.status();
  // Decided at quorum: the third SET may land a moment later.
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(Eventually([&] {
      return Value((*cluster)->server(i), lock->key()) == lock->token();
    })) << "master "
        << i << " never got the lock";
  }
  ASSERT_TRUE(client->Extend(*lock, absl::Seconds(60)).ok());
  for (int i = 0; i < 3; ++i) {
    auto c = (*cluster)->Client(i);
    ASSERT_TRUE(c.ok()) << c.status();
    auto pttl = (*c)->Pttl(lock->key());
    ASSERT_TRUE(pttl.ok()) << pttl.status();
    EXPECT_GT(*pttl, 5000) << "extension did not reach master " << i;
  }
  absl::StatusOr<ReleaseReport> released = client->Release(*lock);
  ASSERT_TRUE(released.ok()) << released.status();
  EXPECT_TRUE(released->freed);
  EXPECT_TRUE(Eventually([&] {
    for (int i = 0; i < 3; ++i) {
      if (Value((*cluster)->server(i), lock->key()).has_value()) return false;
    }
    return true;
  })) << "a key outlived the release";
}

// A kept-alive lock's extensions go out in batches whose RESP text is made
// once for every master and then encrypted per connection.
TEST_F(TlsTest, ALockKeptAliveOverTlsOutlivesItsTtl) {
  auto cluster = RedisCluster::Start(3, TlsConfig());
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto client = MakeClient(TlsClientOptions((*cluster)->Uris()));
  ASSERT_NE(client, nullptr);
  const absl::Duration ttl = absl::Milliseconds(1500);
  std::string key;
  std::string token;
  std::vector<int64_t> pttls;
  const absl::Status held = client->WithLock(
      kJob, Waiting(absl::Seconds(5), ttl), [&](const Lock& lock) {
        key = lock.key();
        token = lock.token();
        absl::SleepFor(2 * ttl);  // Twice its TTL: extended, or gone.
        for (int i = 0; i < 3; ++i) {
          auto c = (*cluster)->Client(i);
          if (!c.ok()) return c.status();
          auto pttl = (*c)->Pttl(lock.key());
          if (!pttl.ok()) return pttl.status();
          pttls.push_back(*pttl);
          if (Value((*cluster)->server(i), lock.key()) != lock.token()) {
            return absl::InternalError(
                absl::StrCat("master ", i, " no longer holds the token"));
          }
        }
        return lock.remaining() > absl::ZeroDuration()
                   ? absl::OkStatus()
                   : absl::InternalError("no validity left");
      });
  EXPECT_TRUE(held.ok()) << held;
  ASSERT_EQ(pttls.size(), 3u);
  for (int64_t pttl : pttls) EXPECT_GT(pttl, 0) << "not extended";
  EXPECT_TRUE(Eventually([&] {
    for (int i = 0; i < 3; ++i) {
      if (Value((*cluster)->server(i), key).has_value()) return false;
    }
    return true;
  })) << "a key outlived the release";
  EXPECT_FALSE(token.empty());
}

TEST_F(TlsTest, HealthShowsTlsWithItsProtocolAndCipher) {
  auto server = MustStart(TlsConfig());
  ASSERT_NE(server, nullptr);
  auto client = MakeClient(TlsClientOptions({server->TlsUri()}));
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Acquire(kJob, Waiting(absl::Seconds(5))).ok());
  const MasterHealth h = client->Health()[0];
  EXPECT_TRUE(h.connected);
  EXPECT_EQ(h.master, server->TlsAddress());
  EXPECT_EQ(h.transport, "tls");
  // Redis 7 with OpenSSL 3 negotiates TLS 1.3; the cipher follows.
  EXPECT_THAT(h.tls, ::testing::StartsWith("TLSv1.3 ")) << h.tls;
  EXPECT_THAT(h.tls, HasSubstr("TLS_")) << h.tls;
  EXPECT_TRUE(h.last_error.ok()) << h.last_error;
}

TEST_F(TlsTest, TlsEnableCarriesRedisUrisOverTls) {
  auto server = MustStart(TlsConfig());
  ASSERT_NE(server, nullptr);
  Options options = TlsClientOptions(
      {absl::StrCat("redis://127.0.0.1:", server->tls_port())});
  options.tls.enable = true;
  auto client = MakeClient(options);
  ASSERT_NE(client, nullptr);
  absl::StatusOr<Lock> lock = client->Acquire(kJob, Waiting(absl::Seconds(5)));
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_EQ(Value(*server, lock->key()), lock->token());
  EXPECT_EQ(client->Health()[0].transport, "tls");
}

// --- verification failures --------------------------------------------------

TEST_F(TlsTest, ACertificateFromAnUnknownCaIsAFailedVoteSayingSo) {
  auto server = MustStart(TlsConfig());
  ASSERT_NE(server, nullptr);
  Options options = TlsClientOptions({server->TlsUri()});
  options.tls.ca_file = certs_->wrong_ca_file();
  auto client = MakeClient(options);
  ASSERT_NE(client, nullptr);
  EXPECT_THAT(FailureOfOneAttempt(*client),
              HasSubstr("not signed by a trusted CA"));
  EXPECT_EQ(Value(*server, LockKey(Options(), kJob)), std::nullopt)
      << "a command crossed an unverified connection";
}

TEST_F(TlsTest, ANameMismatchFailsUntilTheNameIsGiven) {
  auto server =
      MustStart(TlsConfig(ClientAuth::kNo, certs_->other_name_cert()));
  ASSERT_NE(server, nullptr);
  // By IP: the certificate has no IP entry, only DNS:other.example.
  auto by_ip = MakeClient(TlsClientOptions({server->TlsUri()}));
  ASSERT_NE(by_ip, nullptr);
  EXPECT_THAT(FailureOfOneAttempt(*by_ip), HasSubstr("does not match"));

  // The same address, checked against the name in the certificate.
  auto by_query = MakeClient(
      TlsClientOptions({server->TlsUri() + "?tls_name=other.example"}));
  ASSERT_NE(by_query, nullptr);
  absl::StatusOr<Lock> lock =
      by_query->Acquire(kJob, Waiting(absl::Seconds(5)));
  ASSERT_TRUE(lock.ok()) << lock.status();
  ASSERT_TRUE(by_query->Release(*lock).ok());

  Options options = TlsClientOptions({server->TlsUri()});
  options.tls.server_name = "other.example";
  auto by_option = MakeClient(options);
  ASSERT_NE(by_option, nullptr);
  lock = by_option->Acquire(kJob, Waiting(absl::Seconds(5)));
  ASSERT_TRUE(lock.ok()) << lock.status();

  // A name the certificate does not carry fails even so.
  auto wrong_name = MakeClient(
      TlsClientOptions({server->TlsUri() + "?tls_name=redis.example"}));
  ASSERT_NE(wrong_name, nullptr);
  EXPECT_THAT(FailureOfOneAttempt(*wrong_name), HasSubstr("does not match"));
}

TEST_F(TlsTest, AnExpiredCertificateFailsSayingSo) {
  auto server = MustStart(TlsConfig(ClientAuth::kNo, certs_->expired_cert()));
  ASSERT_NE(server, nullptr);
  auto client = MakeClient(TlsClientOptions({server->TlsUri()}));
  ASSERT_NE(client, nullptr);
  EXPECT_THAT(FailureOfOneAttempt(*client), HasSubstr("expired"));
}

TEST_F(TlsTest, AServerThatRequiresAClientCertificateRefusesNoneAndTakesOne) {
  auto server = MustStart(TlsConfig(ClientAuth::kYes));
  ASSERT_NE(server, nullptr);
  auto without = MakeClient(TlsClientOptions({server->TlsUri()}));
  ASSERT_NE(without, nullptr);
  EXPECT_THAT(FailureOfOneAttempt(*without), HasSubstr("client certificate"));
  EXPECT_EQ(Value(*server, LockKey(Options(), kJob)), std::nullopt);

  Options options = TlsClientOptions({server->TlsUri()});
  options.tls.cert_file = certs_->client_cert();
  options.tls.key_file = certs_->client_key();
  auto with = MakeClient(options);
  ASSERT_NE(with, nullptr);
  absl::StatusOr<Lock> lock = with->Acquire(kJob, Waiting(absl::Seconds(5)));
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_EQ(Value(*server, lock->key()), lock->token());
}

TEST_F(TlsTest, FilesThatCannotBeUsedFailCreateNamingThem) {
  const std::string missing = certs_->dir() + "/no-such-ca.pem";
  Options options = TlsClientOptions({"rediss://127.0.0.1:1"});
  options.tls.ca_file = missing;
  auto client = Redlock::Create(options);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(client.status().message(), HasSubstr(missing));

  // A certificate without its key.
  options = TlsClientOptions({"rediss://127.0.0.1:1"});
  options.tls.cert_file = certs_->client_cert();
  client = Redlock::Create(options);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), absl::StatusCode::kInvalidArgument);

  // A key that is not the certificate's.
  options.tls.key_file = certs_->server_key();
  client = Redlock::Create(options);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      absl::StrContains(client.status().message(), certs_->client_cert()) ||
      absl::StrContains(client.status().message(), certs_->server_key()))
      << client.status();
}

// --- the wrong transport ----------------------------------------------------

TEST_F(TlsTest, APlainServerOnATlsAddressFailsClearlyWithinTheConnectTimeout) {
  auto server = MustStart({});
  ASSERT_NE(server, nullptr);
  Options options =
      TlsClientOptions({absl::StrCat("rediss://127.0.0.1:", server->port())});
  auto client = MakeClient(options);
  ASSERT_NE(client, nullptr);
  // redis-server reads a ClientHello as the start of an inline command
  // and answers nothing (seen with `openssl s_client` against it): only the
  // connect timeout, which the handshake counts in, ends the wait.
  absl::Duration took;
  EXPECT_THAT(FailureOfOneAttempt(*client, &took),
              HasSubstr("did not answer TLS"));
  EXPECT_LT(took, options.connect_timeout + options.request_timeout +
                      absl::Seconds(2));
}

TEST_F(TlsTest, ATlsServerOnAPlainAddressFailsClearlyWithinTheConnectTimeout) {
  auto server = MustStart(TlsConfig());
  ASSERT_NE(server, nullptr);
  const Options options =
      TestOptions({absl::StrCat("redis://127.0.0.1:", server->tls_port())});
  auto client = MakeClient(options);
  ASSERT_NE(client, nullptr);
  // redis-server sends no TLS alert back: the connection is closed (reset
  // if our bytes were left unread) as soon as its first record is not TLS.
  absl::Duration took;
  EXPECT_THAT(FailureOfOneAttempt(*client, &took), HasSubstr("speaks TLS"));
  EXPECT_LT(took, options.connect_timeout + options.request_timeout +
                      absl::Seconds(2));
}

// --- skipping verification --------------------------------------------------

TEST_F(TlsTest, InsecureConnectsDespiteAnUnknownCaAndWarnsOnce) {
  auto server = MustStart(TlsConfig());
  ASSERT_NE(server, nullptr);
  Warnings warnings;
  Options options = TlsClientOptions({server->TlsUri()});
  options.tls.ca_file = certs_->wrong_ca_file();
  options.tls.insecure = true;
  options.on_warning = warnings.Sink();
  auto client = MakeClient(options);
  ASSERT_NE(client, nullptr);

  absl::StatusOr<Lock> lock = client->Acquire(kJob, Waiting(absl::Seconds(5)));
  ASSERT_TRUE(lock.ok()) << lock.status();
  ASSERT_TRUE(client->Release(*lock).ok());
  lock = client->Acquire(kJob, Waiting(absl::Seconds(5)));
  ASSERT_TRUE(lock.ok()) << lock.status();
  ASSERT_TRUE(client->Release(*lock).ok());
  EXPECT_EQ(warnings.AboutVerification(), 1)
      << "one connection, two locks: " << warnings.All();

  // The server drops the connection; the next one does not warn again: a
  // person reads a warning once (issue 46: the same lines once per master
  // per connection drowned the demo).
  {
    auto control = server->Client();
    ASSERT_TRUE(control.ok()) << control.status();
    auto killed = (*control)->Command({"CLIENT", "KILL", "TYPE", "normal"});
    ASSERT_TRUE(killed.ok()) << killed.status();
    ASSERT_GE(killed->integer, 1) << killed->DebugString();
  }
  ASSERT_TRUE(Eventually([&] {
    auto again = client->Acquire(kJob, Waiting(absl::Seconds(1)));
    if (!again.ok()) return false;
    client->Release(*again).IgnoreError();
    return true;
  })) << warnings.All();
  EXPECT_EQ(warnings.AboutVerification(), 1) << warnings.All();
}

// --- deployments mixing transports ------------------------------------------

TEST_F(TlsTest, ADeploymentOfTlsTcpAndUnixSocketMastersLocks) {
  auto tls = MustStart(TlsConfig());
  auto tcp = MustStart({});
  RedisServer::Config unix_config;
  unix_config.unixsocket = true;
  auto unix_socket = MustStart(unix_config);
  ASSERT_TRUE(tls != nullptr && tcp != nullptr && unix_socket != nullptr);
  auto client = MakeClient(
      TlsClientOptions({tls->TlsUri(), tcp->Uri(), unix_socket->UnixUri()}));
  ASSERT_NE(client, nullptr);

  absl::StatusOr<Lock> lock = client->Acquire(kJob, Waiting(absl::Seconds(5)));
  ASSERT_TRUE(lock.ok()) << lock.status();
  // Every one of the three holds it (a quorum of two would hide one that
  // never connected); the last SET may land after the quorum.
  for (const RedisServer* server : {tls.get(), tcp.get(), unix_socket.get()}) {
    EXPECT_TRUE(Eventually([&] {
      return Value(*server, lock->key()) == lock->token();
    })) << server->dir();
  }

  const std::vector<MasterHealth> health = client->Health();
  ASSERT_EQ(health.size(), 3u);
  EXPECT_EQ(health[0].transport, "tls");
  EXPECT_FALSE(health[0].tls.empty());
  EXPECT_EQ(health[1].transport, "tcp");
  EXPECT_EQ(health[1].tls, "");
  EXPECT_EQ(health[2].transport, "unix");
  EXPECT_EQ(health[2].tls, "");
  EXPECT_EQ(health[2].master, unix_socket->UnixAddress());

  absl::StatusOr<ReleaseReport> released = client->Release(*lock);
  ASSERT_TRUE(released.ok()) << released.status();
  EXPECT_TRUE(released->freed);
}

TEST_F(TlsTest, OneServerByItsUnixSocketAndByTcpCastsOneVote) {
  RedisServer::Config both;
  both.unixsocket = true;
  auto shared = MustStart(both);
  auto other = MustStart({});
  ASSERT_TRUE(shared != nullptr && other != nullptr);
  auto client =
      MakeClient(TestOptions({shared->Uri(), shared->UnixUri(), other->Uri()}));
  ASSERT_NE(client, nullptr);
  absl::StatusOr<Lock> lock = client->TryAcquire(kJob, absl::Seconds(30));
  ASSERT_TRUE(lock.ok()) << lock.status();
  // The third master forgets the lock: it is now held on one server of two.
  {
    auto c = other->Client();
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE((*c)->Command({"DEL", lock->key()}).ok());
  }
  EXPECT_FALSE(client->Extend(*lock, absl::Seconds(30)).ok())
      << "extended on one server of two, counted twice";
  const std::vector<MasterHealth> health = client->Health();
  ASSERT_EQ(health.size(), 3u);
  EXPECT_TRUE(health[0].grants_count.ok()) << health[0].grants_count;
  EXPECT_EQ(health[1].grants_count.code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(health[1].grants_count.message(),
              HasSubstr("same server as master 1"));
}

TEST_F(TlsTest, OneServerByTlsAndByItsUnixSocketCastsOneVote) {
  RedisServer::Config both = TlsConfig();
  both.unixsocket = true;
  auto shared = MustStart(both);
  auto other = MustStart(TlsConfig());
  ASSERT_TRUE(shared != nullptr && other != nullptr);
  auto client = MakeClient(
      TlsClientOptions({shared->TlsUri(), shared->UnixUri(), other->TlsUri()}));
  ASSERT_NE(client, nullptr);
  absl::StatusOr<Lock> lock = client->TryAcquire(kJob, absl::Seconds(30));
  ASSERT_TRUE(lock.ok()) << lock.status();
  {
    auto c = other->Client();
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE((*c)->Command({"DEL", lock->key()}).ok());
  }
  EXPECT_FALSE(client->Extend(*lock, absl::Seconds(30)).ok());
  EXPECT_THAT(client->Health()[1].grants_count.message(),
              HasSubstr("same server as master 1"));
}

// --- faults over TLS --------------------------------------------------------

// The restart guard's scene (tests/engine/restart_guard_test.cc) with every
// master on TLS: A holds the lock on exactly masters 0-2, master 2 is SIGKILLed
// and restarted without its data; B's grant from it must not count.
TEST_F(TlsTest, ATlsMasterKilledAndRestartedEmptyIsHeldBackByTheGuard) {
  RedisServer::Config config = TlsConfig();
  config.persistence = RedisServer::Persistence::kNone;
  auto started = RedisCluster::Start(5, config);
  ASSERT_TRUE(started.ok()) << started.status();
  RedisCluster& cluster = **started;
  Options options = TlsClientOptions(cluster.Uris());
  options.restart_guard = true;
  auto a = MakeClient(options);
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(
      a->Acquire("warmup", Waiting(absl::Seconds(5), absl::Seconds(1))).ok());
  // INFO's uptime is in whole seconds: let the deployment age past that.
  absl::SleepFor(absl::Milliseconds(2200));
  for (int i : {3, 4}) ASSERT_TRUE(cluster.server(i).Stop().ok());
  absl::StatusOr<Lock> held = a->TryAcquire(kJob, absl::Seconds(30));
  for (int i : {3, 4}) ASSERT_TRUE(cluster.server(i).Continue().ok());
  ASSERT_TRUE(held.ok()) << held.status();
  absl::SleepFor(absl::Milliseconds(50));  // The queued SETs on 3 and 4 ran.
  for (int i : {3, 4}) {
    auto c = cluster.Client(i);
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE((*c)->Command({"DEL", held->key()}).ok());
  }
  const int tls_port = cluster.server(2).tls_port();
  ASSERT_TRUE(cluster.server(2).Restart().ok());
  ASSERT_EQ(cluster.server(2).tls_port(), tls_port);

  auto b = MakeClient(options);
  ASSERT_NE(b, nullptr);
  absl::StatusOr<Lock> second = b->TryAcquire(kJob, absl::Seconds(30));
  testing::ExpectTheRebornMastersGrantDidNotCount(
      second,
      testing::HealthOnceMarked([&] { return b->Health(); },
                                [] { absl::SleepFor(absl::Milliseconds(10)); },
                                /*i=*/2),
      /*reborn=*/2);
  // The reborn master was reached over TLS again, on its old port.
  EXPECT_EQ(b->Health()[2].transport, "tls");
  EXPECT_TRUE(b->Health()[2].connected);
  EXPECT_TRUE(held->valid());
}

TEST_F(TlsTest, TheFaultProxyInFrontOfATlsMasterDelaysThenResetsIt) {
  auto started = RedisCluster::Start(3, TlsConfig());
  ASSERT_TRUE(started.ok()) << started.status();
  RedisCluster& cluster = **started;
  auto proxy =
      FaultProxy::Start({.upstream_port = cluster.server(2).tls_port()});
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  // The certificate has IP:127.0.0.1, which the proxy's address is too.
  std::vector<std::string> uris = cluster.Uris();
  uris[2] = absl::StrCat("rediss://127.0.0.1:", (*proxy)->port());
  Options options = TlsClientOptions(uris);
  options.request_timeout = absl::Milliseconds(600);
  auto client = MakeClient(options);
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Acquire("warmup", Waiting(absl::Seconds(5))).ok());

  // Latency: the TLS records still arrive whole, only late.
  (*proxy)->SetLatency(absl::Milliseconds(100), absl::Milliseconds(100));
  absl::StatusOr<Lock> lock = client->TryAcquire(kJob, absl::Seconds(30));
  ASSERT_TRUE(lock.ok()) << lock.status();
  ASSERT_TRUE(client->Release(*lock, {.wait_for_all_masters = true}).ok());
  bool saw_slow_grant = false;
  lock = client->TryAcquire(kJob, absl::Seconds(30));
  ASSERT_TRUE(lock.ok()) << lock.status();
  for (const MasterVote& vote : lock->votes()) {
    if (vote.master == absl::StrCat("127.0.0.1:", (*proxy)->port()) &&
        vote.kind == MasterVote::Kind::kGranted) {
      saw_slow_grant = true;
      EXPECT_GE(vote.latency, absl::Milliseconds(150)) << vote.latency;
    }
  }
  // Decided at quorum (two fast masters): the slow grant may be pending;
  // the key is there either way once it lands.
  EXPECT_TRUE(saw_slow_grant || Eventually([&] {
                return Value(cluster.server(2), lock->key()) == lock->token();
              }));
  ASSERT_TRUE(client->Release(*lock, {.wait_for_all_masters = true}).ok());

  // A reset: the master's connection is lost, the others carry on, and it
  // comes back over TLS.
  (*proxy)->SetLatency(absl::ZeroDuration(), absl::ZeroDuration());
  (*proxy)->ResetAllConnections();
  lock = client->Acquire(kJob, Waiting(absl::Seconds(5)));
  ASSERT_TRUE(lock.ok()) << lock.status();
  ASSERT_TRUE(client->Release(*lock).ok());
  EXPECT_GE((*proxy)->counters().resets, 1);
  // Connected again over TLS: a new connection accepted by the proxy, not
  // the old one still reported as connected because the reset has not been
  // read yet (a loaded machine showed that: "never reconnected").
  ASSERT_TRUE(Eventually([&] {
    const MasterHealth h = client->Health()[2];
    return (*proxy)->counters().accepted >= 2 && h.connected && !h.tls.empty();
  })) << "never reconnected: "
      << client->Health()[2].last_error;
  lock = client->Acquire(kJob, Waiting(absl::Seconds(5)));
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_TRUE(Eventually([&] {
    return Value(cluster.server(2), lock->key()) == lock->token();
  })) << "the reconnected master never got the lock";
}

TEST_F(TlsTest, AWaiterIsWokenOverTlsByTheRelease) {
  auto started = RedisCluster::Start(3, TlsConfig());
  ASSERT_TRUE(started.ok()) << started.status();
  RedisCluster& cluster = **started;
  auto holder = MakeClient(TlsClientOptions(cluster.Uris()));
  ASSERT_NE(holder, nullptr);
  absl::StatusOr<Lock> held =
      holder->Acquire("report", Waiting(absl::Seconds(5)));
  ASSERT_TRUE(held.ok()) << held.status();

  // A waiter that would poll only every 30s.
  Options waiter_options = TlsClientOptions(cluster.Uris());
  waiter_options.retry.min_delay = absl::Seconds(30);
  waiter_options.retry.max_delay = absl::Seconds(30);
  auto waiter = MakeClient(waiter_options);
  ASSERT_NE(waiter, nullptr);
  std::optional<absl::StatusOr<Lock>> woken;
  std::thread waiting(
      [&] { woken = waiter->Acquire("report", Waiting(absl::Seconds(20))); });
  // Its first attempt lost and it subscribed on every master (over TLS: the
  // waiter has no other way to them).
  const std::string channel = LockKey(Options(), "report");
  const bool subscribed = Eventually([&] {
    for (int i = 0; i < cluster.size(); ++i) {
      auto c = cluster.Client(i);
      if (!c.ok()) return false;
      auto n = (*c)->Command({"PUBSUB", "NUMSUB", channel});
      if (!n.ok() || n->elements.size() != 2 || n->elements[1].integer < 1) {
        return false;
      }
    }
    return true;
  });
  absl::SleepFor(absl::Milliseconds(100));  // Its check once subscribed.
  const absl::Time released = absl::Now();
  EXPECT_TRUE(holder->Release(*held).ok());
  waiting.join();
  ASSERT_TRUE(subscribed) << "the waiter never subscribed over TLS";
  ASSERT_TRUE(woken.has_value());
  ASSERT_TRUE(woken->ok()) << woken->status();
  EXPECT_LT(absl::Now() - released, absl::Seconds(5)) << "polled, not woken";
  for (const MasterHealth& h : testing::AwaitEveryMasterHeard(*waiter)) {
    EXPECT_GE(h.subscriber_messages, 1) << h.master;
    EXPECT_EQ(h.transport, "tls") << h.master;
  }
}

}  // namespace
}  // namespace redlock
