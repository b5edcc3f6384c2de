// Copyright 2026 The redlock Authors.
//
// The state every copy of a Lock handle shares. Written on the engine's loop
// thread, read from any thread.

#ifndef REDLOCK_SRC_ENGINE_LOCK_STATE_H_
#define REDLOCK_SRC_ENGINE_LOCK_STATE_H_

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "redlock/lock.h"
#include "src/algorithm/clock.h"
#include "src/algorithm/token.h"
#include "src/engine/block_pool.h"
#include "src/engine/counted_ref.h"

namespace redlock::internal {

struct LockState;
// The mutex that guards `state` (LockState::mu()); defined once, in the
// library (src/api/lock.cc), so that every module picks the same one.
std::mutex& LockStateMutex(const LockState* state);

// What every lock of one engine shares, made once by the engine: its
// address (a lock's owner), Runtime::LockClock() and its masters' names
// (MasterAddress::Name(), in the order of its links), which packed votes
// index.
struct LockContext {
  const void* owner = nullptr;
  Clock* clock = nullptr;
  std::vector<std::string> master_names;
  mutable std::atomic<int64_t> refs{0};  // CountedRef's count.
};

// A lock's reference to its LockContext: 8 bytes, one per lock.
using LockContextRef = CountedRef<LockContext>;

// A lock's token as text (LockState::token()): a packed token's 32 hex
// digits made here, or a view of the state's string. Keep it while the view
// is used: `Command(state.token())` holds it to the end of the statement.
class TokenText {
 public:
  explicit TokenText(const LockState& state);
  absl::string_view view() const {
    return text_ != nullptr ? absl::string_view(*text_)
                            : absl::string_view(hex_, sizeof(hex_));
  }
  operator absl::string_view() const { return view(); }  // NOLINT

 private:
  const std::string* text_ = nullptr;  // Null: the token is hex_.
  char hex_[kTokenDigits];
};

struct LockState {
  // A semaphore's permit set's and a reader's own fields, kept out of line:
  // a plain lock (most of the locks an engine keeps alive) has none, and
  // pays one null pointer for them instead of about 130 bytes.
  struct Extra {
    // A semaphore's permit set (Engine::AcquirePermits()): its slot numbers,
    // ascending, in the order of `keys`; the semaphore's limit key and
    // limit.
    std::vector<int> slots;
    std::string limit_key;
    int limit = 0;
    // A reader of a read-write lock (AcquireOptions::shared): key() is the
    // shared lock key, `reader_key` its own key (SharedHolderKey()),
    // `readers_key` the readers' index (SharedHoldersKey()).
    bool shared = false;
    std::string reader_key;
    std::string readers_key;
  };

  // Immutable after construction.
  // The acquiring engine's part, shared by all its locks (null for a state
  // made without an engine: then owner() and clock() are null and every vote
  // is kept unpacked).
  LockContextRef context;
  // Every resource of the lock, sorted, then their keys in the same order
  // (one resource, or several for a multi-resource lock; a permit set: the
  // semaphore's name alone, then its slots' keys): resources() is the first
  // `resource_count` names, keys() the rest. One buffer kept inline for a
  // lock on one resource (its name and key), instead of two vectors with a
  // heap block each. Never empty once made; set with SetNames().
  absl::InlinedVector<std::string, 2> names;
  // The token (token(); set with SetToken()). A generated token, 32
  // lowercase hex digits, is kept as its 16 bytes (PackToken()), here, with
  // no heap block of its own (token_packed); any other (an adopted token) in
  // `token_string` from the start. Lock::token()'s std::string
  // (TokenString()) is made on first use.
  uint8_t token_bytes[kTokenBytes];
  mutable std::atomic<std::string*> token_string{nullptr};
  MonotonicTime acquired_at;
  uint64_t fence = 0;
  // Null for a plain lock (a writer, one or several resources).
  std::unique_ptr<Extra> extra;
  uint32_t resource_count = 0;
  bool adopted = false;       // Made by Adopt(), not won by an acquisition.
  bool token_packed = false;  // The token is token_bytes.
  // The rest of this word is guarded by mu (beside the above to save one).
  bool released = false;
  uint8_t vote_count =
      0;  // votes(): how many are in vote_bytes (0 if out of line).
  // Extension rounds of this lock in flight (ExtensionStarted()), and
  // whether two of them have run at once since none last was. Guarded by mu.
  uint16_t extending = 0;
  bool extensions_overlapped = false;

  LockState() = default;
  LockState(const LockState&) = delete;
  LockState& operator=(const LockState&) = delete;
  ~LockState() { delete token_string.load(std::memory_order_acquire); }

  // Only while the state is being built.
  void SetToken(absl::string_view token) {
    token_packed = PackToken(token, token_bytes);
    if (!token_packed) {
      token_string.store(new std::string(token), std::memory_order_release);
    }
  }
  // The token's text; good while the returned object lives.
  TokenText token() const { return TokenText(*this); }
  // The token as a std::string that lives as long as the state: made on the
  // first call (from any thread; two at once make one), the same after.
  const std::string& TokenString() const {
    std::string* made = token_string.load(std::memory_order_acquire);
    if (made != nullptr) return *made;
    auto mine = std::make_unique<std::string>(token().view());
    if (token_string.compare_exchange_strong(made, mine.get(),
                                             std::memory_order_acq_rel,
                                             std::memory_order_acquire)) {
      return *mine.release();
    }
    return *made;  // Another thread's, made first.
  }

  // The engine that acquired it, and Runtime::LockClock() of that engine:
  // what remaining() measures with.
  const void* owner() const {
    return context.get() != nullptr ? context->owner : nullptr;
  }
  Clock* clock() const {
    return context.get() != nullptr ? context->clock : nullptr;
  }

  // Only while the state is being built.
  void SetNames(std::vector<std::string> resources,
                std::vector<std::string> keys) {
    names.clear();
    names.reserve(resources.size() + keys.size());
    for (std::string& r : resources) names.push_back(std::move(r));
    for (std::string& k : keys) names.push_back(std::move(k));
    resource_count = static_cast<uint32_t>(resources.size());
  }
  absl::Span<const std::string> resources() const {
    return absl::MakeConstSpan(names.data(), resource_count);
  }
  absl::Span<const std::string> keys() const {
    return absl::MakeConstSpan(names.data() + resource_count,
                               names.size() - resource_count);
  }

  // The first of resources() and of keys(): the lock's resource (for a
  // permit set, the semaphore's name) and its first key. Empty for a state
  // without them (Lock's empty handle).
  const std::string& resource() const {
    return resource_count == 0 ? EmptyString() : names[0];
  }
  const std::string& key() const {
    return names.size() <= resource_count ? EmptyString()
                                          : names[resource_count];
  }
  // Extra's fields; empty, 0 and false for a plain lock.
  const std::vector<int>& slots() const {
    static const auto* const kNone = new std::vector<int>();
    return extra != nullptr ? extra->slots : *kNone;
  }
  const std::string& limit_key() const {
    return extra != nullptr ? extra->limit_key : EmptyString();
  }
  int limit() const { return extra != nullptr ? extra->limit : 0; }
  bool shared() const { return extra != nullptr && extra->shared; }
  const std::string& reader_key() const {
    return extra != nullptr ? extra->reader_key : EmptyString();
  }
  const std::string& readers_key() const {
    return extra != nullptr ? extra->readers_key : EmptyString();
  }
  // Made on first use; only while the state is being built.
  Extra& MutableExtra() {
    if (extra == nullptr) extra = std::make_unique<Extra>();
    return *extra;
  }

  static const std::string& EmptyString() {
    static const auto* const kEmpty = new std::string();
    return *kEmpty;
  }

  // What guards the fields below: one of a fixed set of mutexes, picked by
  // the state's address, rather than one of its own (40 bytes a lock; a
  // client may keep a great many). Held only for a few reads or writes of
  // one state, never while another state's is held or a callback runs, so
  // two states sharing one only ever wait for each other briefly.
  // std::mutex rather than absl::Mutex: ThreadSanitizer sees through it even
  // though Debian's Abseil is not built for it.
  std::mutex& mu() const { return LockStateMutex(this); }
  MonotonicTime valid_until;  // Guarded by mu.

  // votes(): how each master answered the last acquisition or extension
  // that succeeded. Kept packed, 6 bytes a vote instead of MasterVote's 64,
  // inline for up to kInlineVotes masters (all of them in `rare` when there
  // are more): the master as an index into the engine's `master_names`, its
  // kind, the latency in whole nanoseconds below about 4.29 s; the errors,
  // only when a vote has one, in `rare` (one per vote). VotesLocked() gives
  // back exactly the MasterVotes SetVotesLocked() was given. A vote that does
  // not pack exactly (a master not in master_names, a latency that is not a
  // whole number of nanoseconds, or is negative or longer) keeps all of them
  // as given, in `rare`.
  struct PackedVote {
    uint32_t latency_ns = 0;
    uint8_t master = 0;  // Index into master_names.
    uint8_t kind = 0;    // MasterVote::Kind.
  };
  static constexpr size_t kInlineVotes = 5;
  static constexpr size_t kPackedVoteBytes = 6;  // latency_ns, master, kind.
  uint8_t vote_bytes[kInlineVotes * kPackedVoteBytes];  // Guarded by mu.
  // What most locks never have, behind one pointer that is null while they
  // have none of it: votes that do not pack, packed votes past kInlineVotes,
  // the votes' errors, the reason the lock was lost.
  // At most one of `votes` and `packed` is non-empty.
  struct Rare {
    std::vector<MasterVote> votes;     // All of them, as given (unpacked).
    std::vector<PackedVote> packed;    // All of them, past kInlineVotes.
    std::vector<absl::Status> errors;  // Packed ones' errors, if any has one.
    absl::Status lost;                 // OK until lost.
  };
  std::unique_ptr<Rare> rare;  // Guarded by mu.

  // Requires mu held. OK until the lock is lost (MarkLost()).
  absl::Status LostLocked() const {
    return rare != nullptr ? rare->lost : absl::OkStatus();
  }
  // Requires mu held. How the votes are kept: all unpacked, packed past the
  // inline ones, or packed with their errors beside them.
  bool VotesUnpackedLocked() const {
    return rare != nullptr && !rare->votes.empty();
  }
  bool VotesOutOfLineLocked() const {
    return rare != nullptr && !rare->packed.empty();
  }
  bool VoteErrorsSpilledLocked() const {
    return rare != nullptr && !rare->errors.empty();
  }

  // Requires mu held.
  void SetVotesLocked(std::vector<MasterVote> votes) {
    bool errors = false;
    // Up to kInlineVotes: written in place (an extension's over the
    // acquisition's); more: all of them, for `rare`.
    const bool inline_votes = votes.size() <= kInlineVotes;
    std::vector<PackedVote> out_of_line;
    if (!inline_votes) out_of_line.resize(votes.size());
    for (size_t i = 0; i < votes.size(); ++i) {
      const MasterVote& v = votes[i];
      int index = -1;
      if (context.get() != nullptr) {
        const std::vector<std::string>& names = context->master_names;
        if (i < names.size() && names[i] == v.master) {
          index = static_cast<int>(i);  // Rounds vote in link order.
        } else {
          for (size_t j = 0; j < names.size(); ++j) {
            if (names[j] == v.master) index = static_cast<int>(j);
          }
        }
      }
      const int64_t ns = absl::ToInt64Nanoseconds(v.latency);
      if (index < 0 || index > 255 || ns < 0 || ns > UINT32_MAX ||
          absl::Nanoseconds(ns) != v.latency) {
        vote_count = 0;
        if (rare == nullptr) rare = std::make_unique<Rare>();
        rare->packed.clear();
        rare->errors.clear();
        rare->votes = std::move(votes);
        return;
      }
      const uint32_t latency_ns = static_cast<uint32_t>(ns);
      if (inline_votes) {
        uint8_t* at = vote_bytes + i * kPackedVoteBytes;
        std::memcpy(at, &latency_ns, sizeof(latency_ns));
        at[4] = static_cast<uint8_t>(index);
        at[5] = static_cast<uint8_t>(v.kind);
      } else {
        out_of_line[i].latency_ns = latency_ns;
        out_of_line[i].master = static_cast<uint8_t>(index);
        out_of_line[i].kind = static_cast<uint8_t>(v.kind);
      }
      errors = errors || !v.error.ok();
    }
    vote_count = inline_votes ? static_cast<uint8_t>(votes.size()) : 0;
    if (!errors && inline_votes) {
      if (rare == nullptr) return;
      if (rare->lost.ok()) {
        rare.reset();
        return;
      }
    }
    if (rare == nullptr) rare = std::make_unique<Rare>();
    rare->votes.clear();
    rare->packed = std::move(out_of_line);
    rare->errors.clear();
    if (errors) {
      rare->errors.resize(votes.size());
      for (size_t i = 0; i < votes.size(); ++i) {
        rare->errors[i] = std::move(votes[i].error);
      }
    }
  }

  // Requires mu held.
  std::vector<MasterVote> VotesLocked() const {
    if (VotesUnpackedLocked()) return rare->votes;
    const bool out_of_line = VotesOutOfLineLocked();
    const bool errors = VoteErrorsSpilledLocked();
    const size_t n = out_of_line ? rare->packed.size() : vote_count;
    std::vector<MasterVote> votes;
    votes.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      PackedVote p;
      if (out_of_line) {
        p = rare->packed[i];
      } else {
        const uint8_t* at = vote_bytes + i * kPackedVoteBytes;
        std::memcpy(&p.latency_ns, at, sizeof(uint32_t));
        p.master = at[4];
        p.kind = at[5];
      }
      MasterVote v;
      v.master = context->master_names[p.master];
      v.kind = static_cast<MasterVote::Kind>(p.kind);
      if (errors) v.error = rare->errors[i];
      v.latency = absl::Nanoseconds(p.latency_ns);
      votes.push_back(std::move(v));
    }
    return votes;
  }

  // An extension round of this lock is about to be sent. Every round started
  // must be ended once (ExtensionEndedLocked()), decided or not.
  void ExtensionStarted() {
    std::lock_guard<std::mutex> lock(mu());
    if (extending > 0) extensions_overlapped = true;
    if (extending < UINT16_MAX) ++extending;
  }
  // The round ends. Returns true if another extension of this lock ran at
  // the same time: the masters may then have applied the two TTLs in either
  // order, so neither round alone says how long a quorum keeps the keys.
  bool ExtensionEndedLocked() {
    const bool overlapped = extensions_overlapped;
    if (extending > 0) --extending;
    if (extending == 0) extensions_overlapped = false;
    return overlapped;
  }

  // Marks the lock lost (first reason wins). Returns false if it already was.
  bool MarkLost(absl::Status reason) {
    std::lock_guard<std::mutex> lock(mu());
    if (!LostLocked().ok()) return false;
    if (rare == nullptr) rare = std::make_unique<Rare>();
    rare->lost = std::move(reason);
    return true;
  }
};

// A new, empty state for a lock the engine grants or adopts: held, maybe for
// hours, so from the block pool rather than malloc (block_pool.h).
inline std::shared_ptr<LockState> MakeLockState() {
  return std::allocate_shared<LockState>(PoolAllocator<LockState>());
}

inline TokenText::TokenText(const LockState& state) {
  if (!state.token_packed) {
    text_ = state.token_string.load(std::memory_order_acquire);
    if (text_ == nullptr) text_ = &LockState::EmptyString();  // None set.
    return;
  }
  SpellToken(state.token_bytes, hex_);
}

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_LOCK_STATE_H_
