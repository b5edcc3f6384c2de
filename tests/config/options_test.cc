// Copyright 2026 The redlock Authors.

#include "redlock/options.h"

#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "src/config/options_internal.h"
#include "tests/support/status_assertions.h"

namespace redlock {
namespace {

using ::redlock::testing::IsInvalidArgument;

// ---------------------------------------------------------------- Quorum

TEST(ParseQuorumTest, ParsesMajority) {
  absl::StatusOr<Quorum> quorum = ParseQuorum("majority");
  ASSERT_TRUE(quorum.ok()) << quorum.status();
  EXPECT_EQ(*quorum, Quorum::kMajority);
}

TEST(ParseQuorumTest, ParsesUnanimous) {
  absl::StatusOr<Quorum> quorum = ParseQuorum("unanimous");
  ASSERT_TRUE(quorum.ok()) << quorum.status();
  EXPECT_EQ(*quorum, Quorum::kUnanimous);
}

TEST(ParseQuorumTest, RejectsUnknownValueNamingItAndTheAcceptedOnes) {
  EXPECT_TRUE(IsInvalidArgument(ParseQuorum("most").status(),
                                {"\"most\"", "majority", "unanimous"}));
}

TEST(ParseQuorumTest, RejectsEmptyAndOtherCase) {
  EXPECT_TRUE(IsInvalidArgument(ParseQuorum("").status(), {"\"\""}));
  EXPECT_TRUE(
      IsInvalidArgument(ParseQuorum("Majority").status(), {"\"Majority\""}));
}

TEST(QuorumNameTest, NamesRoundTripThroughParseQuorum) {
  for (Quorum quorum : {Quorum::kMajority, Quorum::kUnanimous}) {
    absl::StatusOr<Quorum> parsed = ParseQuorum(QuorumName(quorum));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, quorum);
  }
  EXPECT_EQ(QuorumName(Quorum::kMajority), "majority");
  EXPECT_EQ(QuorumName(Quorum::kUnanimous), "unanimous");
}

// ---------------------------------------------------------- MasterAddress

TEST(MasterAddressTest, NameIsHostAndPortWhenDbIsZero) {
  MasterAddress address;
  address.host = "10.0.0.1";
  address.port = 7001;
  EXPECT_EQ(address.Name(), "10.0.0.1:7001");
}

TEST(MasterAddressTest, NameAppendsNonZeroDb) {
  MasterAddress address;
  address.host = "10.0.0.1";
  address.db = 3;
  EXPECT_EQ(address.Name(), "10.0.0.1:6379/3");
}

TEST(MasterAddressTest, NameBracketsIpv6) {
  MasterAddress address;
  address.host = "::1";
  EXPECT_EQ(address.Name(), "[::1]:6379");
}

TEST(MasterAddressTest, NameNeverShowsCredentials) {
  MasterAddress address;
  address.host = "10.0.0.1";
  address.user = "alice";
  address.password = "hunter2";
  address.has_password = true;
  EXPECT_EQ(address.Name(), "10.0.0.1:6379");
}

// ---------------------------------------------------- ParseMasterUri: accepts

MasterAddress ParseOk(absl::string_view uri) {
  absl::StatusOr<MasterAddress> address = ParseMasterUri(uri);
  EXPECT_TRUE(address.ok()) << uri << ": " << address.status();
  return address.ok() ? *address : MasterAddress();
}

TEST(ParseMasterUriTest, AcceptsIpv4HostAndPort) {
  MasterAddress address = ParseOk("redis://127.0.0.1:7001");
  EXPECT_EQ(address.host, "127.0.0.1");
  EXPECT_EQ(address.port, 7001);
  EXPECT_EQ(address.db, 0);
  EXPECT_FALSE(address.has_password);
  EXPECT_EQ(address.user, "");
  EXPECT_EQ(address.password, "");
}

TEST(ParseMasterUriTest, DefaultsPortTo6379AndDbToZero) {
  MasterAddress address = ParseOk("redis://10.1.2.3");
  EXPECT_EQ(address.host, "10.1.2.3");
  EXPECT_EQ(address.port, 6379);
  EXPECT_EQ(address.db, 0);
}

TEST(ParseMasterUriTest, AcceptsDbWithAndWithoutPort) {
  MasterAddress with_port = ParseOk("redis://10.1.2.3:7000/5");
  EXPECT_EQ(with_port.port, 7000);
  EXPECT_EQ(with_port.db, 5);
  MasterAddress without_port = ParseOk("redis://10.1.2.3/12");
  EXPECT_EQ(without_port.port, 6379);
  EXPECT_EQ(without_port.db, 12);
  EXPECT_EQ(ParseOk("redis://10.1.2.3/0").db, 0);
}

TEST(ParseMasterUriTest, AcceptsDbAboveFifteen) {
  EXPECT_EQ(ParseOk("redis://10.1.2.3/16").db, 16);
}

TEST(ParseMasterUriTest, AcceptsLargestPortAndDb) {
  MasterAddress address = ParseOk("redis://10.1.2.3:65535/2147483647");
  EXPECT_EQ(address.port, 65535);
  EXPECT_EQ(address.db, 2147483647);
  EXPECT_EQ(ParseOk("redis://10.1.2.3:1").port, 1);
}

TEST(ParseMasterUriTest, AcceptsBracketedIpv6AndStoresItWithoutBrackets) {
  MasterAddress address = ParseOk("redis://[::1]:7002/1");
  EXPECT_EQ(address.host, "::1");
  EXPECT_EQ(address.port, 7002);
  EXPECT_EQ(address.db, 1);
  EXPECT_EQ(address.Name(), "[::1]:7002/1");
}

TEST(ParseMasterUriTest, AcceptsBracketedIpv6WithoutPort) {
  MasterAddress address = ParseOk("redis://[2001:db8::7]");
  EXPECT_EQ(address.host, "2001:db8::7");
  EXPECT_EQ(address.port, 6379);
  EXPECT_EQ(ParseOk("redis://[fe80::1]/4").db, 4);
}

TEST(ParseMasterUriTest, AcceptsHostNamesAsWritten) {
  EXPECT_EQ(ParseOk("redis://db1:6379").host, "db1");
  EXPECT_EQ(ParseOk("redis://Redis-1.example.com").host, "Redis-1.example.com");
  EXPECT_EQ(ParseOk("redis://redis.example.com.:7000").host,
            "redis.example.com.");
}

TEST(ParseMasterUriTest, KeepsLocalhostAsWritten) {
  EXPECT_EQ(ParseOk("redis://localhost:7000").host, "localhost");
}

TEST(ParseMasterUriTest, AcceptsPasswordAlone) {
  MasterAddress address = ParseOk("redis://:s3cret@10.0.0.1:7000");
  EXPECT_TRUE(address.has_password);
  EXPECT_EQ(address.user, "");
  EXPECT_EQ(address.password, "s3cret");
  EXPECT_EQ(address.host, "10.0.0.1");
  EXPECT_EQ(address.port, 7000);
}

TEST(ParseMasterUriTest, AcceptsAclUserAndPassword) {
  MasterAddress address = ParseOk("redis://locker:s3cret@[::1]:7000/2");
  EXPECT_TRUE(address.has_password);
  EXPECT_EQ(address.user, "locker");
  EXPECT_EQ(address.password, "s3cret");
  EXPECT_EQ(address.host, "::1");
  EXPECT_EQ(address.db, 2);
}

TEST(ParseMasterUriTest, PercentDecodesUserAndPassword) {
  MasterAddress address =
      ParseOk("redis://us%65r%3Aname:p%40ss%2Fw%25rd%20%7e@10.0.0.1");
  EXPECT_EQ(address.user, "user:name");
  EXPECT_EQ(address.password, "p@ss/w%rd ~");
}

TEST(ParseMasterUriTest, DecodesEscapesToArbitraryBytes) {
  MasterAddress address = ParseOk("redis://:%00%ff%C3%A9@10.0.0.1");
  EXPECT_EQ(address.password, std::string("\x00\xff\xc3\xa9", 4));
}

TEST(ParseMasterUriTest, KeepsColonsAfterTheFirstInThePassword) {
  EXPECT_EQ(ParseOk("redis://u:a:b:c@10.0.0.1").password, "a:b:c");
}

TEST(ParseMasterUriTest, AcceptsSubDelimsInPasswordUnencoded) {
  EXPECT_EQ(ParseOk("redis://:!$&'()*+,;=-._~@10.0.0.1").password,
            "!$&'()*+,;=-._~");
}

// ---------------------------------------------------- ParseMasterUri: rejects

TEST(ParseMasterUriTest, RejectsEmptyString) {
  EXPECT_TRUE(IsInvalidArgument(ParseMasterUri("").status(),
                                {"master URI \"\"", "empty"}));
}

TEST(ParseMasterUriTest, RejectsMissingScheme) {
  EXPECT_TRUE(IsInvalidArgument(ParseMasterUri("127.0.0.1:6379").status(),
                                {"\"127.0.0.1:6379\"", "redis://"}));
  EXPECT_TRUE(IsInvalidArgument(ParseMasterUri("//127.0.0.1:6379").status(),
                                {"redis://"}));
}

TEST(ParseMasterUriTest, RejectsOtherSchemesNamingThem) {
  EXPECT_TRUE(IsInvalidArgument(
      ParseMasterUri("http://127.0.0.1:6379").status(), {"\"http://\""}));
  EXPECT_TRUE(IsInvalidArgument(ParseMasterUri("tcp://127.0.0.1:6379").status(),
                                {"\"tcp://\""}));
}

TEST(ParseMasterUriTest, RejectsSchemeInOtherCase) {
  EXPECT_TRUE(IsInvalidArgument(
      ParseMasterUri("REDIS://127.0.0.1:6379").status(), {"redis://"}));
}

TEST(ParseMasterUriTest, RejectsEmptyHost) {
  for (absl::string_view uri : {"redis://", "redis://:6379", "redis:///0",
                                "redis://:pw@", "redis://u:pw@:6379"}) {
    EXPECT_TRUE(
        IsInvalidArgument(ParseMasterUri(uri).status(), {"host is empty"}))
        << uri;
  }
}

TEST(ParseMasterUriTest, RejectsPortZero) {
  EXPECT_TRUE(IsInvalidArgument(ParseMasterUri("redis://127.0.0.1:0").status(),
                                {"port must be 1-65535"}));
}

TEST(ParseMasterUriTest, RejectsPortAboveRange) {
  absl::Status status = ParseMasterUri("redis://127.0.0.1:99999").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "master URI \"redis://127.0.0.1:99999\": port must be 1-65535");
  EXPECT_TRUE(IsInvalidArgument(
      ParseMasterUri("redis://127.0.0.1:65536").status(), {"port"}));
  EXPECT_TRUE(IsInvalidArgument(
      ParseMasterUri("redis://127.0.0.1:99999999999999999999999").status(),
      {"port"}));
}

TEST(ParseMasterUriTest, RejectsNonNumericPort) {
  for (absl::string_view uri :
       {"redis://127.0.0.1:redis", "redis://127.0.0.1:", "redis://127.0.0.1:+1",
        "redis://127.0.0.1:-1", "redis://127.0.0.1:0x10",
        "redis://[::1]:", "redis://[::1]:abc"}) {
    EXPECT_TRUE(IsInvalidArgument(ParseMasterUri(uri).status(), {"port"}))
        << uri;
  }
}

TEST(ParseMasterUriTest, RejectsNonNumericDb) {
  for (absl::string_view uri :
       {"redis://127.0.0.1/", "redis://127.0.0.1/one", "redis://127.0.0.1/-1",
        "redis://127.0.0.1/+1", "redis://127.0.0.1:6379/1.5"}) {
    EXPECT_TRUE(IsInvalidArgument(ParseMasterUri(uri).status(), {"db"})) << uri;
  }
}

TEST(ParseMasterUriTest, RejectsDbAboveIntRange) {
  EXPECT_TRUE(IsInvalidArgument(
      ParseMasterUri("redis://127.0.0.1/2147483648").status(), {"db"}));
}

TEST(ParseMasterUriTest, RejectsTrailingGarbage) {
  for (absl::string_view uri :
       {"redis://127.0.0.1:6379x", "redis://127.0.0.1:6379/0/extra",
        "redis://127.0.0.1/0x", "redis://[::1]x", "redis://[::1]:6379]"}) {
    EXPECT_EQ(ParseMasterUri(uri).status().code(),
              absl::StatusCode::kInvalidArgument)
        << uri;
  }
}

TEST(ParseMasterUriTest, RejectsUnknownQueryParameters) {
  // ?member=, ?db= and ?tls_name= are the only ones (tls_options_test.cc).
  EXPECT_TRUE(IsInvalidArgument(
      ParseMasterUri("redis://127.0.0.1:6379?timeout=1").status(),
      {"timeout"}));
}

TEST(ParseMasterUriTest, RejectsFragment) {
  EXPECT_TRUE(IsInvalidArgument(
      ParseMasterUri("redis://127.0.0.1:6379#main").status(), {"fragment"}));
}

TEST(ParseMasterUriTest, RejectsSpaces) {
  for (absl::string_view uri :
       {"redis://127.0.0.1 :6379", " redis://127.0.0.1", "redis://127.0.0.1 ",
        "redis://127.0.0.1:6379\n", "redis://:pass word@127.0.0.1",
        "redis://127.0.0.1:6379/ 1"}) {
    EXPECT_EQ(ParseMasterUri(uri).status().code(),
              absl::StatusCode::kInvalidArgument)
        << uri;
  }
}

TEST(ParseMasterUriTest, RejectsUserWithoutPassword) {
  EXPECT_TRUE(
      IsInvalidArgument(ParseMasterUri("redis://locker@127.0.0.1").status(),
                        {"needs", "password"}));
  EXPECT_TRUE(IsInvalidArgument(ParseMasterUri("redis://@127.0.0.1").status(),
                                {"password"}));
}

TEST(ParseMasterUriTest, RejectsEmptyPassword) {
  EXPECT_TRUE(IsInvalidArgument(ParseMasterUri("redis://:@127.0.0.1").status(),
                                {"password is empty"}));
  EXPECT_TRUE(IsInvalidArgument(
      ParseMasterUri("redis://locker:@127.0.0.1").status(), {"password"}));
}

TEST(ParseMasterUriTest, RejectsBadPercentEscapes) {
  for (absl::string_view uri :
       {"redis://:ab%@127.0.0.1", "redis://:ab%4@127.0.0.1",
        "redis://:%zz@127.0.0.1", "redis://:%4g@127.0.0.1"}) {
    EXPECT_TRUE(IsInvalidArgument(ParseMasterUri(uri).status(),
                                  {"password", "percent escape"}))
        << uri;
  }
  EXPECT_TRUE(
      IsInvalidArgument(ParseMasterUri("redis://us%er:pw@127.0.0.1").status(),
                        {"user", "percent escape"}));
}

TEST(ParseMasterUriTest, RejectsCharactersThatMustBeEncoded) {
  for (absl::string_view uri :
       {"redis://:p@ss@127.0.0.1", "redis://:pa/ss@127.0.0.1",
        "redis://:pa?ss@127.0.0.1", "redis://:pa#ss@127.0.0.1",
        "redis://:pa[ss@127.0.0.1", "redis://:pa\"ss@127.0.0.1"}) {
    EXPECT_TRUE(IsInvalidArgument(ParseMasterUri(uri).status(),
                                  {"password", "percent-encoded"}))
        << uri;
  }
  EXPECT_TRUE(
      IsInvalidArgument(ParseMasterUri("redis://us/er:pw@127.0.0.1").status(),
                        {"user", "percent-encoded"}));
}

TEST(ParseMasterUriTest, RejectsUnbracketedIpv6) {
  EXPECT_TRUE(
      IsInvalidArgument(ParseMasterUri("redis://::1").status(), {"brackets"}));
  EXPECT_TRUE(IsInvalidArgument(
      ParseMasterUri("redis://2001:db8::1:6379").status(), {"brackets"}));
}

TEST(ParseMasterUriTest, RejectsInvalidIpv6InBrackets) {
  for (absl::string_view uri :
       {"redis://[]:6379", "redis://[::g]", "redis://[127.0.0.1]",
        "redis://[db1]", "redis://[fe80::1%eth0]"}) {
    EXPECT_TRUE(IsInvalidArgument(ParseMasterUri(uri).status(), {"IPv6"}))
        << uri;
  }
}

TEST(ParseMasterUriTest, RejectsUnclosedBracket) {
  EXPECT_TRUE(
      IsInvalidArgument(ParseMasterUri("redis://[::1:6379").status(), {"']'"}));
}

TEST(ParseMasterUriTest, RejectsMalformedIpv4) {
  for (absl::string_view uri :
       {"redis://256.0.0.1", "redis://1.2.3", "redis://1.2.3.4.5",
        "redis://127.0.0.01", "redis://12345"}) {
    EXPECT_TRUE(IsInvalidArgument(ParseMasterUri(uri).status(), {"IPv4"}))
        << uri;
  }
}

TEST(ParseMasterUriTest, RejectsCharactersNotAllowedInHostNames) {
  for (absl::string_view uri :
       {"redis://db_1", "redis://db!", "redis://db%31", "redis://d\xc3\xa9"}) {
    EXPECT_TRUE(IsInvalidArgument(ParseMasterUri(uri).status(), {"host"}))
        << uri;
  }
}

TEST(ParseMasterUriTest, RejectsHostNamesWithEmptyLabels) {
  for (absl::string_view uri : {"redis://a..b", "redis://.a", "redis://."}) {
    EXPECT_TRUE(IsInvalidArgument(ParseMasterUri(uri).status(), {"host"}))
        << uri;
  }
}

TEST(ParseMasterUriTest, RejectsOverlongHostName) {
  std::string host(254, 'a');
  EXPECT_TRUE(IsInvalidArgument(ParseMasterUri("redis://" + host).status(),
                                {"longer than 253"}));
}

TEST(ParseMasterUriTest, ErrorsShowTheUriWithThePasswordMasked) {
  EXPECT_TRUE(IsInvalidArgument(
      ParseMasterUri("redis://locker:hunter2@127.0.0.1:0").status(),
      {"master URI \"redis://locker:***@127.0.0.1:0\"", "port"}));
  EXPECT_TRUE(
      IsInvalidArgument(ParseMasterUri("redis://:hunter2@127.0.0.1/x").status(),
                        {"master URI \"redis://:***@127.0.0.1/x\"", "db"}));
}

// Each of these fails somewhere different, before, in or after the password.
TEST(ParseMasterUriTest, ErrorsNeverContainThePassword) {
  // "hunter2" encoded in various ways, plus one raw secret that must be
  // hidden although it is written where a user name goes.
  const std::vector<std::string> uris = {
      "redis://:hunter2@127.0.0.1:0",
      "redis://:hunter2@127.0.0.1:99999",
      "redis://:hunter2@127.0.0.1/db",
      "redis://:hunter2@127.0.0.1?x=1",
      "redis://:hunter2@127.0.0.1#frag",
      "redis://:hunter2@",
      "redis://:hunter2@db_1",
      "redis://:hunter2@[::1",
      "redis://:hunter2@::1",
      "redis://:hunter2@127.0.0.1 ",
      "redis://u:hunt%65r2@127.0.0.1:0",
      "redis://u:hunter2%@127.0.0.1",
      "redis://u:hunter2%zz@127.0.0.1",
      "redis://u:hunt@er2@127.0.0.1",
      "redis://u:hunter2/@127.0.0.1",
      "redis://u:hunter2@127.0.0.1@",
      "redis://hunter2@127.0.0.1",
      "redis://hunter2@127.0.0.1:0",
      "rediss://:hunter2@127.0.0.1:0",
      "unix://:hunter2@relative.sock",
      "http://u:hunter2@127.0.0.1",
      ":hunter2@127.0.0.1",
      "u:hunter2@127.0.0.1",
      "redis:/:hunter2@127.0.0.1",
      "redis//:hunter2@127.0.0.1",
      ":hunter2@127.0.0.1://",
      "redis://x://u:hunter2@127.0.0.1",
  };
  for (const std::string& uri : uris) {
    absl::Status status = ParseMasterUri(uri).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << uri;
    EXPECT_FALSE(absl::StrContains(status.message(), "hunter2"))
        << uri << " -> " << status.message();
    EXPECT_FALSE(absl::StrContains(status.message(), "hunt%65r2"))
        << uri << " -> " << status.message();
    EXPECT_FALSE(absl::StrContains(status.message(), "er2"))
        << uri << " -> " << status.message();
  }
}

TEST(ParseMasterUriTest, ErrorsEscapeUnprintableCharacters) {
  absl::Status status = ParseMasterUri("redis://127.0.0.1\n").status();
  EXPECT_TRUE(IsInvalidArgument(status, {"\"redis://127.0.0.1\\n\""}));
}

// ------------------------------------------------------------ ParseMasters

Options WithMasters(std::vector<std::string> masters) {
  Options options;
  options.masters = std::move(masters);
  return options;
}

TEST(ParseMastersTest, ReturnsAddressesInOrder) {
  absl::StatusOr<std::vector<MasterAddress>> masters = internal::ParseMasters(
      WithMasters({"redis://10.0.0.2:7001", "redis://[::1]:7002/1",
                   "redis://:pw@10.0.0.1"}),
      /*require_numeric_hosts=*/true);
  ASSERT_TRUE(masters.ok()) << masters.status();
  ASSERT_EQ(masters->size(), 3u);
  EXPECT_EQ((*masters)[0].Name(), "10.0.0.2:7001");
  EXPECT_EQ((*masters)[1].Name(), "[::1]:7002/1");
  EXPECT_EQ((*masters)[2].Name(), "10.0.0.1:6379");
  EXPECT_EQ((*masters)[2].password, "pw");
}

TEST(ParseMastersTest, RejectsNoMasters) {
  for (bool numeric : {false, true}) {
    EXPECT_TRUE(IsInvalidArgument(
        internal::ParseMasters(Options(), numeric).status(), {"masters"}));
  }
}

TEST(ParseMastersTest, NamesTheEntryThatDoesNotParse) {
  EXPECT_TRUE(IsInvalidArgument(
      internal::ParseMasters(
          WithMasters({"redis://10.0.0.1", "redis://10.0.0.2:0"}), false)
          .status(),
      {"masters[1]", "\"redis://10.0.0.2:0\"", "port"}));
}

TEST(ParseMastersTest, RejectsHostNamesWhenNumericHostsAreRequired) {
  absl::Status status =
      internal::ParseMasters(
          WithMasters({"redis://10.0.0.1", "redis://:pw@db1:6379"}), true)
          .status();
  EXPECT_TRUE(IsInvalidArgument(
      status, {"masters[1]", "\"redis://:***@db1:6379\"", "host \"db1\"",
               "not a numeric address", "ResolveMasterHosts"}));
  EXPECT_FALSE(absl::StrContains(status.message(), "pw@"));
}

TEST(ParseMastersTest, AcceptsHostNamesWhenNumericHostsAreNotRequired) {
  absl::StatusOr<std::vector<MasterAddress>> masters =
      internal::ParseMasters(WithMasters({"redis://db1:6379"}), false);
  ASSERT_TRUE(masters.ok()) << masters.status();
  EXPECT_EQ((*masters)[0].host, "db1");
}

TEST(ParseMastersTest, TranslatesLocalhostTo127001) {
  for (bool numeric : {false, true}) {
    absl::StatusOr<std::vector<MasterAddress>> masters = internal::ParseMasters(
        WithMasters({"redis://localhost:7001", "redis://LocalHost:7002/2"}),
        numeric);
    ASSERT_TRUE(masters.ok()) << masters.status();
    EXPECT_EQ((*masters)[0].host, "127.0.0.1");
    EXPECT_EQ((*masters)[0].port, 7001);
    EXPECT_EQ((*masters)[1].Name(), "127.0.0.1:7002/2");
  }
}

TEST(ParseMastersTest, RejectsSameMasterTwiceNamingBothEntries) {
  EXPECT_TRUE(IsInvalidArgument(
      internal::ParseMasters(
          WithMasters({"redis://10.0.0.1:7001", "redis://10.0.0.2:7001",
                       "redis://10.0.0.1:7001"}),
          false)
          .status(),
      {"masters[0] and masters[2]", "10.0.0.1:7001"}));
}

TEST(ParseMastersTest, DuplicatesCompareParsedHostPortAndDb) {
  const std::vector<std::vector<std::string>> duplicates = {
      {"redis://10.0.0.1", "redis://10.0.0.1:6379"},
      {"redis://10.0.0.1/0", "redis://10.0.0.1:6379"},
      {"redis://:a@10.0.0.1", "redis://u:b@10.0.0.1"},
      {"redis://localhost:7001", "redis://127.0.0.1:7001"},
      {"redis://[::1]", "redis://[0:0:0:0:0:0:0:1]"},
      {"redis://[2001:DB8::1]", "redis://[2001:db8::1]"},
      {"redis://DB1.example.com", "redis://db1.example.com."},
  };
  for (const std::vector<std::string>& masters : duplicates) {
    EXPECT_TRUE(IsInvalidArgument(
        internal::ParseMasters(WithMasters(masters), false).status(),
        {"masters[0] and masters[1]"}))
        << masters[0] << " " << masters[1];
  }
}

TEST(ParseMastersTest, AcceptsSameHostWithOtherPort) {
  absl::StatusOr<std::vector<MasterAddress>> masters = internal::ParseMasters(
      WithMasters({"redis://10.0.0.1:7001", "redis://10.0.0.1:7002"}), true);
  EXPECT_TRUE(masters.ok()) << masters.status();
}

TEST(ParseMastersTest, RejectsTwoDatabasesOfOneServer) {
  // One server, one failure domain: it must not cast two votes.
  EXPECT_TRUE(IsInvalidArgument(
      internal::ParseMasters(
          WithMasters({"redis://10.0.0.1:7001", "redis://10.0.0.1:7001/1"}),
          true)
          .status(),
      {"masters[0] and masters[1]", "different databases"}));
}

TEST(IsNumericHostTest, AcceptsIpv4AndIpv6) {
  EXPECT_TRUE(internal::IsNumericHost("127.0.0.1"));
  EXPECT_TRUE(internal::IsNumericHost("0.0.0.0"));
  EXPECT_TRUE(internal::IsNumericHost("::1"));
  EXPECT_TRUE(internal::IsNumericHost("2001:db8::7"));
  EXPECT_TRUE(internal::IsNumericHost("::ffff:10.0.0.1"));
}

TEST(IsNumericHostTest, RejectsNamesAndMalformedAddresses) {
  EXPECT_FALSE(internal::IsNumericHost(""));
  EXPECT_FALSE(internal::IsNumericHost("localhost"));
  EXPECT_FALSE(internal::IsNumericHost("db1"));
  EXPECT_FALSE(internal::IsNumericHost("[::1]"));
  EXPECT_FALSE(internal::IsNumericHost("256.0.0.1"));
  EXPECT_FALSE(internal::IsNumericHost("1.2.3"));
}

// --------------------------------------------------------- ValidateOptions

Options Valid() { return WithMasters({"redis://127.0.0.1:7001"}); }

TEST(ValidateOptionsTest, DefaultsAreValidWithOneMaster) {
  EXPECT_TRUE(ValidateOptions(Valid()).ok()) << ValidateOptions(Valid());
}

TEST(ValidateOptionsTest, AcceptsHostNames) {
  Options options = WithMasters(
      {"redis://db1:6379", "redis://db2.example.com", "redis://localhost"});
  EXPECT_TRUE(ValidateOptions(options).ok()) << ValidateOptions(options);
}

TEST(ValidateOptionsTest, RejectsNoMasters) {
  EXPECT_TRUE(IsInvalidArgument(ValidateOptions(Options()), {"masters"}));
}

TEST(ValidateOptionsTest, RejectsUnparsableMaster) {
  Options options =
      WithMasters({"redis://127.0.0.1:7001", "redis://127.0.0.1:70020"});
  EXPECT_TRUE(
      IsInvalidArgument(ValidateOptions(options), {"masters[1]", "port"}));
}

TEST(ValidateOptionsTest, RejectsDuplicateMaster) {
  Options options =
      WithMasters({"redis://127.0.0.1:7001", "redis://localhost:7001"});
  EXPECT_TRUE(IsInvalidArgument(ValidateOptions(options),
                                {"masters[0] and masters[1]"}));
}

TEST(ValidateOptionsTest, RejectsNonPositiveDefaultTtl) {
  Options options = Valid();
  options.default_ttl = absl::ZeroDuration();
  EXPECT_TRUE(
      IsInvalidArgument(ValidateOptions(options), {"default_ttl", "positive"}));
  options.default_ttl = absl::Milliseconds(-1);
  EXPECT_TRUE(IsInvalidArgument(ValidateOptions(options), {"default_ttl"}));
}

TEST(ValidateOptionsTest, RejectsDefaultTtlAboveMaxTtl) {
  Options options = Valid();
  options.max_ttl = absl::Seconds(30);
  options.default_ttl = absl::Seconds(31);
  EXPECT_TRUE(
      IsInvalidArgument(ValidateOptions(options), {"default_ttl", "max_ttl"}));
  options.default_ttl = absl::Seconds(30);
  EXPECT_TRUE(ValidateOptions(options).ok()) << ValidateOptions(options);
}

TEST(ValidateOptionsTest, RejectsNonPositiveMaxTtl) {
  Options options = Valid();
  options.max_ttl = absl::ZeroDuration();
  EXPECT_TRUE(
      IsInvalidArgument(ValidateOptions(options), {"max_ttl", "positive"}));
}

TEST(ValidateOptionsTest, RejectsMaxTtlAbove24Hours) {
  Options options = Valid();
  options.max_ttl = absl::Hours(24) + absl::Milliseconds(1);
  EXPECT_TRUE(IsInvalidArgument(ValidateOptions(options), {"max_ttl", "24h"}));
  options.max_ttl = absl::Hours(24);
  EXPECT_TRUE(ValidateOptions(options).ok()) << ValidateOptions(options);
}

TEST(ValidateOptionsTest, RejectsNegativeDriftFactor) {
  Options options = Valid();
  options.drift_factor = -0.01;
  EXPECT_TRUE(IsInvalidArgument(ValidateOptions(options), {"drift_factor"}));
  options.drift_factor = 0;
  EXPECT_TRUE(ValidateOptions(options).ok()) << ValidateOptions(options);
}

TEST(ValidateOptionsTest, RejectsDriftFactorOfOneHalfOrMore) {
  Options options = Valid();
  options.drift_factor = 0.5;
  EXPECT_TRUE(IsInvalidArgument(ValidateOptions(options), {"drift_factor"}));
  options.drift_factor = 0.49;
  EXPECT_TRUE(ValidateOptions(options).ok()) << ValidateOptions(options);
}

TEST(ValidateOptionsTest, RejectsNanDriftFactor) {
  Options options = Valid();
  options.drift_factor = std::nan("");
  EXPECT_TRUE(IsInvalidArgument(ValidateOptions(options), {"drift_factor"}));
}

TEST(ValidateOptionsTest, RejectsNegativeMinValidity) {
  Options options = Valid();
  options.min_validity = absl::Milliseconds(-1);
  EXPECT_TRUE(IsInvalidArgument(ValidateOptions(options), {"min_validity"}));
  options.min_validity = absl::Milliseconds(100);
  EXPECT_TRUE(ValidateOptions(options).ok()) << ValidateOptions(options);
}

TEST(ValidateOptionsTest, RejectsNonPositiveRequestTimeout) {
  Options options = Valid();
  options.request_timeout = absl::ZeroDuration();
  EXPECT_TRUE(IsInvalidArgument(ValidateOptions(options),
                                {"request_timeout", "positive"}));
}

TEST(ValidateOptionsTest, RejectsRequestTimeoutNotShorterThanDefaultTtl) {
  Options options = Valid();
  options.request_timeout = options.default_ttl;
  options.stalled_connection_timeout = options.default_ttl;
  EXPECT_TRUE(IsInvalidArgument(ValidateOptions(options),
                                {"request_timeout", "default_ttl",
                                 "timeouts must be shorter than the TTL"}));
}

TEST(ValidateOptionsTest, RejectsNonPositiveConnectTimeout) {
  Options options = Valid();
  options.connect_timeout = absl::Milliseconds(-5);
  EXPECT_TRUE(IsInvalidArgument(ValidateOptions(options),
                                {"connect_timeout", "positive"}));
}

TEST(ValidateOptionsTest, RejectsConnectTimeoutNotShorterThanDefaultTtl) {
  Options options = Valid();
  options.connect_timeout = options.default_ttl + absl::Seconds(1);
  EXPECT_TRUE(IsInvalidArgument(ValidateOptions(options),
                                {"connect_timeout", "default_ttl",
                                 "timeouts must be shorter than the TTL"}));
}

TEST(ValidateOptionsTest, RejectsStalledConnectionTimeoutBelowRequestTimeout) {
  Options options = Valid();
  options.stalled_connection_timeout =
      options.request_timeout - absl::Milliseconds(1);
  EXPECT_TRUE(
      IsInvalidArgument(ValidateOptions(options),
                        {"stalled_connection_timeout", "request_timeout"}));
  options.stalled_connection_timeout = options.request_timeout;
  EXPECT_TRUE(ValidateOptions(options).ok()) << ValidateOptions(options);
}

TEST(ValidateOptionsTest, RejectsNegativeRetryMinDelay) {
  Options options = Valid();
  options.retry.min_delay = absl::Milliseconds(-1);
  EXPECT_TRUE(IsInvalidArgument(ValidateOptions(options), {"retry.min_delay"}));
  options.retry.min_delay = absl::ZeroDuration();
  EXPECT_TRUE(ValidateOptions(options).ok()) << ValidateOptions(options);
}

TEST(ValidateOptionsTest, RejectsRetryMaxDelayBelowMinDelay) {
  Options options = Valid();
  options.retry.min_delay = absl::Milliseconds(40);
  options.retry.max_delay = absl::Milliseconds(39);
  EXPECT_TRUE(IsInvalidArgument(ValidateOptions(options),
                                {"retry.max_delay", "retry.min_delay"}));
  options.retry.max_delay = absl::Milliseconds(40);
  EXPECT_TRUE(ValidateOptions(options).ok()) << ValidateOptions(options);
}

TEST(ValidateOptionsTest, RejectsNegativeRetryMaxAttempts) {
  Options options = Valid();
  options.retry.max_attempts = -1;
  EXPECT_TRUE(
      IsInvalidArgument(ValidateOptions(options), {"retry.max_attempts"}));
}

TEST(ValidateOptionsTest, RejectsNonPositiveReconnectInitial) {
  Options options = Valid();
  options.reconnect.initial = absl::ZeroDuration();
  EXPECT_TRUE(IsInvalidArgument(ValidateOptions(options),
                                {"reconnect.initial", "positive"}));
}

TEST(ValidateOptionsTest, RejectsReconnectMaxBelowInitial) {
  Options options = Valid();
  options.reconnect.initial = absl::Seconds(2);
  options.reconnect.max = absl::Seconds(1);
  EXPECT_TRUE(IsInvalidArgument(ValidateOptions(options),
                                {"reconnect.max", "reconnect.initial"}));
}

TEST(ValidateOptionsTest, RejectsReconnectMultiplierBelowOne) {
  Options options = Valid();
  options.reconnect.multiplier = 0.99;
  EXPECT_TRUE(
      IsInvalidArgument(ValidateOptions(options), {"reconnect.multiplier"}));
  options.reconnect.multiplier = 1;
  EXPECT_TRUE(ValidateOptions(options).ok()) << ValidateOptions(options);
}

TEST(ValidateOptionsTest, RejectsNanOrInfiniteReconnectMultiplier) {
  Options options = Valid();
  options.reconnect.multiplier = std::nan("");
  EXPECT_TRUE(
      IsInvalidArgument(ValidateOptions(options), {"reconnect.multiplier"}));
  options.reconnect.multiplier = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(
      IsInvalidArgument(ValidateOptions(options), {"reconnect.multiplier"}));
}

TEST(ValidateOptionsTest, RejectsKeyPrefixLongerThan1024Bytes) {
  Options options = Valid();
  options.key_prefix = std::string(1025, 'k');
  EXPECT_TRUE(
      IsInvalidArgument(ValidateOptions(options), {"key_prefix", "1024"}));
}

TEST(ValidateOptionsTest, AcceptsAnyBytesInKeyPrefixUpTo1024) {
  Options options = Valid();
  options.key_prefix = std::string(1024, '\0');
  options.key_prefix[1] = '\xff';
  options.key_prefix[2] = ' ';
  EXPECT_TRUE(ValidateOptions(options).ok()) << ValidateOptions(options);
  options.key_prefix = "";
  EXPECT_TRUE(ValidateOptions(options).ok()) << ValidateOptions(options);
}

TEST(ValidateOptionsTest, RejectsUnknownQuorumValue) {
  Options options = Valid();
  options.quorum = static_cast<Quorum>(7);
  EXPECT_TRUE(IsInvalidArgument(ValidateOptions(options), {"quorum"}));
}

// An infinite duration would pass most ordering checks but cannot become a
// timer; each field must say so itself.
TEST(ValidateOptionsTest, RejectsInfiniteDurationsNamingTheField) {
  struct Case {
    const char* field;
    void (*set)(Options&);
  };
  for (const Case& c : {
           Case{"default_ttl",
                [](Options& o) { o.default_ttl = absl::InfiniteDuration(); }},
           Case{"max_ttl",
                [](Options& o) { o.max_ttl = absl::InfiniteDuration(); }},
           Case{"min_validity",
                [](Options& o) { o.min_validity = absl::InfiniteDuration(); }},
           Case{"stalled_connection_timeout",
                [](Options& o) {
                  o.stalled_connection_timeout = absl::InfiniteDuration();
                }},
           Case{"retry.min_delay",
                [](Options& o) {
                  o.retry.min_delay = absl::InfiniteDuration();
                  o.retry.max_delay = absl::InfiniteDuration();
                }},
           Case{"retry.max_delay",
                [](Options& o) {
                  o.retry.max_delay = absl::InfiniteDuration();
                }},
           Case{"reconnect.max",
                [](Options& o) { o.reconnect.max = absl::InfiniteDuration(); }},
           Case{"request_timeout",
                [](Options& o) {
                  o.request_timeout = -absl::InfiniteDuration();
                }},
       }) {
    Options options = Valid();
    c.set(options);
    EXPECT_TRUE(IsInvalidArgument(ValidateOptions(options), {c.field}))
        << c.field;
  }
}

// ------------------------------------------------------ ResolveMasterHosts

TEST(ResolveMasterHostsTest, RewritesLocalhostKeepingCredentialsPortAndDb) {
  Options options = WithMasters(
      {"redis://locker:s3cret@localhost:7001/3", "redis://localhost"});
  ASSERT_TRUE(ResolveMasterHosts(options).ok());
  EXPECT_EQ(options.masters[0], "redis://locker:s3cret@127.0.0.1:7001/3");
  EXPECT_EQ(options.masters[1], "redis://127.0.0.1:6379");
}

TEST(ResolveMasterHostsTest, LeavesNumericHostsExactlyAsWritten) {
  const std::vector<std::string> masters = {"redis://:p%41ss@10.0.0.1",
                                            "redis://[::1]:7002/0"};
  Options options = WithMasters(masters);
  ASSERT_TRUE(ResolveMasterHosts(options).ok());
  EXPECT_EQ(options.masters, masters);
}

TEST(ResolveMasterHostsTest, ReencodesCredentialsToTheSameBytes) {
  Options options =
      WithMasters({"redis://us%20er:p%40ss:w!rd%00@localhost:7001"});
  ASSERT_TRUE(ResolveMasterHosts(options).ok());
  EXPECT_EQ(options.masters[0],
            "redis://us%20er:p%40ss%3Aw%21rd%00@127.0.0.1:7001");
  absl::StatusOr<MasterAddress> address = ParseMasterUri(options.masters[0]);
  ASSERT_TRUE(address.ok()) << address.status();
  EXPECT_EQ(address->user, "us er");
  EXPECT_EQ(address->password, std::string("p@ss:w!rd\0", 10));
}

TEST(ResolveMasterHostsTest, ResultPassesTheEnginesNumericHostCheck) {
  Options options = WithMasters({"redis://localhost:7001", "redis://[::1]"});
  ASSERT_TRUE(ResolveMasterHosts(options).ok());
  absl::StatusOr<std::vector<MasterAddress>> masters =
      internal::ParseMasters(options, /*require_numeric_hosts=*/true);
  EXPECT_TRUE(masters.ok()) << masters.status();
}

TEST(ResolveMasterHostsTest, FailsOnNameThatDoesNotResolveLeavingOptionsAlone) {
  // .invalid is reserved (RFC 2606) and never resolves.
  const std::vector<std::string> masters = {
      "redis://localhost:7001", "redis://:hunter2@no-such-master.invalid:7002"};
  Options options = WithMasters(masters);
  absl::Status status = ResolveMasterHosts(options);
  EXPECT_TRUE(IsInvalidArgument(
      status,
      {"masters[1]", "host \"no-such-master.invalid\"", "does not resolve"}));
  EXPECT_FALSE(absl::StrContains(status.message(), "hunter2"));
  EXPECT_EQ(options.masters, masters);
}

TEST(ResolveMasterHostsTest, ReportsUriThatDoesNotParse) {
  Options options = WithMasters({"redis://localhost", "redis://:pw@db1:0"});
  absl::Status status = ResolveMasterHosts(options);
  EXPECT_TRUE(IsInvalidArgument(status, {"masters[1]", "port"}));
  EXPECT_FALSE(absl::StrContains(status.message(), "pw@"));
  EXPECT_EQ(options.masters[0], "redis://localhost");
}

}  // namespace
}  // namespace redlock

namespace redlock {
namespace {

TEST(MasterAddressUriTest, RoundTripsThroughParseMasterUri) {
  for (const char* uri :
       {"redis://127.0.0.1:6379", "redis://:p%40ss%2Fw0rd@10.0.0.1:7001/3",
        "redis://alice:s3cret@[::1]:7002", "redis://db1.example.com:6380"}) {
    absl::StatusOr<MasterAddress> address = ParseMasterUri(uri);
    ASSERT_TRUE(address.ok()) << uri << ": " << address.status();
    absl::StatusOr<MasterAddress> again = ParseMasterUri(address->Uri());
    ASSERT_TRUE(again.ok()) << address->Uri() << ": " << again.status();
    EXPECT_EQ(again->host, address->host);
    EXPECT_EQ(again->port, address->port);
    EXPECT_EQ(again->db, address->db);
    EXPECT_EQ(again->user, address->user);
    EXPECT_EQ(again->password, address->password);
    EXPECT_EQ(again->has_password, address->has_password);
  }
}

}  // namespace
}  // namespace redlock

namespace redlock {
namespace {

TEST(MemberNameTest, AQueryNamesTheMasterInTheMembershipAndRoundTrips) {
  absl::StatusOr<MasterAddress> a =
      ParseMasterUri("redis://u:p%40w@127.0.0.1:7001/2?member=redis-a%3A6379");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->member, "redis-a:6379");
  EXPECT_EQ(a->MemberName(), "redis-a:6379");
  EXPECT_EQ(a->password, "p@w");
  EXPECT_EQ(a->db, 2);
  absl::StatusOr<MasterAddress> again = ParseMasterUri(a->Uri());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->member, "redis-a:6379");
  // A member name may hold '@' (percent-encoded, as in the user info)
  // without being taken for the user info.
  absl::StatusOr<MasterAddress> at =
      ParseMasterUri("redis://127.0.0.1:7001?member=a%40b");
  ASSERT_TRUE(at.ok()) << at.status();
  EXPECT_EQ(at->member, "a@b");
  EXPECT_FALSE(at->has_password);
  // Without one, the address is the name.
  EXPECT_EQ(ParseMasterUri("redis://127.0.0.1:7001")->MemberName(),
            "127.0.0.1:7001");
}

TEST(MemberNameTest, BadMemberNamesAndOtherQueriesAreRefused) {
  for (const char* uri :
       {"redis://127.0.0.1:7001?member=", "redis://127.0.0.1:7001?member=a,b",
        "redis://127.0.0.1:7001?member=a%3Bb", "redis://127.0.0.1:7001?other=1",
        "redis://127.0.0.1:7001?member=a?member=b;"}) {
    absl::StatusOr<MasterAddress> a = ParseMasterUri(uri);
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument) << uri;
  }
}

TEST(MemberNameTest, TwoMastersOfOneMemberNameAreRefused) {
  Options options;
  options.masters = {"redis://127.0.0.1:7001?member=a",
                     "redis://127.0.0.1:7002?member=a"};
  const absl::Status status = ValidateOptions(options);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("one member name"), std::string::npos)
      << status;
}

}  // namespace
}  // namespace redlock
