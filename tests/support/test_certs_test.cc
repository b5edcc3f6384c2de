// Copyright 2026 The redlock Authors.
//
// The TLS and Unix-socket parts of the fixture, checked from outside the
// library: TestCerts' certificates are what they claim to be (openssl
// verify says so, and says why for the bad ones), and a RedisServer with TLS
// or a Unix socket serves what its URIs name (redis-cli over TLS, with and
// without a client certificate; RedisClient over the Unix socket).

#include "tests/support/test_certs.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/redis_client.h"
#include "tests/support/redis_server.h"

namespace redlock::testing {
namespace {

using ::testing::HasSubstr;

class TestCertsTest : public ::testing::Test {
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

  // `openssl verify` of `cert` against `ca` with `extra` options: its
  // output, or the error with its output.
  static absl::StatusOr<std::string> Verify(
      const std::string& ca, const std::string& cert,
      std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"verify", "-CAfile", ca};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(cert);
    return certs_->RunOpenssl(args);
  }

  // redis-cli over TLS to `server`, PING; `extra` adds --cert/--key.
  static absl::StatusOr<std::string> TlsPing(
      const RedisServer& server, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {
        "redis-cli", "--tls",     "--cacert", certs_->ca_file(),
        "-h",        "127.0.0.1", "-p",       absl::StrCat(server.tls_port())};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back("PING");
    return certs_->RunProgram(argv, absl::Seconds(5));
  }

  static RedisServer::Config TlsConfig(
      RedisServer::Config::Tls::ClientAuth auth =
          RedisServer::Config::Tls::ClientAuth::kNo) {
    RedisServer::Config config;
    config.tls.enabled = true;
    config.tls.cert_file = certs_->server_cert();
    config.tls.key_file = certs_->server_key();
    config.tls.ca_file = certs_->ca_file();
    config.tls.client_auth = auth;
    return config;
  }

  static TestCerts* certs_;
};

TestCerts* TestCertsTest::certs_ = nullptr;

TEST_F(TestCertsTest, TheServerCertificateChainsToTheCaForBothNames) {
  EXPECT_TRUE(Verify(certs_->ca_file(), certs_->server_cert(),
                     {"-verify_hostname", "localhost"})
                  .ok());
  EXPECT_TRUE(Verify(certs_->ca_file(), certs_->server_cert(),
                     {"-verify_ip", "127.0.0.1", "-purpose", "sslserver"})
                  .ok());
}

TEST_F(TestCertsTest, TheClientCertificateIsForClients) {
  EXPECT_TRUE(Verify(certs_->ca_file(), certs_->client_cert(),
                     {"-purpose", "sslclient"})
                  .ok());
  EXPECT_FALSE(Verify(certs_->ca_file(), certs_->client_cert(),
                      {"-purpose", "sslserver"})
                   .ok());
}

TEST_F(TestCertsTest, TheWrongCaSignedNoneOfThem) {
  for (const std::string& cert : {certs_->server_cert(), certs_->client_cert(),
                                  certs_->other_name_cert()}) {
    absl::StatusOr<std::string> verified =
        Verify(certs_->wrong_ca_file(), cert);
    ASSERT_FALSE(verified.ok()) << cert;
    EXPECT_THAT(verified.status().message(),
                HasSubstr("unable to get local issuer certificate"));
  }
}

TEST_F(TestCertsTest, TheExpiredCertificateIsExpired) {
  absl::StatusOr<std::string> verified =
      Verify(certs_->ca_file(), certs_->expired_cert());
  ASSERT_FALSE(verified.ok());
  EXPECT_THAT(verified.status().message(),
              HasSubstr("certificate has expired"));
  // Only its dates are wrong: checked as of mid-2020 it verifies.
  EXPECT_TRUE(
      Verify(certs_->ca_file(), certs_->expired_cert(), {"-no_check_time"})
          .ok());
}

TEST_F(TestCertsTest, TheOtherNameCertificateIsForOtherExampleOnly) {
  EXPECT_TRUE(Verify(certs_->ca_file(), certs_->other_name_cert(),
                     {"-verify_hostname", "other.example"})
                  .ok());
  absl::StatusOr<std::string> by_ip =
      Verify(certs_->ca_file(), certs_->other_name_cert(),
             {"-verify_ip", "127.0.0.1"});
  ASSERT_FALSE(by_ip.ok());
  EXPECT_THAT(by_ip.status().message(), HasSubstr("IP address mismatch"));
  EXPECT_FALSE(Verify(certs_->ca_file(), certs_->other_name_cert(),
                      {"-verify_hostname", "localhost"})
                   .ok());
}

TEST_F(TestCertsTest, NoPrivateKeyOfTheWrongCaIsKept) {
  EXPECT_FALSE(
      certs_->RunProgram({"test", "-e", certs_->dir() + "/wrong-ca.key"}).ok());
  EXPECT_TRUE(certs_->RunProgram({"test", "-s", certs_->server_key()}).ok());
}

TEST_F(TestCertsTest, ATlsServerAnswersOverTlsAndTheFixtureOverItsSocket) {
  auto server = RedisServer::Start(TlsConfig());
  ASSERT_TRUE(server.ok()) << server.status();
  RedisServer& s = **server;
  EXPECT_EQ(s.port(), 0);
  ASSERT_NE(s.tls_port(), 0);
  EXPECT_EQ(s.Uri(), absl::StrCat("rediss://127.0.0.1:", s.tls_port()));
  EXPECT_EQ(s.Address(), absl::StrCat("127.0.0.1:", s.tls_port()));
  EXPECT_EQ(s.UnixUri(), "unix://" + s.dir() + "/redis.sock");
  absl::StatusOr<std::string> pong = TlsPing(s);
  ASSERT_TRUE(pong.ok()) << pong.status();
  EXPECT_THAT(*pong, HasSubstr("PONG"));
  // Plain RESP on the TLS port gets nowhere.
  auto plain =
      RedisClient::Connect("127.0.0.1", s.tls_port(), absl::Milliseconds(500));
  if (plain.ok()) EXPECT_FALSE((*plain)->Ping().ok());
  // The fixture's own client goes over the Unix socket.
  auto client = s.Client();
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_TRUE((*client)->Ping().ok());
}

TEST_F(TestCertsTest, ATlsServerRestartsOnItsTlsPort) {
  auto server = RedisServer::Start(TlsConfig());
  ASSERT_TRUE(server.ok()) << server.status();
  const int tls_port = (*server)->tls_port();
  ASSERT_TRUE((*server)->Restart().ok());
  EXPECT_EQ((*server)->tls_port(), tls_port);
  absl::StatusOr<std::string> pong = TlsPing(**server);
  ASSERT_TRUE(pong.ok()) << pong.status();
  EXPECT_THAT(*pong, HasSubstr("PONG"));
}

TEST_F(TestCertsTest, ATlsServerCanKeepItsPlainPortToo) {
  RedisServer::Config config = TlsConfig();
  config.tls.plain_port_too = true;
  auto server = RedisServer::Start(config);
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_NE((*server)->port(), 0);
  ASSERT_NE((*server)->tls_port(), 0);
  EXPECT_NE((*server)->port(), (*server)->tls_port());
  EXPECT_EQ((*server)->Uri(),
            absl::StrCat("redis://127.0.0.1:", (*server)->port()));
  EXPECT_EQ((*server)->TlsUri(),
            absl::StrCat("rediss://127.0.0.1:", (*server)->tls_port()));
  EXPECT_EQ((*server)->UnixUri(), "");
  auto client = (*server)->Client();
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_TRUE((*client)->Ping().ok());
  EXPECT_TRUE(TlsPing(**server).ok());
}

TEST_F(TestCertsTest, AFixedTlsPortTakenByAnotherServerFails) {
  auto first = RedisServer::Start(TlsConfig());
  ASSERT_TRUE(first.ok()) << first.status();
  RedisServer::Config config = TlsConfig();
  config.tls.port = (*first)->tls_port();
  auto second = RedisServer::Start(config);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable)
      << second.status();
  // The first one is untouched.
  EXPECT_TRUE(TlsPing(**first).ok());
}

TEST_F(TestCertsTest, ARequiredClientCertificateIsRequired) {
  auto server =
      RedisServer::Start(TlsConfig(RedisServer::Config::Tls::ClientAuth::kYes));
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_FALSE(TlsPing(**server).ok()) << "no client certificate, yet PONG";
  absl::StatusOr<std::string> pong =
      TlsPing(**server,
              {"--cert", certs_->client_cert(), "--key", certs_->client_key()});
  ASSERT_TRUE(pong.ok()) << pong.status();
  EXPECT_THAT(*pong, HasSubstr("PONG"));
}

TEST_F(TestCertsTest, AnExpiredServerCertificateFailsRedisCli) {
  RedisServer::Config config = TlsConfig();
  config.tls.cert_file = certs_->expired_cert();
  auto server = RedisServer::Start(config);
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<std::string> pong = TlsPing(**server);
  EXPECT_FALSE(pong.ok());
}

TEST(RedisServerUnixSocketTest, APlainServerAlsoServesItsUnixSocket) {
  RedisServer::Config config;
  config.unixsocket = true;
  config.requirepass = "s3cret/pw";
  auto server = RedisServer::Start(config);
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string path = (*server)->unix_socket_path();
  EXPECT_EQ((*server)->UnixUri(), "unix://:s3cret%2Fpw@" + path);
  EXPECT_EQ((*server)->UnixAddress(), "unix:" + path);
  auto over_socket =
      RedisClient::ConnectUnix(path, absl::Seconds(2), "s3cret/pw");
  ASSERT_TRUE(over_socket.ok()) << over_socket.status();
  ASSERT_TRUE((*over_socket)->Set("k", "v").ok());
  auto over_tcp = (*server)->Client();
  ASSERT_TRUE(over_tcp.ok()) << over_tcp.status();
  auto value = (*over_tcp)->Get("k");
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(*value, "v");
}

}  // namespace
}  // namespace redlock::testing
