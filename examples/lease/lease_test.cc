// Copyright 2026 The redlock Authors.
//
// The lease sequence from the fencing discussion, run twice on real masters:
//
//   t=0  A acquires the lock (TTL 1s) and stalls — a GC pause, swap, SIGSTOP.
//   t=1  The TTL expires. B acquires and writes.
//   t=2  A wakes up, still believing it holds the lock, and writes.
//
// Against a resource that does not check tokens, A's stale write silently
// overwrites B's. Against the fenced resource, A's write carries token 33,
// B's carried 34, and A's is rejected. The lock is the same in both runs:
// the protection comes from the resource-side check alone.

#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "examples/lease/lease_sequence.h"
#include "gtest/gtest.h"
#include "redlock/fencing.h"
#include "redlock/keys.h"
#include "redlock/redlock.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_options.h"

namespace redlock {
namespace {

using ::redlock::testing::RedisClient;
using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;
using ::redlock::testing::TestOptions;

constexpr char kResource[] = "invoice-42";

class LeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::UsingExternalMasters()) GTEST_SKIP();
    auto cluster = RedisCluster::Start(5);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    auto storage = RedisServer::Start({});
    ASSERT_TRUE(storage.ok()) << storage.status();
    storage_ = *std::move(storage);
    auto client = storage_->Client();
    ASSERT_TRUE(client.ok());
    db_ = *std::move(client);
    // 32 grants of this resource happened before the scene, so that the two
    // below carry the tokens of the story: 33 and 34.
    for (int i = 0; i < 5; ++i) {
      auto master = cluster_->Client(i);
      ASSERT_TRUE(master.ok());
      ASSERT_TRUE(
          (*master)->Set(FenceCounterKey(Options(), kResource), "32").ok());
    }
    a_ = MakeClient();
    b_ = MakeClient();
  }

  std::unique_ptr<Redlock> MakeClient() {
    return examples::SequenceClient(cluster_->Uris());
  }

  // Runs the sequence; `write(lock, who)` is how a holder writes.
  template <typename Write>
  void RunSequence(Write write) {
    seq_ = examples::RunLeaseSequence(
        *a_, *b_, kResource, std::string("written by A after its lease ended"),
        std::string("written by B"), write);
  }

  std::unique_ptr<RedisCluster> cluster_;
  std::unique_ptr<RedisServer> storage_;
  std::unique_ptr<RedisClient> db_;
  std::unique_ptr<Redlock> a_;
  std::unique_ptr<Redlock> b_;
  examples::LeaseSequenceResult seq_;
};

TEST_F(LeaseTest, WithoutTheTokenCheckTheStaleHolderOverwritesTheNewOne) {
  RunSequence([&](const Lock&, const std::string& value) {
    return db_->Set("invoice-42:status", value).ok();
  });
  EXPECT_EQ(seq_.a_token, 33u);
  EXPECT_EQ(seq_.b_token, 34u);
  EXPECT_TRUE(seq_.b_accepted);
  EXPECT_TRUE(seq_.a_accepted);
  // B's write is lost.
  EXPECT_EQ(*db_->Get("invoice-42:status"),
            "written by A after its lease ended");
}

TEST_F(LeaseTest, TheFencedResourceRejectsTheStaleHoldersWrite) {
  RunSequence([&](const Lock& lock, const std::string& value) {
    auto reply = db_->Command(FencedSetArgv(
        "invoice-42:fence", "invoice-42:status", lock.fence(), value));
    EXPECT_TRUE(reply.ok());
    return reply.ok() && reply->integer == 1;
  });
  EXPECT_EQ(seq_.a_token, 33u);
  EXPECT_EQ(seq_.b_token, 34u);
  EXPECT_TRUE(seq_.b_accepted);
  EXPECT_FALSE(seq_.a_accepted) << "33 < 34 must be rejected";
  EXPECT_EQ(*db_->Get("invoice-42:status"), "written by B");
  EXPECT_EQ(*db_->Get("invoice-42:fence"), "34");
}

}  // namespace
}  // namespace redlock
