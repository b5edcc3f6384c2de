// Copyright 2026 The redlock Authors.
//
// OpenSSL is loaded when something needs it, not at start-up: a process
// whose masters are all plain never loads libssl.so.3 (about 1 ms of CPU
// for every new process, docs/perf-notes/cli-handoff.md), and the first TLS
// context or version report loads it once, with every function the library
// calls. gtest_discover_tests runs each test in a process of its own, so
// each starts with OpenSSL not loaded; this binary links no OpenSSL.

#include "src/transport/openssl_library.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "redlock/redlock.h"
#include "redlock/version.h"
#include "src/transport/tls.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_options.h"

namespace redlock::internal {
namespace {

TEST(OpenSslLibraryTest, AClientOfPlainMastersNeverLoadsOpenSsl) {
  ASSERT_FALSE(OpenSslIsLoadedForTesting()) << "loaded at start-up";
  auto cluster = testing::RedisCluster::Start(3);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  std::vector<std::string> uris;
  for (int i = 0; i < (*cluster)->size(); ++i) {
    uris.push_back((*cluster)->server(i).Uri());
  }
  Options options = testing::TestOptions(uris);
  options.on_warning = [](absl::string_view) {};
  auto client = Redlock::Create(options);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<Lock> lock = (*client)->TryAcquire("job", absl::Seconds(5));
  ASSERT_TRUE(lock.ok()) << lock.status();
  ASSERT_TRUE((*client)->Release(*lock).ok());
  EXPECT_FALSE((*client)->Health().empty());
  EXPECT_FALSE(OpenSslIsLoadedForTesting());
}

TEST(OpenSslLibraryTest, TheFirstTlsContextLoadsItOnceWithEveryFunction) {
  ASSERT_FALSE(OpenSslIsLoadedForTesting()) << "loaded at start-up";
  TlsOptions tls;
  tls.insecure = true;
  absl::StatusOr<std::shared_ptr<TlsContext>> context = TlsContext::Create(tls);
  ASSERT_TRUE(context.ok()) << context.status();
  EXPECT_TRUE(OpenSslIsLoadedForTesting());
  absl::StatusOr<const OpenSsl*> first = LoadOpenSsl();
  absl::StatusOr<const OpenSsl*> again = LoadOpenSsl();
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*first, *again);
  EXPECT_EQ(&(*context)->ssl(), *first);
#define REDLOCK_EXPECT_FOUND(name) EXPECT_NE((*first)->name, nullptr) << #name;
  REDLOCK_OPENSSL_FUNCTIONS(REDLOCK_EXPECT_FOUND)
#undef REDLOCK_EXPECT_FOUND
  // A session of it works as far as a ClientHello.
  TlsSession session(*context, "localhost");
  ASSERT_TRUE(session.Init().ok());
  std::string hello;
  absl::StatusOr<bool> done = session.Handshake("", &hello);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_FALSE(*done);
  ASSERT_FALSE(hello.empty());
  EXPECT_EQ(hello[0], 0x16);  // A TLS handshake record.
}

TEST(OpenSslLibraryTest, TheVersionReportLoadsIt) {
  ASSERT_FALSE(OpenSslIsLoadedForTesting()) << "loaded at start-up";
  const DependencyVersions versions = GetDependencyVersions();
  EXPECT_TRUE(absl::StartsWith(versions.openssl, "OpenSSL 3"))
      << versions.openssl;
  EXPECT_TRUE(OpenSslIsLoadedForTesting());
}

}  // namespace
}  // namespace redlock::internal
