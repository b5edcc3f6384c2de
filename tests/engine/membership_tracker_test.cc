// Copyright 2026 The redlock Authors.
//
// The deployment's membership on real servers: clients configured with
// different lists of masters — a rolling change of one master, {A, B, C} to
// {A, B, D} — never both hold a lock, because every master's marker records
// the deployment's members and a client whose list is not theirs counts no
// grant. Before the record, client X (old list, B behind a 40 ms proxy) and
// client Y (new list, A behind a 40 ms proxy) both won, X with {A, C} and Y
// with {B, D}, in 10 races out of 10.

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "redlock/keys.h"
#include "redlock/redlock.h"
#include "src/algorithm/membership.h"
#include "src/algorithm/scripts.h"
#include "tests/support/fault_proxy.h"
#include "tests/support/guard_expectations.h"
#include "tests/support/redis_server.h"
#include "tests/support/test_options.h"

namespace redlock {
namespace {

using ::redlock::testing::FaultProxy;
using ::redlock::testing::RedisCluster;
using ::redlock::testing::RedisServer;
using ::redlock::testing::TestOptions;

bool Mentions(const absl::Status& status, absl::string_view text) {
  return absl::StrContains(status.message(), text);
}

class MembershipTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = RedisCluster::Start(4, RedisServer::Config());
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
  }

  std::string Uri(int i) const { return cluster_->server(i).Uri(); }
  std::string Name(int i) const { return cluster_->server(i).Address(); }

  // Server `i` behind a proxy adding `latency` each way, named as itself.
  std::string ProxiedUri(int i, absl::Duration latency) {
    auto proxy =
        FaultProxy::Start({.upstream_port = cluster_->server(i).port()});
    EXPECT_TRUE(proxy.ok()) << proxy.status();
    if (!proxy.ok()) return "";
    (*proxy)->SetLatency(latency, latency);
    const std::string uri = absl::StrCat("redis://127.0.0.1:", (*proxy)->port(),
                                         "?member=", Name(i));
    proxies_.push_back(*std::move(proxy));
    return uri;
  }

  std::unique_ptr<Redlock> MakeClient(std::vector<std::string> uris) {
    Options options = TestOptions(std::move(uris));
    options.on_warning = [](absl::string_view) {};
    auto client = Redlock::Create(options);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  // Until every master of `client` completed a handshake (at most 5s): a
  // master not heard from yet cannot be judged a non-member.
  static void AwaitHandshakes(Redlock& client) {
    for (int i = 0; i < 100; ++i) {
      bool all = true;
      for (const MasterHealth& h : client.Health()) all &= h.connected;
      if (all) return;
      absl::SleepFor(absl::Milliseconds(50));
    }
  }

  std::optional<std::string> Marker(int i) {
    return testing::ValueOn(*cluster_, i, DeploymentMarkerKey(Options()));
  }

  // Bootstraps the deployment on `members` (indices) with one acquisition.
  void Bootstrap(const std::vector<int>& members) {
    std::vector<std::string> uris;
    for (int i : members) uris.push_back(Uri(i));
    auto client = MakeClient(uris);
    ASSERT_NE(client, nullptr);
    absl::StatusOr<Lock> lock = client->TryAcquire("warmup", absl::Seconds(1));
    ASSERT_TRUE(lock.ok()) << lock.status();
    ASSERT_TRUE(client->Release(*lock).ok());
    for (int i : members) {
      const std::optional<std::string> marker = Marker(i);
      ASSERT_TRUE(marker.has_value()) << "master " << i;
      ASSERT_TRUE(absl::StrContains(*marker, ";members=")) << *marker;
    }
  }

  std::string Members(const std::vector<int>& indices) const {
    std::vector<std::string> names;
    for (int i : indices) names.push_back(Name(i));
    return internal::JoinMembers(internal::Canonical(names));
  }

  // The record the deployment's markers carry now (server 0's), parsed.
  internal::Membership CurrentRecord() {
    const std::string marker = Marker(0).value_or("");
    std::string member;
    internal::Membership record;
    const size_t cut = marker.find(';');
    EXPECT_NE(cut, std::string::npos) << marker;
    if (cut == std::string::npos) return record;
    EXPECT_TRUE(
        internal::ParseMarkerRecord(marker.substr(cut + 1), &member, &record)
            .ok());
    return record;
  }

  // What `redlock reconfigure` writes, step by step, without its wait
  // (every lock is released between the phases here): `next` to every
  // server of `servers`, over the record they carry.
  void WriteRecord(const internal::Membership& next,
                   const std::vector<int>& servers, bool joining_new = false) {
    const std::string expected = internal::RecordText(CurrentRecord());
    for (int i : servers) {
      auto c = cluster_->Client(i);
      ASSERT_TRUE(c.ok());
      absl::StatusOr<std::string> run_id = testing::ServerRunId(**c);
      ASSERT_TRUE(run_id.ok());
      const bool fresh = joining_new && !Marker(i).has_value();
      internal::Command write = internal::ReconfigureCommand(
          DeploymentMarkerKey(Options()), fresh ? "" : expected,
          internal::MarkerSuffix(Name(i), next), "trusted", *run_id,
          absl::Hours(1));
      auto reply = (*c)->Command(internal::CommandArgv(write, /*eval=*/true));
      ASSERT_TRUE(reply.ok()) << reply.status();
      ASSERT_EQ(reply->type, testing::Reply::Type::kArray) << reply->str;
      ASSERT_EQ(reply->elements.size(), 2u);
      ASSERT_EQ(reply->elements[0].integer, 1) << reply->elements[1].str;
    }
  }

  std::unique_ptr<RedisCluster> cluster_;
  std::vector<std::unique_ptr<FaultProxy>> proxies_;
};

// The race: X on {A, B, C} with B behind a proxy, Y on {A, B, D}
// with A behind one; both ask at once, ten times.
TEST_F(MembershipTest, ClientsOnTheOldAndTheNewListNeverBothHoldTheLock) {
  // D has been up for a while before the deployment was marked: the
  // restart guard takes it for a master that missed the marking (its uptime
  // is clearly longer than the deployment's age), not for one reborn.
  absl::SleepFor(absl::Milliseconds(2500));
  Bootstrap({0, 1, 2});
  const absl::Duration slow = absl::Milliseconds(40);
  auto x = MakeClient({Uri(0), ProxiedUri(1, slow), Uri(2)});
  auto y = MakeClient({ProxiedUri(0, slow), Uri(1), Uri(3)});
  ASSERT_NE(x, nullptr);
  ASSERT_NE(y, nullptr);
  AwaitHandshakes(*x);
  AwaitHandshakes(*y);
  int both = 0, x_won = 0;
  absl::Status y_refusal;
  for (int race = 0; race < 10; ++race) {
    const std::string resource = absl::StrCat("report-", race);
    std::atomic<int> ready{0};
    absl::StatusOr<Lock> x_lock = absl::UnknownError("not run");
    absl::StatusOr<Lock> y_lock = absl::UnknownError("not run");
    auto run = [&](Redlock& client, absl::StatusOr<Lock>& out) {
      ++ready;
      while (ready < 2) std::this_thread::yield();
      out = client.TryAcquire(resource, absl::Seconds(5));
    };
    std::thread tx([&] { run(*x, x_lock); });
    std::thread ty([&] { run(*y, y_lock); });
    tx.join();
    ty.join();
    both += x_lock.ok() && y_lock.ok();
    x_won += x_lock.ok();
    if (!y_lock.ok()) y_refusal = y_lock.status();
    if (x_lock.ok()) x->Release(*x_lock).IgnoreError();
    if (y_lock.ok()) y->Release(*y_lock).IgnoreError();
  }
  EXPECT_EQ(both, 0) << "two owners in " << both << " races of 10";
  // X is a client of the deployment: it is not refused.
  EXPECT_GT(x_won, 0);
  // Y is told why, naming both lists.
  EXPECT_TRUE(Mentions(y_refusal, Members({0, 1, 3}))) << y_refusal;
  EXPECT_TRUE(Mentions(y_refusal, Members({0, 1, 2}))) << y_refusal;
}

// D added to the list by hand, without the procedure: refused, and the
// message names the procedure; the masters' records are left alone.
TEST_F(MembershipTest, AMasterAddedWithoutTheProcedureIsRefusedNamingIt) {
  Bootstrap({0, 1, 2});
  const std::optional<std::string> before = Marker(0);
  auto z = MakeClient({Uri(0), Uri(1), Uri(2), Uri(3)});
  ASSERT_NE(z, nullptr);
  AwaitHandshakes(*z);
  absl::StatusOr<Lock> lock = z->TryAcquire("report", absl::Seconds(5));
  ASSERT_FALSE(lock.ok()) << "granted with a master added by hand";
  EXPECT_TRUE(Mentions(lock.status(), absl::StrCat("not members: ", Name(3))))
      << lock.status();
  EXPECT_TRUE(Mentions(lock.status(), "redlock reconfigure")) << lock.status();
  const std::vector<MasterHealth> health = z->Health();
  ASSERT_EQ(health.size(), 4u);
  EXPECT_TRUE(Mentions(health[3].grants_count, "redlock reconfigure"))
      << health[3].grants_count;
  EXPECT_EQ(Marker(0), before);
  EXPECT_EQ(Marker(3), std::nullopt) << "the refused client marked D";
}

// D belongs to a deployment of its own (its marker says so): a client whose
// list mixes the two deployments refuses every master and writes nothing.
TEST_F(MembershipTest, AServerOfAnotherDeploymentIsRefused) {
  Bootstrap({0, 1, 2});
  Bootstrap({3});
  const std::optional<std::string> theirs = Marker(3);
  auto w = MakeClient({Uri(0), Uri(1), Uri(3)});
  ASSERT_NE(w, nullptr);
  AwaitHandshakes(*w);
  absl::StatusOr<Lock> lock = w->TryAcquire("report", absl::Seconds(5));
  ASSERT_FALSE(lock.ok());
  EXPECT_TRUE(Mentions(lock.status(), "two deployments")) << lock.status();
  EXPECT_EQ(Marker(3), theirs);
}

// Two servers that say they are one member (a copied data directory: D
// carries A's marker and record) cast one vote between them: the later in
// the list none, whatever else it would count for.
TEST_F(MembershipTest, TwoServersThatSayTheyAreOneMemberCastOneVote) {
  Bootstrap({0, 1, 2});
  const std::optional<std::string> a_marker = Marker(0);
  ASSERT_TRUE(a_marker.has_value());
  {
    auto d = cluster_->Client(3);
    ASSERT_TRUE(d.ok()) << d.status();
    ASSERT_TRUE((*d)->Set(DeploymentMarkerKey(Options()), *a_marker).ok());
  }
  auto w = MakeClient({Uri(0), Uri(1), Uri(2), Uri(3)});
  ASSERT_NE(w, nullptr);
  AwaitHandshakes(*w);
  absl::StatusOr<Lock> lock = w->TryAcquire("report", absl::Seconds(5));
  if (lock.ok()) ASSERT_TRUE(w->Release(*lock).ok());
  const std::vector<MasterHealth> health = w->Health();
  ASSERT_EQ(health.size(), 4u);
  EXPECT_TRUE(Mentions(health[3].grants_count, "one member casts one vote"))
      << health[3].grants_count;
}

// The deployment's members as the bootstrapping client's list, the same
// record on every master, and Health() showing both.
TEST_F(MembershipTest, ABootstrapRecordsTheListOnEveryMaster) {
  Bootstrap({0, 1, 2});
  std::string record;
  for (int i = 0; i < 3; ++i) {
    std::optional<std::string> marker = Marker(i);
    ASSERT_TRUE(marker.has_value());
    const size_t cut = marker->find(';');
    ASSERT_NE(cut, std::string::npos) << *marker;
    std::string member;
    internal::Membership parsed;
    ASSERT_TRUE(
        internal::ParseMarkerRecord(marker->substr(cut + 1), &member, &parsed)
            .ok())
        << *marker;
    EXPECT_EQ(member, Name(i));
    EXPECT_EQ(internal::JoinMembers(parsed.members), Members({0, 1, 2}));
    EXPECT_EQ(parsed.epoch, 1);
    EXPECT_FALSE(parsed.joint());
    if (i == 0) record = internal::RecordText(parsed);
    EXPECT_EQ(internal::RecordText(parsed), record);
  }
  auto client = MakeClient({Uri(0), Uri(1), Uri(2)});
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->TryAcquire("report", absl::Seconds(2)).ok());
  AwaitHandshakes(*client);
  for (const MasterHealth& h : client->Health()) {
    EXPECT_EQ(h.membership, record) << h.master;
    EXPECT_EQ(h.member, h.master);
    EXPECT_TRUE(h.grants_count.ok()) << h.grants_count;
  }
}

// A deployment marked before records (markers without ';') gets one
// record, the same on every master, from its first client.
TEST_F(MembershipTest, MarkersFromBeforeRecordsGetTheRecordAppended) {
  for (int i = 0; i < 3; ++i) {
    auto c = cluster_->Client(i);
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(testing::OperatorMarkTrusted(**c).ok());
  }
  auto client = MakeClient({Uri(0), Uri(1), Uri(2)});
  ASSERT_NE(client, nullptr);
  absl::StatusOr<Lock> lock;
  for (int attempt = 0; attempt < 20; ++attempt) {
    lock = client->TryAcquire("report", absl::Seconds(2));
    if (lock.ok()) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_TRUE(lock.ok()) << lock.status();
  // The appends are sent once every master answered; give them a moment.
  auto all_recorded = [&] {
    for (int i = 0; i < 3; ++i) {
      if (!absl::StrContains(Marker(i).value_or(""), ";deployment=")) {
        return false;
      }
    }
    return true;
  };
  for (int wait = 0; wait < 40 && !all_recorded(); ++wait) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  std::string first_record;
  for (int i = 0; i < 3; ++i) {
    std::optional<std::string> marker = Marker(i);
    ASSERT_TRUE(marker.has_value());
    EXPECT_TRUE(absl::StartsWith(*marker, "trusted:0:")) << *marker;
    const size_t at = marker->find(";deployment=");
    ASSERT_NE(at, std::string::npos) << *marker;
    const std::string record = marker->substr(at, marker->find(";since=") - at);
    if (i == 0) first_record = record;
    EXPECT_EQ(record, first_record);
  }
}

// A change of the record reaches a client that stays connected within
// about two seconds: here the masters are told (by hand, as a bad
// reconfiguration would) that the members are {A, B, D}, and the client on
// {A, B, C} is refused without reconnecting.
TEST_F(MembershipTest, AConnectedClientActsOnAChangedRecordWithinTwoSeconds) {
  Bootstrap({0, 1, 2});
  auto x = MakeClient({Uri(0), Uri(1), Uri(2)});
  ASSERT_NE(x, nullptr);
  ASSERT_TRUE(x->TryAcquire("warm", absl::Seconds(2)).ok());
  internal::Membership changed;
  changed.members = internal::Canonical({Name(0), Name(1), Name(3)});
  changed.epoch = 2;
  // The bootstrap's id, read back from the record.
  const std::string marker = *Marker(0);
  const size_t at = marker.find("deployment=") + 11;
  changed.deployment = marker.substr(at, marker.find(';', at) - at);
  const std::string record_now =
      marker.substr(marker.find(";deployment=") + 1,
                    marker.find(";since=") - marker.find(";deployment=") - 1);
  for (int i = 0; i < 3; ++i) {
    auto c = cluster_->Client(i);
    ASSERT_TRUE(c.ok());
    internal::Command write =
        internal::ReconfigureCommand(DeploymentMarkerKey(Options()), record_now,
                                     internal::MarkerSuffix(Name(i), changed),
                                     "trusted", "", absl::Hours(1));
    auto reply = (*c)->Command(internal::CommandArgv(write, /*eval=*/true));
    ASSERT_TRUE(reply.ok()) << reply.status();
    ASSERT_EQ(reply->type, testing::Reply::Type::kArray) << reply->str;
    ASSERT_EQ(reply->elements.size(), 2u);
    EXPECT_EQ(reply->elements[0].integer, 1) << reply->elements[1].str;
  }
  const absl::Time changed_at = absl::Now();
  absl::StatusOr<Lock> lock = absl::UnknownError("not tried");
  while (absl::Now() < changed_at + absl::Seconds(5)) {
    lock = x->TryAcquire("report", absl::Seconds(2));
    if (!lock.ok()) break;
    ASSERT_TRUE(x->Release(*lock).ok());
    absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_FALSE(lock.ok()) << "still granted 5s after the record changed";
  EXPECT_LT(absl::Now() - changed_at, absl::Seconds(4));
  // Refused for the new record's members, read again on the connection it
  // has (not merely for a record grown stale).
  EXPECT_TRUE(Mentions(lock.status(), Members({0, 1, 3}))) << lock.status();
}

// Each phase of a change from {A, B, C} to {A, B, D}, with clients on the
// old list (B behind a proxy), on the new one (A behind a proxy) and on both
// lists racing for one resource: never two owners. Before the change only
// the old list's client may win, during it any of them (each needs a quorum
// of the old members and of the new), after it only the new list's.
TEST_F(MembershipTest, EveryPhaseOfAChangeHasAtMostOneOwner) {
  absl::SleepFor(absl::Milliseconds(2500));  // D up for a while (see above).
  Bootstrap({0, 1, 2});
  const absl::Duration slow = absl::Milliseconds(40);
  auto old_list = MakeClient({Uri(0), ProxiedUri(1, slow), Uri(2)});
  auto new_list = MakeClient({ProxiedUri(0, slow), Uri(1), Uri(3)});
  auto both = MakeClient({Uri(0), Uri(1), ProxiedUri(2, slow), Uri(3)});
  Redlock* clients[] = {old_list.get(), new_list.get(), both.get()};
  for (Redlock* c : clients) {
    ASSERT_NE(c, nullptr);
    AwaitHandshakes(*c);
  }
  // Runs `races` races of the three; returns each client's wins, and fails
  // the test on two owners.
  auto race = [&](absl::string_view phase, int races) {
    std::vector<int> wins(3, 0);
    for (int r = 0; r < races; ++r) {
      const std::string resource = absl::StrCat(phase, "-", r);
      std::atomic<int> ready{0};
      std::vector<absl::StatusOr<Lock>> locks(3, absl::UnknownError("-"));
      std::vector<std::thread> threads;
      for (int c = 0; c < 3; ++c) {
        threads.emplace_back([&, c] {
          ++ready;
          while (ready < 3) std::this_thread::yield();
          locks[c] = clients[c]->TryAcquire(resource, absl::Seconds(5));
        });
      }
      for (std::thread& t : threads) t.join();
      int owners = 0;
      for (int c = 0; c < 3; ++c) {
        if (!locks[c].ok()) continue;
        ++owners;
        ++wins[c];
      }
      EXPECT_LE(owners, 1) << phase << " race " << r << ": " << owners
                           << " owners";
      for (int c = 0; c < 3; ++c) {
        if (locks[c].ok()) clients[c]->Release(*locks[c]).IgnoreError();
      }
    }
    return wins;
  };
  const std::vector<int> before = race("before", 6);
  EXPECT_GT(before[0], 0);
  EXPECT_EQ(before[1], 0);
  EXPECT_EQ(before[2], 0);

  internal::Membership joint = CurrentRecord();
  joint.epoch += 1;
  joint.next = internal::Canonical({Name(0), Name(1), Name(3)});
  WriteRecord(joint, {0, 1, 2, 3}, /*joining_new=*/true);
  absl::SleepFor(internal::kMembershipStale);  // Every view is the joint one.
  race("during", 6);
  // Three contenders may split the votes so that nobody wins a race; alone,
  // a client of every list locks during the change.
  for (Redlock* c : clients) {
    absl::StatusOr<Lock> alone =
        c->TryAcquire("during-alone", absl::Seconds(5));
    ASSERT_TRUE(alone.ok()) << alone.status();
    ASSERT_TRUE(c->Release(*alone).ok());
  }

  internal::Membership after = joint;
  after.epoch += 1;
  after.members = joint.next;
  after.next.clear();
  WriteRecord(after, {0, 1, 2, 3});
  absl::SleepFor(internal::kMembershipStale);
  const std::vector<int> later = race("after", 6);
  EXPECT_EQ(later[0], 0);
  EXPECT_GT(later[1], 0);
  EXPECT_EQ(later[2], 0);
}

}  // namespace
}  // namespace redlock
