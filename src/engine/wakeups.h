// Copyright 2026 The redlock Authors.
//
// Waiters woken on release (RetryPolicy::wake_on_release). A release
// publishes kReleasedMessage on a channel named as each lock key it deleted;
// an acquisition retried while waiters listen publishes kTakenMessage where
// it set one (src/algorithm/scripts.h). Wakeups keeps one subscriber connection
// per master, opened on first need and shared by every waiting acquisition of
// the client, and tells the waiters of a channel what was heard on it.
//
// Wake-ups are a hint about *when* to try. They never decide whether an
// attempt counts: a missed, late, duplicated or forged message costs at most
// one poll interval or one wasted attempt, because every attempt is still a
// full quorum round. So nothing here fails closed; it fails back to polling.
// The one exception is a hand-off (kGranted, RetryPolicy::hand_off): the
// waiter (AcquireOp) judges it as a grant, with the subscriber's run_id().
// A release publishes a hand-off on the heir's own channel (named as its
// hand-off entry), which that waiter alone watches.
//
// Loop thread only.

#ifndef REDLOCK_SRC_ENGINE_WAKEUPS_H_
#define REDLOCK_SRC_ENGINE_WAKEUPS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "src/engine/master.h"
#include "src/transport/runtime.h"

namespace redlock::internal {

// One pub/sub connection to one master. Subscribes with one channel per
// SUBSCRIBE (so each command has one reply), re-subscribes everything after
// a reconnect, and gives up on a connection whose handshake or confirmation
// takes longer than the request timeout (the master is stopped or slow):
// then its channels count as settled, the waiters poll, and it reconnects
// with backoff while channels are wanted.
class Subscriber final : private ConnectionObserver {
 public:
  class Listener {
   public:
    virtual ~Listener() = default;
    // A message on `channel`, heard from master number `master` (the
    // subscriber's, see its constructor).
    virtual void OnMessage(int master, absl::string_view channel,
                           absl::string_view payload) = 0;
    // Settled() may have become true for some channel. `after_loss`: the
    // channels were confirmed again on a new connection after an earlier
    // one was lost, so messages may have been missed in between.
    virtual void OnSettled(bool after_loss) = 0;
  };

  // `config`: the master's address, connect and request timeouts, backoff
  // (its marker_key is ignored); `master`: its index in the client's list,
  // passed to the listener with each message. `listener` must outlive the
  // subscriber.
  Subscriber(Runtime* runtime, MasterConfig config, int master,
             Listener* listener);
  ~Subscriber() override;

  Subscriber(const Subscriber&) = delete;
  Subscriber& operator=(const Subscriber&) = delete;

  // Wants messages on `channel`: subscribes at once, connecting first if
  // there is no connection (and none is backing off).
  void Add(const std::string& channel);
  // No longer wants them.
  void Remove(const std::string& channel);

  // `channel` is confirmed subscribed on this master, or this master cannot
  // subscribe now (no connection, or one that failed): a waiter need not
  // wait for it. False while connecting or awaiting the confirmation; that
  // lasts at most connect_timeout + request_timeout.
  bool Settled(const std::string& channel) const;

  // The run_id of the server this connection reaches (its INFO server,
  // read before it subscribes); empty while unknown or unconnected.
  absl::string_view run_id() const { return run_id_; }

  // Commands sent and messages heard, for tests and benchmarks.
  int64_t sent() const { return sent_; }
  int64_t messages() const { return messages_; }
  // Why the last connection closed (a failed connect, a loss, a malformed
  // message); OK if none has.
  const absl::Status& last_error() const { return last_error_; }

 private:
  enum class State { kIdle, kConnecting, kConnected };

  void Connect();
  void Subscribe(const std::string& channel);
  // Drops the connection; reconnects later if channels are wanted.
  void Close(absl::Status why);
  // When the connect, AUTH or the oldest SUBSCRIBE not yet confirmed times
  // out; nullopt if nothing is waited for.
  std::optional<MonotonicTime> Deadline() const;
  void ArmTimer();
  void OnTimer();
  // After a confirmation: tells the listener once nothing is awaited.
  void MaybeSettled();
  void Send(std::vector<std::string> argv);

  // ConnectionObserver.
  void OnConnect(absl::Status status) override;
  // Never called: the connection is in push mode.
  void OnReply(RedisReply reply) override {}
  void OnPush(RedisReply reply) override;
  void OnLost(absl::Status why) override;

  Runtime* const runtime_;
  const MasterConfig config_;
  const int master_;
  Listener* const listener_;
  State state_ = State::kIdle;
  std::unique_ptr<Connection> connection_;
  absl::flat_hash_set<std::string> wanted_;
  absl::flat_hash_set<std::string> confirmed_;
  // SUBSCRIBEs and UNSUBSCRIBEs sent and not yet confirmed, per channel (one
  // channel may be removed and added again before the first is confirmed):
  // a channel is settled only once the last of them is.
  struct Awaiting {
    int count = 0;
    MonotonicTime since;  // When the oldest of them was sent.
  };
  absl::flat_hash_map<std::string, Awaiting> awaiting_;
  bool auth_pending_ = false;
  MonotonicTime auth_sent_at_;
  bool info_pending_ = false;  // INFO server sent, not yet answered.
  MonotonicTime info_sent_at_;
  std::string run_id_;  // This connection's server run (INFO's run_id).
  MonotonicTime connect_started_;
  // A connection was lost or failed since the last one that confirmed.
  bool lost_ = false;
  absl::Duration next_backoff_;
  std::unique_ptr<Timer> timer_;            // Connect and confirmation.
  std::unique_ptr<Timer> reconnect_timer_;  // Backoff.
  std::unique_ptr<Timer> settle_timer_;     // Tells OnSettled() after Close().
  int64_t sent_ = 0;
  int64_t messages_ = 0;
  absl::Status last_error_;
};

// Every master's Subscriber, and who waits on which channel.
class Wakeups final : private Subscriber::Listener {
 public:
  enum class Event {
    kReleased,  // A release deleted the key somewhere: try soon (at once
                // if it named this waiter as its successor).
    kTaken,     // A retry set it somewhere: no hurry.
    kGranted,   // A release handed it to a waiter (RetryPolicy::hand_off):
                // the one whose proof `successor` is; taken, for the others.
    kSettled,   // Settled() may have changed.
  };

  // What an acquisition implements to be woken. Calls come from the loop,
  // never from inside Watch() or Unwatch(); a waiter may Unwatch() inside.
  class Waiter {
   public:
    virtual ~Waiter() = default;
    // `master`: for kReleased, the index of the master whose message it was,
    // or -1 when no message was heard (a subscriber that reconnected may
    // have missed one). `successor`: the waiter id that master's release
    // named (the one queued longest there, see kReleasedMessage), or empty;
    // for kGranted, the proof the hand-off published (kGrantedMessage).
    virtual void Wake(Event event, int master, absl::string_view successor) = 0;
  };

  // A channel nobody waits on any more stays subscribed this long, so a
  // client that contends again soon does not subscribe again.
  static constexpr absl::Duration kLinger = absl::Seconds(2);

  // One subscriber per entry of `masters` (made now, connected on first
  // need). `runtime` must outlive this.
  Wakeups(Runtime* runtime, const std::vector<MasterConfig>& masters);
  ~Wakeups() override;

  // `waiter` hears of every channel in `channels` until Unwatch(); each is
  // subscribed on every master where it is not yet. True if any channel was
  // not wanted before this call: a release between the waiter's last attempt
  // and the subscription would go unheard, so it should try once more when
  // Settled().
  bool Watch(Waiter* waiter, absl::Span<const std::string> channels);
  void Unwatch(Waiter* waiter, absl::Span<const std::string> channels);
  // The server run master `master`'s subscriber reaches
  // (Subscriber::run_id()); empty if unknown.
  absl::string_view RunId(int master) const;
  // Subscriber::Settled() on every master, for every channel.
  bool Settled(absl::Span<const std::string> channels) const;
  // Some of `channels` is subscribed (waited on now, or lingering): the
  // resource was contended lately, so others may be waiting for it.
  bool Contended(absl::Span<const std::string> channels) const;
  // This client released a lock on `channels` while they were subscribed
  // (Contended()): a new acquisition of it soon after yields to the waiters
  // that release woke (AcquireOp).
  void NoteReleased(absl::Span<const std::string> channels);
  // NoteReleased() was told of one of `channels` less than `within` ago.
  bool ReleasedWithin(absl::Span<const std::string> channels,
                      absl::Duration within) const;

  // A hand-off waiter's id (RetryPolicy::hand_off) whose channel, `prefix`
  // followed by the id, is still subscribed and watched by nobody: a new
  // waiter of the same resource takes it, rather than subscribing a channel
  // of its own and waiting for that. Empty if there is none.
  std::string TakeIdleWaiterId(absl::string_view prefix);
  // A waiter whose wait ended well (it won, so nothing of its own is left
  // to clean up under `id`) leaves its id to the next one.
  void LeaveIdleWaiterId(absl::string_view prefix, std::string id);

  const std::vector<std::unique_ptr<Subscriber>>& subscribers() const {
    return subscribers_;
  }

 private:
  struct Channel {
    std::vector<Waiter*> waiters;
    MonotonicTime idle_since;  // When `waiters` became empty.
    // When this client last released a lock on it (NoteReleased()).
    std::optional<MonotonicTime> released_at;
  };

  // Subscriber::Listener.
  void OnMessage(int master, absl::string_view channel,
                 absl::string_view payload) override;
  void OnSettled(bool after_loss) override;

  // Tells each of `waiters` still watching.
  void Tell(std::vector<Waiter*> waiters, Event event, int master = -1,
            absl::string_view successor = {});
  // Unsubscribes the channels nobody waited on for kLinger.
  void Sweep();

  Runtime* const runtime_;
  std::vector<std::unique_ptr<Subscriber>> subscribers_;
  // A channel is here while it is wanted on every subscriber.
  absl::flat_hash_map<std::string, Channel> channels_;
  // TakeIdleWaiterId(): by prefix, ids whose channel may still be idle.
  absl::flat_hash_map<std::string, std::vector<std::string>> idle_ids_;
  // Every watching waiter, with the number of its channels.
  absl::flat_hash_map<Waiter*, int> registered_;
  std::unique_ptr<Timer> sweep_timer_;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_WAKEUPS_H_
