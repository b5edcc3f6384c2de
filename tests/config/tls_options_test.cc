// Copyright 2026 The redlock Authors.
//
// Master URIs for TLS (rediss://) and Unix sockets (unix://), their query
// parameters (?db=, ?member=, ?tls_name=), and what ResolveMasterHosts()
// keeps of a TLS master's host name. Pure parsing: no server.

#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "redlock/options.h"
#include "tests/support/status_assertions.h"

namespace redlock {
namespace {

using Transport = MasterAddress::Transport;

using ::redlock::testing::IsInvalidArgument;

MasterAddress MustParse(absl::string_view uri) {
  absl::StatusOr<MasterAddress> address = ParseMasterUri(uri);
  EXPECT_TRUE(address.ok()) << uri << ": " << address.status();
  return address.ok() ? *address : MasterAddress();
}

TEST(TlsUriTest, RedissIsTlsWithCredentialsPortAndDb) {
  const MasterAddress a = MustParse("rediss://alice:s3cret@127.0.0.1:6380/2");
  EXPECT_EQ(a.transport, Transport::kTls);
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 6380);
  EXPECT_EQ(a.db, 2);
  EXPECT_EQ(a.user, "alice");
  EXPECT_EQ(a.password, "s3cret");
  EXPECT_TRUE(a.has_password);
  EXPECT_EQ(a.Name(), "127.0.0.1:6380/2");
  EXPECT_EQ(a.TlsName(), "127.0.0.1");
}

TEST(TlsUriTest, RedissDefaultsPortAndDbLikeRedis) {
  const MasterAddress a = MustParse("rediss://10.0.0.1");
  EXPECT_EQ(a.transport, Transport::kTls);
  EXPECT_EQ(a.port, 6379);
  EXPECT_EQ(a.db, 0);
  EXPECT_FALSE(a.has_password);
  EXPECT_EQ(a.Name(), "10.0.0.1:6379");
}

TEST(TlsUriTest, PlainRedisStaysTcp) {
  EXPECT_EQ(MustParse("redis://127.0.0.1:7001").transport, Transport::kTcp);
}

TEST(TlsUriTest, AHostNameAsWrittenIsTheNameChecked) {
  const MasterAddress a = MustParse("rediss://db1.example.com:6380");
  EXPECT_EQ(a.host, "db1.example.com");
  EXPECT_EQ(a.TlsName(), "db1.example.com");
}

TEST(TlsUriTest, TlsNameOverridesTheHostForTheCertificate) {
  const MasterAddress a =
      MustParse("rediss://127.0.0.1:7001?tls_name=redis-a.example");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.tls_name, "redis-a.example");
  EXPECT_EQ(a.TlsName(), "redis-a.example");
  // The name a master goes by in results is still its address.
  EXPECT_EQ(a.Name(), "127.0.0.1:7001");
}

TEST(TlsUriTest, QueryParametersCombineInAnyOrder) {
  for (absl::string_view uri :
       {"rediss://:pw@127.0.0.1:7001?member=m1&db=3&tls_name=redis-a",
        "rediss://:pw@127.0.0.1:7001?tls_name=redis-a&member=m1&db=3"}) {
    const MasterAddress a = MustParse(uri);
    EXPECT_EQ(a.transport, Transport::kTls) << uri;
    EXPECT_EQ(a.member, "m1") << uri;
    EXPECT_EQ(a.db, 3) << uri;
    EXPECT_EQ(a.tls_name, "redis-a") << uri;
    EXPECT_EQ(a.password, "pw") << uri;
  }
}

TEST(TlsUriTest, DbMayComeAsAQueryParameterOnTcpToo) {
  EXPECT_EQ(MustParse("redis://127.0.0.1:7001?db=4").db, 4);
}

TEST(UnixUriTest, AUnixSocketHasAPathAndNoHostOrPort) {
  const MasterAddress a = MustParse("unix:///var/run/redis/redis.sock");
  EXPECT_EQ(a.transport, Transport::kUnix);
  EXPECT_EQ(a.path, "/var/run/redis/redis.sock");
  EXPECT_EQ(a.host, "");
  EXPECT_EQ(a.port, 0);
  EXPECT_EQ(a.db, 0);
  EXPECT_FALSE(a.has_password);
  EXPECT_EQ(a.Name(), "unix:/var/run/redis/redis.sock");
}

TEST(UnixUriTest, CredentialsDbAndMemberComeWithTheSocket) {
  const MasterAddress a =
      MustParse("unix://locker:p%40w@/tmp/redis.sock?db=3&member=a");
  EXPECT_EQ(a.transport, Transport::kUnix);
  EXPECT_EQ(a.path, "/tmp/redis.sock");
  EXPECT_EQ(a.user, "locker");
  EXPECT_EQ(a.password, "p@w");
  EXPECT_EQ(a.db, 3);
  EXPECT_EQ(a.member, "a");
  EXPECT_EQ(a.Name(), "unix:/tmp/redis.sock/3");
  EXPECT_EQ(a.MemberName(), "a");
  EXPECT_FALSE(absl::StrContains(a.Name(), "p@w"));
}

TEST(UnixUriTest, APasswordAloneIsAccepted) {
  const MasterAddress a = MustParse("unix://:hunter2@/tmp/redis.sock");
  EXPECT_EQ(a.user, "");
  EXPECT_EQ(a.password, "hunter2");
  EXPECT_TRUE(a.has_password);
}

TEST(TransportUriTest, BadUrisAreRefusedNamingTheUri) {
  for (absl::string_view uri : {
           "unix://",                            // no path
           "unix://tmp/redis.sock",              // not absolute
           "unix:///tmp/redis.sock?db=x",        // db not a number
           "unix:///tmp/redis.sock?db=-1",       // negative db
           "unix:///tmp/redis.sock?db=",         // empty db
           "rediss://127.0.0.1:7001?tls_name=",  // empty name
           "rediss://127.0.0.1:7001?db=1&db=2",  // db twice
           "rediss://127.0.0.1:7001/1?db=2",     // db twice
           "rediss://127.0.0.1:0",               // port 0
           "rediss://",                          // no host
           "rediss://127.0.0.1:7001?timeout=1",  // unknown parameter
       }) {
    absl::StatusOr<MasterAddress> a = ParseMasterUri(uri);
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument)
        << uri << ": " << (a.ok() ? a->Uri() : a.status().ToString());
  }
}

TEST(TransportUriTest, ErrorsNameWhatIsWrong) {
  EXPECT_TRUE(IsInvalidArgument(
      ParseMasterUri("rediss://127.0.0.1:7001?timeout=1").status(),
      {"timeout"}));
  EXPECT_TRUE(IsInvalidArgument(
      ParseMasterUri("unix:///tmp/redis.sock?db=x").status(), {"db"}));
}

TEST(TransportUriTest, ErrorsNeverContainThePassword) {
  for (absl::string_view uri :
       {"unix://:hunter2@tmp/redis.sock", "unix://u:hunter2@/tmp/r.sock?db=x",
        "rediss://:hunter2@127.0.0.1:0", "rediss://u:hunter2@127.0.0.1?x=1"}) {
    absl::StatusOr<MasterAddress> a = ParseMasterUri(uri);
    ASSERT_FALSE(a.ok()) << uri;
    EXPECT_FALSE(absl::StrContains(a.status().message(), "hunter2"))
        << a.status();
  }
}

TEST(TransportUriTest, UriRoundTripsEveryField) {
  for (absl::string_view uri :
       {"rediss://127.0.0.1:6380", "rediss://u%20x:p%40ss%2Fw@[::1]:7002/5",
        "rediss://:pw@10.0.0.1:7001?tls_name=redis-a.example&member=a",
        "rediss://db1.example.com", "unix:///tmp/redis.sock",
        "unix://:p%3Aw@/run/redis/r.sock?db=7&member=m",
        "redis://127.0.0.1:7001?db=2"}) {
    const MasterAddress a = MustParse(uri);
    absl::StatusOr<MasterAddress> again = ParseMasterUri(a.Uri());
    ASSERT_TRUE(again.ok())
        << uri << " -> " << a.Uri() << ": " << again.status();
    SCOPED_TRACE(absl::StrCat(uri, " -> ", a.Uri()));
    EXPECT_EQ(again->transport, a.transport);
    EXPECT_EQ(again->host, a.host);
    EXPECT_EQ(again->port, a.port);
    EXPECT_EQ(again->path, a.path);
    EXPECT_EQ(again->tls_name, a.tls_name);
    EXPECT_EQ(again->TlsName(), a.TlsName());
    EXPECT_EQ(again->db, a.db);
    EXPECT_EQ(again->user, a.user);
    EXPECT_EQ(again->password, a.password);
    EXPECT_EQ(again->has_password, a.has_password);
    EXPECT_EQ(again->member, a.member);
    EXPECT_EQ(again->Name(), a.Name());
  }
}

TEST(TlsResolveTest, ResolvingKeepsTheHostNameAsTheTlsName) {
  Options options;
  options.masters = {"rediss://:pw@localhost:7001/2"};
  ASSERT_TRUE(ResolveMasterHosts(options).ok());
  const MasterAddress a = MustParse(options.masters[0]);
  EXPECT_EQ(a.transport, Transport::kTls);
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 7001);
  EXPECT_EQ(a.db, 2);
  EXPECT_EQ(a.password, "pw");
  EXPECT_EQ(a.TlsName(), "localhost") << options.masters[0];
}

TEST(TlsResolveTest, AnExplicitTlsNameSurvivesResolving) {
  Options options;
  options.masters = {"rediss://localhost:7001?tls_name=redis-a.example"};
  ASSERT_TRUE(ResolveMasterHosts(options).ok());
  const MasterAddress a = MustParse(options.masters[0]);
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.TlsName(), "redis-a.example") << options.masters[0];
}

TEST(TlsResolveTest, UnixSocketsAndNumericHostsAreLeftAsWritten) {
  const std::vector<std::string> masters = {
      "unix:///tmp/redis.sock?db=1", "rediss://127.0.0.1:7001",
      "rediss://127.0.0.1:7002?tls_name=redis-b"};
  Options options;
  options.masters = masters;
  ASSERT_TRUE(ResolveMasterHosts(options).ok());
  ASSERT_EQ(options.masters.size(), masters.size());
  for (size_t i = 0; i < masters.size(); ++i) {
    const MasterAddress before = MustParse(masters[i]);
    const MasterAddress after = MustParse(options.masters[i]);
    EXPECT_EQ(after.transport, before.transport) << masters[i];
    EXPECT_EQ(after.host, before.host) << masters[i];
    EXPECT_EQ(after.path, before.path) << masters[i];
    EXPECT_EQ(after.TlsName(), before.TlsName()) << masters[i];
  }
}

TEST(TlsResolveTest, AMixedDeploymentValidates) {
  Options options;
  options.masters = {"rediss://127.0.0.1:7001", "redis://127.0.0.1:7002",
                     "unix:///tmp/redis-3.sock"};
  EXPECT_TRUE(ValidateOptions(options).ok()) << ValidateOptions(options);
}

TEST(TlsResolveTest, OneSocketTwiceIsOneMasterTwice) {
  Options options;
  options.masters = {"unix:///tmp/redis.sock", "unix:///tmp/redis.sock",
                     "redis://127.0.0.1:7002"};
  EXPECT_EQ(ValidateOptions(options).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace redlock
