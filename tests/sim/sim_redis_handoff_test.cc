// Copyright 2026 The redlock Authors.
//
// The release script's hand-off on SimRedis against a real redis-server:
// the same sequences, the same replies and messages.

#include "tests/sim/sim_redis_fixture.h"

namespace redlock::sim {
namespace {

// The hand-off scripts' keys: the lock, its waiting set, and the arrival
// keys' and hand-off entries' prefixes (each followed by a waiter id).
constexpr char kHoLock[] = "ho:lock";
constexpr char kHoWait[] = "ho:wait";
constexpr char kHoArr[] = "ho:arr:";
constexpr char kHoEntry[] = "ho:entry:";

// The hand-off scripts, each step on both servers: scripts loaded, and a
// subscriber on the lock's channel on each.
class SimRedisHandOffTest : public SimRedisDifferentialTest {
 protected:
  void SetUp() override {
    SimRedisDifferentialTest::SetUp();
    LoadScripts();
    sub_ = NewPeer();
    ASSERT_NE(sub_, nullptr);
    SameOn(*sub_, {"SUBSCRIBE", kHoLock});
    // A hand-off is published on the heir's own channel (its entry's
    // name), not the lock's: the heirs of these tests' hand-offs.
    for (const char* heir : {"aa", "bb", "ic"}) {
      SameOn(*sub_, {"SUBSCRIBE", entry_ + heir});
    }
    ExpectPushed(*sub_, {});
  }

  // A lock's release that hands over (ReleaseCommand with the prefixes).
  static Argv Release(const char* token) {
    return Script(
        internal::ReleaseCommand(kHoLock, token, kHoWait, kHoArr, kHoEntry));
  }

  std::unique_ptr<Peer> sub_;
  const std::string arr_ = kHoArr;
  const std::string entry_ = kHoEntry;
};

TEST_F(SimRedisHandOffTest,
       ReleaseHandsTheKeyToTheLongestQueuedWaiterWithAHandOffEntry) {
  // cc came first but left no entry; bb came before aa.
  Same({"SADD", kHoWait, "aa", "bb", "cc"});
  Same({"SET", arr_ + "aa", "1700000000000300", "PX", "10000"});
  Same({"SET", arr_ + "bb", "1700000000000200", "PX", "10000"});
  Same({"SET", arr_ + "cc", "1700000000000100", "PX", "10000"});
  Same({"SET", entry_ + "aa", "cafe 7000 a0a0", "PX", "10000"});
  Same({"SET", entry_ + "bb", "beef 5000 b0b0", "PX", "10000"});
  Same({"SET", kHoLock, "f00d", "PX", "10000"});
  Same(Release("f00d"));
  ExpectPushed(*sub_, {Message(entry_ + "bb", "granted beef")});
  // The key is bb's token with bb's TTL; bb left the queue.
  Same({"GET", kHoLock});
  CloseInteger({"PTTL", kHoLock}, 100);
  SameMembers({"SMEMBERS", kHoWait});
  Same({"EXISTS", arr_ + "bb", entry_ + "bb"});
  Same({"EXISTS", arr_ + "aa", entry_ + "aa", arr_ + "cc"});
  // bb's release hands it to aa, aa's (no entry left) names cc.
  Same(Release("b0b0"));
  ExpectPushed(*sub_, {Message(entry_ + "aa", "granted cafe")});
  Same({"GET", kHoLock});
  CloseInteger({"PTTL", kHoLock}, 100);
  Same(Release("a0a0"));
  ExpectPushed(*sub_, {Message(kHoLock, "released cc")});
  Same({"EXISTS", kHoLock});
  SameMembers({"SMEMBERS", kHoWait});
  // Without the entries' prefix, the old release: an entry is not read.
  Same({"SADD", kHoWait, "dd"});
  Same({"SET", arr_ + "dd", "1700000000000050", "PX", "10000"});
  Same({"SET", entry_ + "dd", "d00d 5000 d0d0", "PX", "10000"});
  Same({"SET", kHoLock, "f00d", "PX", "10000"});
  Same(Script(internal::ReleaseCommand(kHoLock, "f00d", kHoWait, kHoArr)));
  ExpectPushed(*sub_, {Message(kHoLock, "released dd")});
  Same({"EXISTS", kHoLock, entry_ + "dd"});
  // Nor does an unannounced release hand anything on.
  Argv quiet = Release("f00d");
  quiet[5] = "0";  // ARGV[2]: not announced.
  Same({"SET", kHoLock, "f00d", "PX", "10000"});
  Same(quiet);
  ExpectPushed(*sub_, {});
  Same({"EXISTS", kHoLock, entry_ + "dd"});
}

TEST_F(SimRedisHandOffTest,
       ReleaseNeverHandsTheKeyToAnEntryOfTheReleasingToken) {
  // aa's entry is for the token being released: it is named, not handed
  // the key; its entry and place stay.
  Same({"SADD", kHoWait, "aa"});
  Same({"SET", arr_ + "aa", "1700000000000100", "PX", "10000"});
  Same({"SET", entry_ + "aa", "cafe 7000 f00d", "PX", "10000"});
  Same({"SET", kHoLock, "f00d", "PX", "10000"});
  Same(Release("f00d"));
  ExpectPushed(*sub_, {Message(kHoLock, "released aa")});
  Same({"EXISTS", kHoLock});
  Same({"EXISTS", arr_ + "aa", entry_ + "aa"});
  SameMembers({"SMEMBERS", kHoWait});
  // bb, queued later with an entry for another token, is the heir.
  Same({"SADD", kHoWait, "bb"});
  Same({"SET", arr_ + "bb", "1700000000000200", "PX", "10000"});
  Same({"SET", entry_ + "bb", "beef 5000 b0b0", "PX", "10000"});
  Same({"SET", kHoLock, "f00d", "PX", "10000"});
  Same(Release("f00d"));
  ExpectPushed(*sub_, {Message(entry_ + "bb", "granted beef")});
  Same({"GET", kHoLock});
  SameMembers({"SMEMBERS", kHoWait});
  Same({"EXISTS", arr_ + "aa", entry_ + "aa"});
}

TEST_F(SimRedisHandOffTest, ReleaseSkipsMalformedHandOffEntries) {
  // Each of these waiters' entries fails '^(%x+) (%d+) (%x+)$' or a TTL
  // above 0; i2 has a good entry but no arrival number; i9 is a set.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"i0", "cafz 5000 a0a0"},  {"i1", "cafe 0 a0a0"},
      {"i3", "cafe 000 a0a0"},   {"i4", "cafe 5000 a0a0 "},
      {"i5", "cafe  5000 a0a0"}, {"i6", "cafe 5e3 a0a0"},
      {"i7", "cafe 5000"},       {"i8", " cafe 5000 a0a0"},
      {"ia", "cafe -5 a0a0"},    {"ib", "0x1 5000 a0a0"},
  };
  int64_t at = 1700000000000100;
  for (const auto& [id, value] : bad) {
    Same({"SADD", kHoWait, id});
    Same({"SET", arr_ + id, absl::StrCat(at++), "PX", "10000"});
    Same({"SET", entry_ + id, value, "PX", "10000"});
  }
  Same({"SADD", kHoWait, "i2", "i9"});
  Same({"SET", entry_ + "i2", "cafe 5000 a0a0", "PX", "10000"});
  Same({"SET", arr_ + "i9", "1700000000000000", "PX", "10000"});
  Same({"SADD", entry_ + "i9", "x"});
  Same({"SET", kHoLock, "f00d", "PX", "10000"});
  // Nobody is the heir: the earliest, i9 (its entry unreadable), is named.
  Same(Release("f00d"));
  ExpectPushed(*sub_, {Message(kHoLock, "released i9")});
  Same({"EXISTS", kHoLock});
  Same({"SCARD", kHoWait});
  // Upper-case hex is hex: ic, queued last, is the heir.
  Same({"SADD", kHoWait, "ic"});
  Same({"SET", arr_ + "ic", absl::StrCat(at++), "PX", "10000"});
  Same({"SET", entry_ + "ic", "CAFE 5000 A0B0", "PX", "10000"});
  Same({"SET", kHoLock, "f00d", "PX", "10000"});
  Same(Release("f00d"));
  ExpectPushed(*sub_, {Message(entry_ + "ic", "granted CAFE")});
  Same({"GET", kHoLock});
  Same({"SCARD", kHoWait});
}

TEST_F(SimRedisHandOffTest, WithdrawalComesBeforeTheHandOff) {
  auto withdraw = [&](const char* token, const char* id, bool leave) {
    return Script(internal::WithdrawCommand(kHoLock, token, kHoWait, kHoArr,
                                            kHoEntry, id, leave));
  };
  Same({"SADD", kHoWait, "aa", "bb"});
  Same({"SET", arr_ + "aa", "1700000000000100", "PX", "10000"});
  Same({"SET", arr_ + "bb", "1700000000000200", "PX", "10000"});
  Same({"SET", entry_ + "aa", "cafe 7000 a0a0", "PX", "10000"});
  Same({"SET", entry_ + "bb", "beef 5000 b0b0", "PX", "10000"});
  // A release had handed the key to aa, whose attempt was lost: aa drops
  // its entry but keeps its place, and the key goes on to bb, not back to
  // aa, although aa is queued longer.
  Same({"SET", kHoLock, "a0a0", "PX", "7000"});
  Same(withdraw("a0a0", "aa", /*leave=*/false));
  ExpectPushed(*sub_, {Message(entry_ + "bb", "granted beef")});
  Same({"GET", kHoLock});
  SameMembers({"SMEMBERS", kHoWait});
  Same({"EXISTS", arr_ + "aa"});
  Same({"EXISTS", entry_ + "aa", arr_ + "bb", entry_ + "bb"});
  // aa, still queued, refreshes its entry; then gives up: it leaves the
  // queue while bb holds the key, which stays bb's.
  Same({"SET", entry_ + "aa", "cafe 7000 a0a0", "PX", "10000"});
  Same(withdraw("a0a0", "aa", /*leave=*/true));
  ExpectPushed(*sub_, {});
  Same({"GET", kHoLock});
  Same({"EXISTS", kHoWait, arr_ + "aa", entry_ + "aa"});
  // A withdrawal of a waiter that is not queued changes nothing else; bb's
  // release then finds nobody to hand to or name.
  Same(withdraw("b0b0", "zz", /*leave=*/true));
  ExpectPushed(*sub_, {Message(kHoLock, kReleasedMessage)});
  Same({"EXISTS", kHoLock});
  // A lost attempt's give-back (place kept) with nobody to hand to deletes
  // the key quietly: no "released" to wake the waiters against the holder.
  Same({"SET", kHoLock, "c0c0", "PX", "7000"});
  Same(withdraw("c0c0", "cc", /*leave=*/false));
  ExpectPushed(*sub_, {});
  Same({"EXISTS", kHoLock});
}

TEST_F(SimRedisHandOffTest,
       WriterAcquireWithAHandOffEntryWritesItOnRefusalAndWinsOnItsToken) {
  const internal::HandOffEntry hand_off{entry_ + "ee", "cafe",
                                        absl::Seconds(3)};
  const internal::Command acquire = internal::WriterAcquireCommand(
      kHoLock, kHoWait, "e0e0", absl::Seconds(10), "ee", absl::Seconds(5),
      /*announce=*/true, arr_ + "ee", &hand_off);
  // Refused: queued, and the entry "<proof> <ttl> <token>" with PX its TTL.
  Same({"SET", kHoLock, "f00d", "PX", "20000"});
  Same(Script(acquire));
  Same({"GET", entry_ + "ee"});
  CloseInteger({"PTTL", entry_ + "ee"}, 100);
  Same({"SCARD", kHoWait});
  Same({"EXISTS", arr_ + "ee"});
  // The key already holds the token (a release handed it over): a win, the
  // TTL set again, the entry, arrival key and id gone.
  Same({"SET", kHoLock, "e0e0", "PX", "1000"});
  Same(Script(acquire));
  ExpectPushed(*sub_, {Message(kHoLock, kTakenMessage)});
  CloseInteger({"PTTL", kHoLock}, 100);
  Same({"EXISTS", kHoWait, arr_ + "ee", entry_ + "ee"});
  // Without KEYS[4], the key holding the same token is a refusal still.
  const internal::Command plain = internal::WriterAcquireCommand(
      kHoLock, kHoWait, "e0e0", absl::Seconds(10), "ee", absl::Seconds(5),
      /*announce=*/true, arr_ + "ee");
  Same({"SET", kHoLock, "e0e0", "PX", "5000"});
  Same(Script(plain));
  ExpectPushed(*sub_, {});
  CloseInteger({"PTTL", kHoLock}, 100);
  Same({"SCARD", kHoWait});
  Same({"EXISTS", entry_ + "ee"});
  // ARGV[2] goes into the entry as sent.
  Same({"SET", kHoLock, "f00d", "PX", "20000"});
  Argv odd = Script(acquire);
  ASSERT_EQ(odd.size(), 3u + 4u + 7u);
  odd[8] = "010000";
  Same(odd);
  Same({"GET", entry_ + "ee"});
}

TEST_F(SimRedisHandOffTest,
       HandOffScriptCallErrorsStopTheScriptWhereRedisDoes) {
  // A hand-off entry whose TTL tonumber() takes but SET's PX refuses: the
  // release fails at its SET (line 32), the key already deleted.
  Same({"SADD", kHoWait, "aa"});
  Same({"SET", arr_ + "aa", "1700000000000100", "PX", "10000"});
  Same({"SET", entry_ + "aa", "cafe 0012 a0a0", "PX", "10000"});
  Same({"SET", kHoLock, "f00d", "PX", "10000"});
  Same(Release("f00d"));
  Same({"EXISTS", kHoLock});
  Same({"SCARD", kHoWait});
  // A waiting key of another type: a withdrawal that leaves the queue fails
  // at its SREM (line 23), the entry already deleted.
  Same({"DEL", kHoWait});
  Same({"SET", kHoWait, "not-a-set"});
  Same(Script(internal::WithdrawCommand(kHoLock, "f00d", kHoWait, kHoArr,
                                        kHoEntry, "aa", /*leave_queue=*/true)));
  Same({"EXISTS", entry_ + "aa", arr_ + "aa"});
  // ... and the writer acquire's SADD (line 10) on a refusal.
  const internal::HandOffEntry hand_off{entry_ + "ee", "cafe",
                                        absl::Seconds(3)};
  const internal::Command acquire = internal::WriterAcquireCommand(
      kHoLock, kHoWait, "e0e0", absl::Seconds(10), "ee", absl::Seconds(5),
      /*announce=*/false, arr_ + "ee", &hand_off);
  Same({"SET", kHoLock, "f00d", "PX", "10000"});
  Same(Script(acquire));
  // The lock key a set: the writer acquire's GET (line 1) with KEYS[4].
  Same({"DEL", kHoLock, kHoWait});
  Same({"SADD", kHoLock, "x"});
  Same(Script(acquire));
  // An entry TTL SET refuses: the refusal fails at the entry (line 19),
  // queued already.
  Same({"DEL", kHoLock});
  Same({"SET", kHoLock, "f00d", "PX", "10000"});
  Argv bad_ttl = Script(acquire);
  bad_ttl.back() = "0";
  Same(bad_ttl);
  Same({"SCARD", kHoWait});
  Same({"EXISTS", arr_ + "ee", entry_ + "ee"});
  // A waiting TTL that is no number: math.max (line 11), queued already.
  Argv bad_wait = Script(acquire);
  bad_wait[10] = "x";
  Same(bad_wait);
  // A TTL SET refuses on a win (line 3).
  Same({"DEL", kHoLock});
  Argv bad_win = Script(acquire);
  bad_win[8] = "soon";
  Same(bad_win);
  Same({"EXISTS", kHoLock});
}

}  // namespace
}  // namespace redlock::sim
