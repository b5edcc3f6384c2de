// Copyright 2026 The redlock Authors.
//
// The `redlock` tool over TLS (rediss://), against real masters with
// certificates made at test time.

#include "tests/tools/cli_fixture.h"

namespace redlock {
namespace {

using namespace ::redlock::cli_testing;  // NOLINT: the shared fixture.

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

}  // namespace
}  // namespace redlock
