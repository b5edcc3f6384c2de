// Copyright 2026 The redlock Authors.
//
// Options for a Redlock client: which masters, how long locks live, how long to
// wait for each master, and how to retry.
//
// Options is a plain struct with in-class defaults. Validate() checks it the
// same way AsyncRedlock::Create() and Redlock::Create() do, so a caller can
// report bad configuration before building a client:
//
//   redlock::Options options;
//   options.masters = {"redis://127.0.0.1:7001", "redis://127.0.0.1:7002",
//                      "redis://127.0.0.1:7003"};
//   options.request_timeout = absl::Milliseconds(20);
//   if (absl::Status s = redlock::ValidateOptions(options); !s.ok()) { ... }

#ifndef REDLOCK_OPTIONS_H_
#define REDLOCK_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace redlock {

class Observer;  // observer.h

// How many masters must grant a lock (or an extension) for it to count.
enum class Quorum {
  // N/2 + 1 of N masters: the Redlock algorithm. Tolerates N - (N/2 + 1)
  // masters being down or unreachable.
  kMajority,
  // All N masters. Tolerates no failure; for deployments that prefer refusing
  // a lock to relying on a majority.
  kUnanimous,
};

// Parses "majority" or "unanimous". kInvalidArgument names the bad value.
absl::StatusOr<Quorum> ParseQuorum(absl::string_view text);
absl::string_view QuorumName(Quorum quorum);

// How a failed acquisition attempt is retried while the caller's wait budget
// lasts. Each delay is drawn uniformly from [min_delay, max_delay], so
// contenders that collided once do not collide again in lock step.
struct RetryPolicy {
  // Default: 20ms.
  absl::Duration min_delay = absl::Milliseconds(20);
  // Default: 60ms. Must be >= min_delay.
  absl::Duration max_delay = absl::Milliseconds(60);
  // At most this many attempts per acquisition, whatever the budget; 0 means
  // no limit besides the wait budget. Default: 0.
  int max_attempts = 0;
  // Waiters are woken when the lock they wait for is released, instead of
  // only polling. Every release publishes "released" on each master, on a
  // channel named as the lock's key (see ReleaseChannel() in keys.h); a
  // client whose acquisition failed because the lock was held subscribes to
  // it (one subscriber connection per master, opened on first need and
  // shared by all its waiters) before its next attempt, so a release after
  // that attempt cannot be missed. On a message its waiters retry after a
  // random delay of at most `wake_jitter` (see successor_grace for the
  // waiter a release names); a retry that wins publishes
  // "taken", and waiters that have not retried yet go back to waiting.
  // Polling with the delays above stays as the fallback for locks that
  // expire and messages that are lost; a "taken" heard after a release
  // goes back to the poll the release put off, never to a later one. A
  // client without hand_off that released a lock it
  // waited for lately and acquires it again within successor_grace +
  // min(wake_jitter, max_delay) + 2ms of that release first waits
  // successor_grace plus a jitter, as a waiter its release woke and did not
  // name does, so that it does not win every hand-off (not for a
  // semaphore's permits, a reader, or a wait shorter than that). Wake-ups only
  // change when attempts are made, never whether one counts. false: poll only.
  // Default: true.
  bool wake_on_release = true;
  // A woken waiter retries after a delay drawn uniformly from
  // [0, wake_jitter], so that the waiters one release wakes (in this process
  // and in others) do not all try at once; more than max_delay counts as
  // max_delay. Default: 4ms.
  absl::Duration wake_jitter = absl::Milliseconds(4);
  // Waiters queue (wake_on_release; a single-resource lock without
  // fencing): on each master, waiting writers are kept in the order they
  // were first refused there, and a release names the one queued longest
  // (kReleasedMessage in keys.h). The waiter named by a quorum of masters
  // tries at once (masters may disagree on who came first; quorums
  // intersect, so only one waiter can be named by a quorum); the others,
  // and a waiter named by fewer, hold back successor_grace plus their wake
  // jitter, so
  // that one attempt follows a release instead of the whole crowd's, and
  // the lock goes round in the order of arrival. If the named waiter has not
  // taken the lock by then (it is gone, or slow), the others try as usual.
  // Every attempt is still a full quorum round: the name is a hint about who
  // tries first, never a grant, and a forged or lost one costs at most this
  // grace. Zero: a waiter named or not tries after its jitter, as though
  // nobody were queued. Default: 5ms.
  absl::Duration successor_grace = absl::Milliseconds(5);
  // The release hands the lock, in the same step, to the waiter queued
  // longest among those that set hand_off (wake_on_release; a
  // single-resource lock without fencing, not shared): a waiter without it
  // keeps its place in the queue but is never handed the lock, so a later
  // waiter with hand_off can get it first. It takes one round trip from the
  // release to the next holder instead of two. Each refused attempt of such a
  // waiter leaves on that master a hand-off entry (its token, its TTL and a
  // fresh random proof; TTL at most 2 * max_delay + 200ms, refreshed by its
  // next attempt); a release that finds one sets the key to that token instead
  // of deleting it and publishes the proof (kGrantedMessage in keys.h, never
  // the token). The waiter holds the lock once masters that count for a quorum
  // have handed it over under the usual rules (the restart guard, membership,
  // one vote per server; a hand-off counts only from the server run that
  // master's command connection judged), with validity counted from the moment
  // the attempt whose proof a master used was sent, less the drift term, as for
  // any attempt. A proof it never sent grants nothing. A waiter that gives up
  // or is cancelled withdraws its entries and hands on anything handed to it,
  // in one step per master; a waiter handed a minority gives it back with its
  // next lost attempt. Every release hands over where an entry exists, whatever
  // its own client's setting. The cost: a waiter that dies without withdrawing
  // (SIGKILL) within an entry's TTL of a release may be handed the lock and
  // hold it, unused, for its TTL.
  // With hand_off, a client that waited for a lock lately (its channels
  // still subscribed, about 2s) queues with its first attempt of it, and
  // does not yield after its own release (the release handed the lock to
  // the waiter queued longest; its own attempt queues behind it). A waiter
  // handed the lock by fewer masters than a quorum (their queues disagreed
  // on who came first) tries again after successor_grace (at least twice
  // its last attempt's time, so that slower masters' hand-offs can come
  // first), which settles it: won, or given back so that the masters hand
  // it on.
  // Default: true.
  bool hand_off = true;
};

// How a master whose connection failed is reconnected: the first retry comes
// after `initial`, each further one after `multiplier` times the previous
// delay, at most `max`. A connection that completes its handshake resets it.
struct ReconnectBackoff {
  // Default: 20ms.
  absl::Duration initial = absl::Milliseconds(20);
  // Default: 1s. Must be >= initial.
  absl::Duration max = absl::Seconds(1);
  // Default: 2. Must be >= 1.
  double multiplier = 2.0;
};

// TLS for the masters reached over it: every rediss:// master, and every
// redis:// one when `enable` is set. The CLI takes these under redis-cli's
// names (--tls, --cacert, --cacertdir, --cert, --key, --sni, --insecure) and
// from REDLOCK_TLS_* variables. The files are read when the client is
// created: one that cannot be read, or a key that does not match its
// certificate, makes Create() fail with kInvalidArgument naming it.
struct TlsOptions {
  // Every redis:// master over TLS too, as if written rediss://. Default:
  // false.
  bool enable = false;
  // PEM file and/or directory (c_rehash layout) of the certificate
  // authorities a master's certificate must chain to. Both empty: the
  // system's default store (OpenSSL's default paths). Default: empty.
  std::string ca_file;
  std::string ca_dir;
  // A client certificate and its private key (PEM), for masters that ask
  // for one (redis-server does by default: tls-auth-clients yes). Both or
  // neither. Default: empty.
  std::string cert_file;
  std::string key_file;
  // The name sent as SNI and checked against every master's certificate,
  // instead of each master's host as written. Default: empty.
  std::string server_name;
  // Skips verifying the masters' certificates (and their names): anyone on
  // the path can then read and change the traffic, AUTH passwords included.
  // Warned about once (Options::on_warning). Default: false.
  bool insecure = false;
};

struct Options {
  // The independent Redis masters, as URIs:
  //   redis://[[user]:password@]host[:port][/db]     plain TCP
  //   rediss://[[user]:password@]host[:port][/db]    TLS (see `tls`)
  //   unix://[[user]:password@]/path/to/redis.sock   a Unix domain socket
  // Each may end in query parameters, '&'-separated: ?member=<name> (its
  // name in the deployment's membership, see MasterAddress::member),
  // ?db=<n> (the database, the only way to give one for unix://), and
  // ?tls_name=<name> (the name a TLS master's certificate is checked
  // against; ResolveMasterHosts() writes it when it replaces a host name).
  // `host` must be a numeric IPv4 address, a bracketed IPv6 address or
  // "localhost": the engine never resolves names on its loop thread. The
  // blocking client (Redlock::Create) resolves host names itself before its
  // loop starts; for AsyncRedlock call ResolveMasterHosts() first. Names are
  // resolved once, to one address each: every reconnection goes to that
  // address, so a master whose name later points elsewhere is not followed
  // (create a new client).
  // Port defaults to 6379, db to 0. User and password may be percent-encoded.
  // At least one master; no master twice. Default: none.
  std::vector<std::string> masters;

  // TTL used by the calls that take no TTL. Default: 10s.
  absl::Duration default_ttl = absl::Seconds(10);

  // The longest TTL any call may ask for; longer TTLs are kInvalidArgument.
  // It is also how long the restart guard holds back a master that restarted
  // without durable persistence (see restart_guard): keep it as small as the
  // longest TTL really used. Default: 1h. Must be <= 24h.
  absl::Duration max_ttl = absl::Hours(1);

  // Clock drift allowance, as a fraction of the TTL:
  // drift = ttl * drift_factor + 2ms. Must be in [0, 0.5). Default: 0.01.
  double drift_factor = 0.01;

  // An acquisition or extension whose remaining validity at the moment quorum
  // is reached is not greater than this fails with kDeadlineExceeded (an
  // acquisition retries while its wait lasts). A lock with a few microseconds
  // left is worse than none: its holder starts work it cannot protect.
  // Default: 10ms, more than a loopback round trip and a scheduler's time
  // slice, far less than any TTL a lock is used with. Must not be negative.
  absl::Duration min_validity = absl::Milliseconds(10);

  // A master that has not answered a request within this long is a failed
  // vote for that request. Must be positive and shorter than every TTL used.
  // Default: 50ms (the Redlock paper suggests 5-50ms for a 10s TTL).
  absl::Duration request_timeout = absl::Milliseconds(50);

  // A connection attempt that has not completed within this long fails and is
  // retried with `reconnect` backoff. For a TLS master the handshake counts
  // too: connected means TCP connected and TLS established (one round trip
  // more than TCP, plus the certificate work on both ends). The default
  // leaves room for that across a network with round trips up to about
  // 80ms; raise it for masters farther away. Must be positive. Default:
  // 250ms.
  absl::Duration connect_timeout = absl::Milliseconds(250);

  // A connection whose oldest request has had no reply for this long is
  // closed and reconnected. It stays open until then so that commands queued
  // behind a late request (the release behind a late SET) still reach the
  // master in order. Must be >= request_timeout. Default: 1s.
  absl::Duration stalled_connection_timeout = absl::Seconds(1);

  // Default: Quorum::kMajority.
  Quorum quorum = Quorum::kMajority;

  // The Redlock paper requires a master that crashed, with any persistence
  // short of fsync on every write, to stay out of the quorum for at least the
  // longest TTL (the delayed restart). With the guard on, the client enforces
  // it from the deployment marker every master carries: a grant counts only
  // from a master this client has judged. Held back (its grants are failed
  // votes, though it still receives every command) until it has been up for
  // max_ttl: a master that came back without the marker the others carry
  // (it lost its data), and a master that kept its marker but restarted
  // since it was marked without AOF appendfsync always (RDB snapshots and
  // appendfsync everysec lose the newest writes; unknown persistence, e.g.
  // CONFIG refused by an ACL, counts as not durable). A master not yet
  // judged casts no grant either. A brand-new deployment (no master carries
  // the marker) is not made to wait max_ttl, but its grants count only once
  // this client has heard every master answer unmarked and marked them all
  // trusted (or found another client's marking): until then every grant is a
  // failed vote ("not yet judged"), so with one master down a brand-new
  // deployment grants nothing. So set max_ttl to the longest TTL really
  // used, and the same on every client of a deployment. Turn the guard off
  // only for masters with AOF appendfsync always. See
  // docs/failure-behaviour.md. Default: true.
  bool restart_guard = true;

  // Prepended to every resource name to form the Redis key. Default:
  // "redlock:".
  std::string key_prefix = "redlock:";

  // Default: see RetryPolicy.
  RetryPolicy retry;

  // Default: see ReconnectBackoff.
  ReconnectBackoff reconnect;

  // Default: see TlsOptions (no TLS unless a master is rediss://).
  TlsOptions tls;

  // Called with a warning a person should see: masters whose
  // maxmemory-policy lets them evict the library's keys, (with the restart
  // guard) whose persistence can lose acknowledged writes in a crash
  // (MasterHealth::durability says what it costs), and whose TLS is not
  // verified. One line per kind of risk, counting and naming the masters
  // with it, given once every master has answered or failed, and at most
  // once per client; a master that shows a risk only later is in Health().
  // Runs on the client's loop thread; must not block. Default: none, and
  // warnings are written to stderr, each kind at most once per process.
  std::function<void(absl::string_view)> on_warning;

  // The operator has accepted masters whose persistence can lose
  // acknowledged writes in a crash (anything but AOF with appendfsync
  // always): the warning about it is not given. The cost stays — a master
  // that restarted casts no grant until it has been up for max_ttl — and
  // Health() still says it. Default: false.
  bool accept_non_durable_masters = false;

  // Told what the client does — attempts, grants, failures, extensions,
  // losses, releases, masters connecting and being judged — on the loop
  // thread (observer.h). Shared: one observer may serve several clients.
  // Default: none, at no cost.
  std::shared_ptr<Observer> observer;
};

// One parsed master URI.
struct MasterAddress {
  enum class Transport {
    kTcp,   // redis://
    kTls,   // rediss://, or redis:// with TlsOptions::enable.
    kUnix,  // unix://
  };
  Transport transport = Transport::kTcp;
  // kTcp, kTls: numeric address or host name as written, no brackets.
  // kUnix: empty.
  std::string host;
  int port = 6379;  // kUnix: 0.
  // kUnix: the socket's path (absolute).
  std::string path;
  // kTls: the name sent as SNI and checked against the certificate
  // (?tls_name=, else `host`): ResolveMasterHosts() keeps the host name as
  // written here when it makes `host` numeric. An IP address is checked
  // against the certificate's IP entries and sent as no SNI.
  std::string tls_name;
  int db = 0;
  std::string user;      // Empty: AUTH with the password only (or none).
  std::string password;  // Empty: no AUTH.
  bool has_password = false;
  // Its name in the deployment's membership (?member=<name> in the URI):
  // empty means Name(). Set it where clients reach one server by different
  // addresses (a proxy, a host name that resolves differently), so that all
  // of them call it by one name; ResolveMasterHosts() keeps the host name as
  // written as the member name.
  std::string member;

  // "host:port" or "host:port/db" ("unix:/path" or "unix:/path/db" for a
  // Unix socket), never the password, whatever the transport. Used to name
  // the master in results and errors.
  std::string Name() const;

  // kTls: tls_name if set, else host.
  std::string TlsName() const;

  // The URI again, credentials percent-encoded: ParseMasterUri(Uri())
  // gives this address back. Contains the password, if any.
  std::string Uri() const;

  // `member`, or Name() if that is empty.
  std::string MemberName() const;
};

// Parses one master URI. kInvalidArgument names the URI (without its
// password) and what is wrong with it.
absl::StatusOr<MasterAddress> ParseMasterUri(absl::string_view uri);

// Checks every option. OK, or kInvalidArgument naming the first bad field and
// why. Host names are accepted here; see Options::masters.
absl::Status ValidateOptions(const Options& options);

// Replaces host names in `options.masters` with numeric addresses, using the
// system resolver (the first address it returns for each name). Blocks on
// DNS: never call it on an event-loop thread. kInvalidArgument if a name
// does not resolve; `options` is then unchanged.
absl::Status ResolveMasterHosts(Options& options);

}  // namespace redlock

#endif  // REDLOCK_OPTIONS_H_
