// Copyright 2026 The redlock Authors.
//
// How it works. Every connection is a pair of bufferevents (client side,
// upstream side) on the proxy's own loop. Bytes read from one side go through
// a per-direction queue of chunks, each with the moment it is due; a timer
// per direction writes the due chunks to the other side. With no latency and
// an empty queue a chunk is written at once. Caller threads never touch
// loop state: every public method runs a closure on the loop thread and waits
// for it, so a fault is in force when the call returns.

#include "tests/support/fault_proxy.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace redlock::testing {
namespace {

using SteadyClock = std::chrono::steady_clock;

bool EnableLibeventThreads() {
  // event_active() from a caller thread must wake the proxy's loop.
  static const bool ok = evthread_use_pthreads() == 0;
  return ok;
}

timeval TimevalUntil(SteadyClock::time_point when) {
  auto left = std::max(when - SteadyClock::now(), SteadyClock::duration(0));
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(left).count();
  return timeval{static_cast<time_t>(us / 1000000),
                 static_cast<suseconds_t>(us % 1000000)};
}

// Parses a loopback address; only 127.0.0.0/8, ::1 and "localhost" pass.
bool LoopbackAddress(const std::string& host, int port, sockaddr_storage* addr,
                     socklen_t* len) {
  std::memset(addr, 0, sizeof(*addr));
  in_addr v4;
  in6_addr v6;
  const std::string h = host == "localhost" ? "127.0.0.1" : host;
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) {
    if ((ntohl(v4.s_addr) >> 24) != 127) return false;
    auto* sin = reinterpret_cast<sockaddr_in*>(addr);
    sin->sin_family = AF_INET;
    sin->sin_addr = v4;
    sin->sin_port = htons(static_cast<uint16_t>(port));
    *len = sizeof(sockaddr_in);
    return true;
  }
  if (inet_pton(AF_INET6, h.c_str(), &v6) == 1) {
    if (!IN6_IS_ADDR_LOOPBACK(&v6)) return false;
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(addr);
    sin6->sin6_family = AF_INET6;
    sin6->sin6_addr = v6;
    sin6->sin6_port = htons(static_cast<uint16_t>(port));
    *len = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

// A listening socket on 127.0.0.1:port (0: any free port), or -1 with errno.
int ListenOn(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(fd, 128) != 0) {
    const int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

int BoundPort(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return 0;
  }
  return ntohs(addr.sin_port);
}

void SetNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// Makes the next close() of `fd` send RST instead of FIN.
void SetLingerZero(int fd) {
  if (fd < 0) return;
  linger lg{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

}  // namespace

class FaultProxy::Impl {
 public:
  Impl(Config config, int listen_fd, int port, const sockaddr_storage& upstream,
       socklen_t upstream_len)
      : config_(std::move(config)),
        port_(port),
        upstream_(upstream),
        upstream_len_(upstream_len),
        base_(event_base_new()),
        wake_(event_new(base_, -1, EV_PERSIST, &Impl::WakeThunk, this)),
        reap_(event_new(base_, -1, 0, &Impl::ReapThunk, this)),
        relisten_timer_(evtimer_new(base_, &Impl::RelistenThunk, this)) {
    event_add(wake_, nullptr);
    Listen(listen_fd);
    thread_ = std::thread([this] { Run(); });
  }

  ~Impl() {
    RunOnLoop([this] {
      stopping_ = true;
      while (!conns_.empty()) CloseConn(conns_.begin()->second.get(), false);
      StopListening();
      evtimer_del(relisten_timer_);
      event_base_loopbreak(base_);
    });
    thread_.join();
    graveyard_.clear();
    event_free(relisten_timer_);
    event_free(reap_);
    event_free(wake_);
    event_base_free(base_);
  }

  bool ok() const { return base_ != nullptr && listener_ != nullptr; }
  int port() const { return port_; }

  void SetMode(Mode mode) {
    RunOnLoop([this, mode] {
      const Mode old = mode_;
      mode_ = mode;
      if (mode == Mode::kRefuse && old != Mode::kRefuse) StopListening();
      if (mode != Mode::kRefuse && old == Mode::kRefuse) Relisten();
      if (mode == Mode::kReset) ResetAll();
    });
  }

  void SetLatency(absl::Duration to_server, absl::Duration to_client) {
    RunOnLoop([&] {
      latency_[kToServer] =
          absl::ToChronoNanoseconds(std::max(to_server, absl::ZeroDuration()));
      latency_[kToClient] =
          absl::ToChronoNanoseconds(std::max(to_client, absl::ZeroDuration()));
    });
  }

  void CutAfterBytes(int64_t bytes) {
    RunOnLoop([&] { cut_after_ = std::max<int64_t>(bytes, 0); });
  }

  bool SetUpstreamPort(int port) {
    if (port <= 0 || port > 65535) return false;
    bool ok = false;
    RunOnLoop([&] {
      ok = LoopbackAddress("127.0.0.1", port, &upstream_, &upstream_len_);
    });
    return ok;
  }

  void ResetAllConnections() {
    RunOnLoop([this] { ResetAll(); });
  }

  void InjectToClient(const std::string& bytes) {
    RunOnLoop([&] {
      for (auto& [id, conn] : conns_) {
        (void)id;
        bufferevent_write(conn->client, bytes.data(), bytes.size());
      }
    });
  }

  Counters counters() const {
    std::lock_guard<std::mutex> lock(mu_);
    return counters_;
  }

 private:
  enum Direction { kToServer = 0, kToClient = 1 };

  struct Chunk {
    SteadyClock::time_point due;
    std::string bytes;
  };

  struct Conn;

  // Callbacks get a Side: which connection and which of its bufferevents.
  struct Side {
    Conn* conn;
    bool is_client;
  };

  // One direction of one connection: what was read from `from` and is
  // waiting to be written to `to`.
  struct Flow {
    Conn* conn = nullptr;
    Direction dir = kToServer;
    std::deque<Chunk> queue;
    event* timer = nullptr;
    bool source_eof = false;
  };

  struct Conn {
    Impl* impl = nullptr;
    uint64_t id = 0;
    bufferevent* client = nullptr;
    bufferevent* upstream = nullptr;
    bool upstream_connected = false;
    // Lost bytes in a blackhole: forwards nothing ever again.
    bool blackholed = false;
    int64_t forwarded = 0;
    Flow flows[2];
    Side client_side{this, true};
    Side upstream_side{this, false};
  };

  // ---- Caller threads ----

  void RunOnLoop(const std::function<void()>& fn) {
    if (std::this_thread::get_id() == thread_.get_id()) {
      fn();
      return;
    }
    auto task = std::make_shared<Task>();
    task->fn = &fn;
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.push_back(task);
    }
    event_active(wake_, EV_READ, 0);
    std::unique_lock<std::mutex> lock(mu_);
    task_done_.wait(lock, [&] { return task->done; });
  }

  // ---- Loop thread ----

  struct Task {
    const std::function<void()>* fn = nullptr;
    bool done = false;  // Guarded by mu_.
  };

  void Run() {
    // A write to a socket the peer reset must not kill the test binary.
    // Blocked for this thread only; the process's own handling is unchanged.
    sigset_t sigpipe;
    sigemptyset(&sigpipe);
    sigaddset(&sigpipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &sigpipe, nullptr);
    event_base_loop(base_, EVLOOP_NO_EXIT_ON_EMPTY);
  }

  static void WakeThunk(evutil_socket_t, short, void* arg) {
    static_cast<Impl*>(arg)->OnWake();
  }

  void OnWake() {
    std::vector<std::shared_ptr<Task>> tasks;
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks.swap(tasks_);
    }
    for (const std::shared_ptr<Task>& task : tasks) {
      (*task->fn)();
      std::lock_guard<std::mutex> lock(mu_);
      task->done = true;
    }
    if (!tasks.empty()) task_done_.notify_all();
  }

  void Listen(int fd) {
    listener_ = evconnlistener_new(
        base_, &Impl::AcceptThunk, this,
        LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE, -1,
        fd);
    if (listener_ == nullptr) close(fd);
  }

  void StopListening() {
    if (listener_ != nullptr) evconnlistener_free(listener_);
    listener_ = nullptr;
  }

  // Listens again on the same port; retried every 10ms while the port is
  // busy (e.g. connections of the old socket in TIME_WAIT are not a problem
  // with SO_REUSEADDR, but another process may have taken it).
  void Relisten() {
    if (listener_ != nullptr || stopping_ || mode_ == Mode::kRefuse) return;
    int fd = ListenOn(port_);
    if (fd >= 0) {
      Listen(fd);
      if (listener_ != nullptr) return;
    }
    std::fprintf(stderr, "fault_proxy: cannot listen on port %d again: %s\n",
                 port_, std::strerror(errno));
    timeval tv{0, 10000};
    evtimer_add(relisten_timer_, &tv);
  }

  static void RelistenThunk(evutil_socket_t, short, void* arg) {
    static_cast<Impl*>(arg)->Relisten();
  }

  static void AcceptThunk(evconnlistener*, evutil_socket_t fd, sockaddr*, int,
                          void* arg) {
    static_cast<Impl*>(arg)->OnAccept(fd);
  }

  void OnAccept(evutil_socket_t fd) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++counters_.accepted;
    }
    if (mode_ == Mode::kReset) {
      SetLingerZero(fd);
      close(fd);
      std::lock_guard<std::mutex> lock(mu_);
      ++counters_.resets;
      return;
    }
    SetNoDelay(fd);
    auto conn = std::make_unique<Conn>();
    Conn* c = conn.get();
    c->impl = this;
    c->id = next_id_++;
    for (Direction dir : {kToServer, kToClient}) {
      Flow& flow = c->flows[dir];
      flow.conn = c;
      flow.dir = dir;
      flow.timer = evtimer_new(base_, &Impl::FlowTimerThunk, &flow);
    }
    c->client = bufferevent_socket_new(base_, fd, BEV_OPT_CLOSE_ON_FREE);
    c->upstream = bufferevent_socket_new(base_, -1, BEV_OPT_CLOSE_ON_FREE);
    bufferevent_setcb(c->client, &Impl::ReadThunk, &Impl::WriteThunk,
                      &Impl::EventThunk, &c->client_side);
    bufferevent_setcb(c->upstream, &Impl::ReadThunk, &Impl::WriteThunk,
                      &Impl::EventThunk, &c->upstream_side);
    conns_[c->id] = std::move(conn);
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++counters_.open_connections;
    }
    bufferevent_enable(c->client, EV_READ | EV_WRITE);
    if (bufferevent_socket_connect(c->upstream,
                                   reinterpret_cast<sockaddr*>(&upstream_),
                                   static_cast<int>(upstream_len_)) != 0) {
      CloseConn(c, /*reset=*/false);
      return;
    }
    bufferevent_enable(c->upstream, EV_READ | EV_WRITE);
  }

  static void ReadThunk(bufferevent* bev, void* arg) {
    auto* side = static_cast<Side*>(arg);
    side->conn->impl->OnRead(side->conn, side->is_client);
  }
  static void WriteThunk(bufferevent*, void* arg) {
    auto* side = static_cast<Side*>(arg);
    side->conn->impl->MaybeFinish(side->conn);
  }
  static void EventThunk(bufferevent*, short what, void* arg) {
    auto* side = static_cast<Side*>(arg);
    side->conn->impl->OnEvent(side->conn, side->is_client, what);
  }
  static void FlowTimerThunk(evutil_socket_t, short, void* arg) {
    auto* flow = static_cast<Flow*>(arg);
    flow->conn->impl->FlushDue(flow);
  }

  void OnRead(Conn* c, bool from_client) {
    bufferevent* from = from_client ? c->client : c->upstream;
    evbuffer* input = bufferevent_get_input(from);
    const size_t n = evbuffer_get_length(input);
    if (n == 0) return;
    std::string bytes(n, '\0');
    evbuffer_remove(input, bytes.data(), n);
    if (mode_ == Mode::kBlackhole || c->blackholed) {
      c->blackholed = true;  // Read and dropped, for good.
      return;
    }
    Flow& flow = c->flows[from_client ? kToServer : kToClient];
    const auto latency = latency_[flow.dir];
    if (latency == SteadyClock::duration::zero() && flow.queue.empty()) {
      Forward(c, flow.dir, std::move(bytes));  // May close `c`.
      return;
    }
    SteadyClock::time_point due = SteadyClock::now() + latency;
    // Order within a direction is kept even if the latency was lowered.
    if (!flow.queue.empty()) due = std::max(due, flow.queue.back().due);
    flow.queue.push_back(Chunk{due, std::move(bytes)});
    if (!evtimer_pending(flow.timer, nullptr)) {
      timeval tv = TimevalUntil(flow.queue.front().due);
      evtimer_add(flow.timer, &tv);
    }
  }

  void FlushDue(Flow* flow) {
    Conn* c = flow->conn;
    const SteadyClock::time_point now = SteadyClock::now();
    while (!flow->queue.empty() && flow->queue.front().due <= now) {
      std::string bytes = std::move(flow->queue.front().bytes);
      flow->queue.pop_front();
      if (!Forward(c, flow->dir, std::move(bytes))) return;  // Closed.
    }
    if (!flow->queue.empty()) {
      timeval tv = TimevalUntil(flow->queue.front().due);
      evtimer_add(flow->timer, &tv);
      return;
    }
    MaybeFinish(c);
  }

  // Writes `bytes` to the destination of `dir`, cutting the connection if
  // that crosses the byte limit. False if the connection was closed.
  bool Forward(Conn* c, Direction dir, std::string bytes) {
    bufferevent* to = dir == kToServer ? c->upstream : c->client;
    bool cut = false;
    if (cut_after_ > 0) {
      const int64_t allowed = std::max<int64_t>(cut_after_ - c->forwarded, 0);
      if (static_cast<int64_t>(bytes.size()) >= allowed) {
        bytes.resize(static_cast<size_t>(allowed));
        cut = true;
      }
    }
    if (!bytes.empty()) {
      bufferevent_write(to, bytes.data(), bytes.size());
      c->forwarded += static_cast<int64_t>(bytes.size());
      std::lock_guard<std::mutex> lock(mu_);
      (dir == kToServer ? counters_.bytes_to_server
                        : counters_.bytes_to_client) +=
          static_cast<int64_t>(bytes.size());
    }
    if (!cut) return true;
    // The bytes up to the limit go out before the RST.
    int fd = bufferevent_getfd(to);
    if (fd >= 0 && (dir == kToClient || c->upstream_connected)) {
      evbuffer_write(bufferevent_get_output(to), fd);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++counters_.cuts;
    }
    CloseConn(c, /*reset=*/true);
    return false;
  }

  void OnEvent(Conn* c, bool client_side, short what) {
    if (!client_side && (what & BEV_EVENT_CONNECTED)) {
      c->upstream_connected = true;
      SetNoDelay(bufferevent_getfd(c->upstream));
      return;
    }
    if (what & BEV_EVENT_ERROR) {
      // Includes a failed upstream connect: the client sees the connection
      // closed.
      CloseConn(c, /*reset=*/false);
      return;
    }
    if (what & BEV_EVENT_EOF) {
      // Stop reading that side; whatever it sent still goes out first.
      bufferevent* from = client_side ? c->client : c->upstream;
      bufferevent_disable(from, EV_READ);
      c->flows[client_side ? kToServer : kToClient].source_eof = true;
      MaybeFinish(c);
    }
  }

  // Once a side has closed and everything it sent is delivered, closes the
  // connection.
  void MaybeFinish(Conn* c) {
    for (Direction dir : {kToServer, kToClient}) {
      Flow& flow = c->flows[dir];
      if (!flow.source_eof || !flow.queue.empty()) continue;
      bufferevent* to = dir == kToServer ? c->upstream : c->client;
      if (evbuffer_get_length(bufferevent_get_output(to)) == 0 ||
          (dir == kToServer && !c->upstream_connected)) {
        CloseConn(c, /*reset=*/false);
        return;
      }
    }
  }

  void ResetAll() {
    int64_t n = 0;
    while (!conns_.empty()) {
      CloseConn(conns_.begin()->second.get(), /*reset=*/true);
      ++n;
    }
    std::lock_guard<std::mutex> lock(mu_);
    counters_.resets += n;
  }

  // Closes both sides (with RST if `reset`) and frees the connection on a
  // later loop turn; no callback of it runs after this.
  void CloseConn(Conn* c, bool reset) {
    auto it = conns_.find(c->id);
    if (it == conns_.end()) return;
    if (reset) {
      SetLingerZero(bufferevent_getfd(c->client));
      SetLingerZero(bufferevent_getfd(c->upstream));
    }
    bufferevent_free(c->client);
    bufferevent_free(c->upstream);
    c->client = nullptr;
    c->upstream = nullptr;
    for (Flow& flow : c->flows) {
      event_free(flow.timer);
      flow.timer = nullptr;
    }
    graveyard_.push_back(std::move(it->second));
    conns_.erase(it);
    if (!stopping_) event_active(reap_, EV_READ, 0);
    std::lock_guard<std::mutex> lock(mu_);
    --counters_.open_connections;
  }

  static void ReapThunk(evutil_socket_t, short, void* arg) {
    static_cast<Impl*>(arg)->graveyard_.clear();
  }

  const Config config_;
  const int port_;
  sockaddr_storage
      upstream_;  // Not const: connect() takes a non-const pointer.
  socklen_t upstream_len_;  // With upstream_: SetUpstreamPort().

  // Loop thread only (set up before the thread starts).
  event_base* const base_;
  event* const wake_;
  event* const reap_;
  event* const relisten_timer_;
  evconnlistener* listener_ = nullptr;
  Mode mode_ = Mode::kPass;
  SteadyClock::duration latency_[2] = {SteadyClock::duration::zero(),
                                       SteadyClock::duration::zero()};
  int64_t cut_after_ = 0;
  bool stopping_ = false;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::unique_ptr<Conn>> conns_;
  std::vector<std::unique_ptr<Conn>> graveyard_;

  mutable std::mutex mu_;
  std::condition_variable task_done_;
  std::vector<std::shared_ptr<Task>> tasks_;  // Guarded by mu_.
  Counters counters_;                         // Guarded by mu_.

  std::thread thread_;
};

absl::StatusOr<std::unique_ptr<FaultProxy>> FaultProxy::Start(Config config) {
  if (config.upstream_port <= 0 || config.upstream_port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad upstream port ", config.upstream_port));
  }
  if (config.listen_port < 0 || config.listen_port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad listen port ", config.listen_port));
  }
  sockaddr_storage upstream;
  socklen_t upstream_len = 0;
  if (!LoopbackAddress(config.upstream_host, config.upstream_port, &upstream,
                       &upstream_len)) {
    return absl::InvalidArgumentError(
        absl::StrCat("upstream host \"", config.upstream_host,
                     "\" is not a numeric loopback address"));
  }
  if (!EnableLibeventThreads()) {
    return absl::InternalError("libevent has no pthreads support");
  }
  const int fd = ListenOn(config.listen_port);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on 127.0.0.1:", config.listen_port, ": ",
                     std::strerror(errno)));
  }
  const int port = BoundPort(fd);
  auto impl = std::make_unique<Impl>(std::move(config), fd, port, upstream,
                                     upstream_len);
  if (!impl->ok()) return absl::InternalError("cannot set up the event loop");
  return std::unique_ptr<FaultProxy>(new FaultProxy(std::move(impl)));
}

FaultProxy::FaultProxy(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FaultProxy::~FaultProxy() = default;

int FaultProxy::port() const { return impl_->port(); }
std::string FaultProxy::Uri() const {
  return absl::StrCat("redis://127.0.0.1:", impl_->port());
}
void FaultProxy::SetMode(Mode mode) { impl_->SetMode(mode); }
void FaultProxy::SetLatency(absl::Duration to_server,
                            absl::Duration to_client) {
  impl_->SetLatency(to_server, to_client);
}
void FaultProxy::CutAfterBytes(int64_t bytes) { impl_->CutAfterBytes(bytes); }
void FaultProxy::ResetAllConnections() { impl_->ResetAllConnections(); }
void FaultProxy::InjectToClient(const std::string& bytes) {
  impl_->InjectToClient(bytes);
}
bool FaultProxy::SetUpstreamPort(int port) {
  return impl_->SetUpstreamPort(port);
}
FaultProxy::Counters FaultProxy::counters() const { return impl_->counters(); }

}  // namespace redlock::testing
