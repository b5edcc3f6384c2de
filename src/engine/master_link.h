// Copyright 2026 The redlock Authors.
//
// What a quorum round needs from one master: send a command, get one answer.
// Master implements it over hiredis; unit tests implement it with fakes that
// the test answers by hand.

#ifndef REDLOCK_SRC_ENGINE_MASTER_LINK_H_
#define REDLOCK_SRC_ENGINE_MASTER_LINK_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "src/algorithm/redis_reply.h"
#include "src/algorithm/scripts.h"

namespace redlock::internal {

class MasterLink {
 public:
  using ReplyCallback = absl::AnyInvocable<void(absl::StatusOr<RedisReply>)>;

  virtual ~MasterLink() = default;

  // "host:port[/db]", for results and messages.
  virtual const std::string& name() const = 0;

  // Sends `command`. Commands sent to one link reach the master in the order
  // of the calls. Calls `done` exactly once, on the loop thread, never before
  // Send() returns, with:
  //   the reply       error replies included (a script's NOSCRIPT is handled
  //                   inside, by falling back to EVAL);
  //   kDeadlineExceeded  no reply within the request timeout;
  //   kUnavailable       not connected, or the connection was lost;
  //   kCancelled         the link was destroyed first.
  // Loop thread only.
  virtual void Send(const Command& command, ReplyCallback done) = 0;
  // The same, for a command shared by several links (a keep-alive batch's
  // chunk goes to every master): a link that keeps the command (to resend a
  // script as EVAL) may keep this one instead of a copy.
  virtual void Send(std::shared_ptr<const Command> command,
                    ReplyCallback done) {
    Send(*command, std::move(done));
  }
  // Sends the clean-up of a lost or abandoned attempt (a token-checked
  // release of what the attempt may have set here), which nobody waits for
  // but which must reach the master: a link that cannot send it now, or
  // loses the connection before its reply, sends it again on its next
  // connection, ahead of every command but the handshake, until `keep_for`
  // (the attempt's TTL: its keys are gone by then) has passed. The default
  // sends it once. Loop thread only.
  virtual void SendCleanup(const Command& command, absl::Duration keep_for) {
    Send(command, [](absl::StatusOr<RedisReply>) {});
  }
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_ENGINE_MASTER_LINK_H_
