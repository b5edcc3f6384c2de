// Copyright 2026 The redlock Authors.
//
// MasterHealth: what a client knows about each of its masters right now, for
// dashboards and alerts (AsyncRedlock::Health(), Redlock::Health()). It is a
// snapshot for people; the lock itself never relies on it — every decision
// is made from the votes of the request at hand.

#ifndef REDLOCK_HEALTH_H_
#define REDLOCK_HEALTH_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace redlock {

struct MasterHealth {
  // MasterAddress::Name(): "host:port" or "host:port/db".
  std::string master;
  // Connected, and the connection's handshake (AUTH, SELECT, script loads)
  // answered. A master that is stopped but still accepts TCP stays
  // connected until its requests time out and the connection is closed.
  bool connected = false;
  // OK, or why its wake-up subscription (RetryPolicy::wake_on_release)
  // last failed: a refused SUBSCRIBE (e.g. an ACL without the channel:
  // "subscriber: NOPERM ..."), a malformed message, a lost connection.
  // Waiters poll this master meanwhile; OK again once a subscription is
  // confirmed.
  absl::Status wakeups;
  // How the client reaches it: "tcp", "unix" or "tls".
  std::string transport;
  // For TLS, as negotiated on the current connection: the protocol version
  // and cipher, e.g. "TLSv1.3 TLS_AES_256_GCM_SHA384"; empty while not
  // connected, and for other transports.
  std::string tls;
  // Why the connection last failed or was closed, e.g. kUnavailable
  // "connect failed: Connection refused" or kUnauthenticated "AUTH failed:
  // ...". OK once a handshake has succeeded since.
  absl::Status last_error;
  // The restart guard's view of the master (docs/failure-behaviour.md):
  // "trusted", "reborn" (it restarted without its data), or empty while
  // unknown (no handshake yet) or without the restart guard's marker.
  std::string marker;
  // OK if its grants count. Otherwise kFailedPrecondition saying why not:
  //   "restart guard: not yet judged (...)"  not connected, handshake not
  //       done, or no marker yet (being written, or no marked master
  //       reachable to compare its uptime with);
  //   "restart guard: this master lost its data ..."  reborn, held back
  //       until it has been up for max_ttl (the message says how much longer);
  //   "restart guard: this master restarted ... after it was marked ..." or
  //   "restart guard: cannot tell whether this master restarted ..."  it
  //       kept its marker, but it restarted since the marker was written (or
  //       may have) and its persistence is not AOF with appendfsync always:
  //       held back until it has been up for max_ttl;
  //   "membership: ..."  the deployment's membership record (the set of
  //       masters it is made of, docs/failure-behaviour.md "Changing the
  //       masters") does not admit this vote: this client's list differs
  //       from the deployment's members (named both), this master is not a
  //       member, or is a member under another name, or belongs to another
  //       deployment, or carries no record yet, or its record was not read
  //       again in the last 2s;
  //   "same server as master K (...)"  a second address of a server already
  //       among the masters (same run_id): a round counts one grant per
  //       server, whichever of its addresses answers first.
  absl::Status grants_count;
  // This client's name for the master in the deployment's membership
  // (MasterAddress::MemberName()).
  std::string member;
  // The membership record the master carries, as last read: e.g.
  // "deployment=3f2a...;epoch=2;members=a,b,c;next=a,b,d;quorum=majority"
  // (`next` non-empty while the deployment changes its masters); empty if
  // it carries none or is unknown.
  std::string membership;
  // Its maxmemory-policy, as read in the last handshake; empty if unknown.
  std::string maxmemory_policy;
  // OK for noeviction (or unknown). Otherwise kFailedPrecondition: under
  // memory pressure the master may evict lock keys (volatile-* policies:
  // they have a TTL) or also the fencing counters and the deployment marker
  // (allkeys-*), and an evicted lock lets a second owner in.
  absl::Status eviction;
  // Its persistence as read in the last handshake (CONFIG GET of append*
  // and save): "aof always", "aof everysec", "aof no", "no aof, no rdb",
  // "no aof, rdb save \"3600 1\"", or "unknown (...)" when
  // the server refused CONFIG GET (an ACL without +config|get, a proxy);
  // empty before any handshake.
  std::string persistence;
  // OK for AOF with appendfsync always. Otherwise kFailedPrecondition: a
  // crash may bring the master back with part of its data (the newest
  // locks and fencing counters lost), so after any restart its grants count
  // only once it has been up for max_ttl, and its fencing counters are not
  // trusted again until an operator re-marks it (docs/failure-behaviour.md).
  // Unknown persistence counts as not durable.
  absl::Status durability;

  // Counts since the client was created.
  int64_t requests = 0;             // Commands sent, handshake included.
  int64_t replies = 0;              // Replies received.
  int64_t error_replies = 0;        // Of those, Redis errors (-ERR, -OOM, ...).
  int64_t timeouts = 0;             // Requests answered by our own timeout.
  int64_t connects = 0;             // Connections established.
  int64_t connection_failures = 0;  // Connects that failed or broke.
  int64_t noscript_fallbacks = 0;   // EVALSHA answered NOSCRIPT; sent EVAL.
  // The subscriber connection that wakes waiters
  // (RetryPolicy::wake_on_release), opened when an acquisition first waits:
  int64_t subscriber_requests = 0;  // AUTH, SUBSCRIBE, UNSUBSCRIBE sent.
  int64_t subscriber_messages = 0;  // Messages heard.
};

}  // namespace redlock

#endif  // REDLOCK_HEALTH_H_
