// Copyright 2026 The redlock Authors.
//
// A test fixture on three redis-servers of the test's own (skipped against
// external masters: these tests read the masters' keys), with clients made
// from testing::TestOptions().

#ifndef REDLOCK_TESTS_SUPPORT_OWN_MASTERS_TEST_H_
#define REDLOCK_TESTS_SUPPORT_OWN_MASTERS_TEST_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "redlock/redlock.h"
#include "tests/support/redis_client.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_options.h"

namespace redlock::testing {

class OwnMastersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::UsingExternalMasters()) {
      GTEST_SKIP() << "reads its own masters' keys";
    }
    auto cluster = RedisCluster::Start(3);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
  }

  // A blocking client of the three masters (or of `uris`).
  std::unique_ptr<Redlock> MakeClient(std::vector<std::string> uris = {}) {
    if (uris.empty()) uris = cluster_->Uris();
    auto client = Redlock::Create(TestOptions(std::move(uris)));
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  // `argv` sent to master `i` directly; an empty Reply (and a failure) if it
  // could not be.
  Reply On(int i, std::vector<std::string> argv) {
    auto client = cluster_->Client(i);
    EXPECT_TRUE(client.ok()) << client.status();
    if (!client.ok()) return Reply();
    auto reply = (*client)->Command(std::move(argv));
    EXPECT_TRUE(reply.ok()) << reply.status();
    return reply.ok() ? *std::move(reply) : Reply();
  }

  // PTTL of `key` on master `i`.
  int64_t Pttl(int i, const std::string& key) {
    return On(i, {"PTTL", key}).integer;
  }

  std::unique_ptr<RedisCluster> cluster_;
};

}  // namespace redlock::testing

#endif  // REDLOCK_TESTS_SUPPORT_OWN_MASTERS_TEST_H_
