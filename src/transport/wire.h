// Copyright 2026 The redlock Authors.
//
// The library's own connection to a Redis server (a Connection of
// src/transport/runtime.h), on one libevent loop: TCP, TLS
// (src/transport/tls.h) or a Unix domain socket. Commands are written here;
// hiredis only parses replies (src/transport/reply_reader.h). Nothing a server
// sends can crash or stall the process: whatever arrives ends as replies, or as
// the connection lost with a reason.
//
//  - Sockets are SOCK_NONBLOCK | SOCK_CLOEXEC, TCP ones TCP_NODELAY; every
//    write is send(MSG_NOSIGNAL), so a server that went away never raises
//    SIGPIPE in the caller's process (an AsyncRedlock runs on the caller's
//    thread: no signal mask can be relied on).
//  - In kReplies mode a reply, or any byte, arriving while no command awaits
//    one loses the connection ("nobody asked for"): the stream can no longer
//    be matched to commands, and an idle connection fed endless bytes is
//    dropped at the first of them. kPushes mode hands every message to
//    OnPush() (the subscriber matches them itself).
//  - Replies are bounded by ReplyReader; the output waiting to be sent by
//    kMaxOutputBytes (a server that stops reading loses the connection).
//  - Commands queued in one turn of the loop leave in one send(), at the
//    end of that turn (an activated event with no descriptor), and the write
//    event is armed only while connecting or when a send would block: a
//    command costs one system call out and one in, as with the adapter this
//    replaced.
//
// Loop thread only.

#ifndef REDLOCK_SRC_TRANSPORT_WIRE_H_
#define REDLOCK_SRC_TRANSPORT_WIRE_H_

#include <cstddef>
#include <memory>

#include "absl/status/statusor.h"
#include "redlock/options.h"
#include "src/transport/runtime.h"
#include "src/transport/tls.h"

struct event_base;

namespace redlock::internal {

// Bytes waiting to be sent beyond which the server counts as not reading.
inline constexpr size_t kMaxOutputBytes = 1 << 20;

// Starts connecting to `address`. `tls` is required for Transport::kTls
// (kFailedPrecondition without it). An error if the attempt failed at once
// (a Unix socket that does not exist, no descriptors left); then no
// observer call is made.
absl::StatusOr<std::unique_ptr<Connection>> OpenWireConnection(
    event_base* base, const MasterAddress& address,
    std::shared_ptr<const TlsContext> tls, ConnectionObserver* observer,
    ConnectionMode mode);

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_TRANSPORT_WIRE_H_
