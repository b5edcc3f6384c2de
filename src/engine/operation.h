// Copyright 2026 The redlock Authors.
//
// Operation, the base of the engine's operations (acquire, extend,
// release, keep-alive; one file each), and what they share.
// Loop thread only.

#ifndef REDLOCK_SRC_ENGINE_OPERATION_H_
#define REDLOCK_SRC_ENGINE_OPERATION_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "src/engine/operation_host.h"
#include "src/engine/quorum_round.h"

namespace redlock::internal {

// A wait longer than this is "until it succeeds"; it keeps deadlines finite.
inline constexpr absl::Duration kLongestWait = absl::Hours(24 * 365);

// A loss's code in words, for messages.
inline absl::string_view LossSummary(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kAborted:
      return "held by another owner";
    case absl::StatusCode::kUnavailable:
      return "too few masters answered";
    case absl::StatusCode::kDeadlineExceeded:
      return "no validity left";
    default:
      return "failed";
  }
}

// An acquire, extend or release in flight. Runs its quorum rounds and hands
// its one result to Engine::Finish().
class Operation : public std::enable_shared_from_this<Operation> {
 public:
  explicit Operation(OperationHost* host) : host_(host) {}
  virtual ~Operation() = default;

  // Names it in messages: acquire "recalc-ratings". A NamedOperation's is
  // made once; a keep-alive (one per lock kept alive) makes it on demand.
  virtual std::string What() const = 0;

  // The engine is going away: stop the round (nothing more is sent) and
  // answer kCancelled.
  void Cancel() {
    cancelled_ = true;
    CancelRound();
    OnCancel();
    Fail(absl::CancelledError(
        absl::StrCat(What(), ": the client was shut down")));
  }

 protected:
  // Hands `result` to `done` on a later loop turn.
  template <typename Callback, typename Result>
  void Deliver(Callback& done, Result result) {
    host_->Finish(
        this, [done = std::move(done), result = std::move(result)]() mutable {
          done(std::move(result));
        });
  }

  // Cancel(): stops a round in flight (a NamedOperation's).
  virtual void CancelRound() {}
  virtual void Fail(absl::Status status) = 0;
  virtual void OnCancel() {}

  // Cancel() ran: the engine is going away; start nothing.
  bool cancelled() const { return cancelled_; }

  OperationHost* const host_;

 private:
  // Last: a derived class's first small members may share its word (a
  // keep-alive's flags, KeepAliveOp).
  bool cancelled_ = false;
};

// An operation with its name made when it starts (acquire, extend, release).
class NamedOperation : public Operation {
 public:
  // `what` names it in messages: acquire "recalc-ratings".
  NamedOperation(OperationHost* host, std::string what)
      : Operation(host), what_(std::move(what)) {}

  std::string What() const override { return what_; }

 protected:
  void StartRound(RoundConfig config) {
    round_ = QuorumRound::Start(
        host_->links(), std::move(config), host_->runtime(),
        [self = shared_from_this()](RoundResult result) {
          auto* op = static_cast<NamedOperation*>(self.get());
          op->round_.reset();
          op->OnRound(std::move(result));
        });
  }

  // Stops the round in flight, if any (nothing more is sent; late replies
  // are dropped). True if there was one.
  bool StopRound() {
    if (round_ == nullptr) return false;
    round_->Cancel();
    round_.reset();
    return true;
  }

  // The round started by StartRound() was decided.
  virtual void OnRound(RoundResult result) {}

  const std::string what_;

 private:
  void CancelRound() override { StopRound(); }

  std::shared_ptr<QuorumRound> round_;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_OPERATION_H_
