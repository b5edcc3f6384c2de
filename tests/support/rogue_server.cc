// Copyright 2026 The redlock Authors.

#include "tests/support/rogue_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <deque>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace redlock::testing {
namespace {

constexpr absl::Duration kStep = absl::Milliseconds(50);
constexpr int64_t kOneMiB = 1 << 20;
constexpr size_t kReadChunk = 64 * 1024;

// The length of the first complete RESP2 value in `buf`; 0 if it is not
// complete yet, -1 if `buf` does not start with one. Only ever applied to
// what a client writes and what a real redis-server answers.
int64_t FrameLength(absl::string_view buf, int depth = 0) {
  if (buf.empty()) return 0;
  if (depth > 64) return -1;
  const size_t eol = buf.find("\r\n");
  if (eol == absl::string_view::npos) return buf.size() > kOneMiB ? -1 : 0;
  const absl::string_view line = buf.substr(1, eol - 1);
  const int64_t head = static_cast<int64_t>(eol + 2);
  int64_t n = 0;
  switch (buf[0]) {
    case '+':
    case '-':
    case ':':
      return head;
    case '$':
      if (!absl::SimpleAtoi(line, &n)) return -1;
      if (n < 0) return head;
      if (static_cast<int64_t>(buf.size()) < head + n + 2) return 0;
      return head + n + 2;
    case '*': {
      if (!absl::SimpleAtoi(line, &n)) return -1;
      int64_t pos = head;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t len = FrameLength(buf.substr(pos), depth + 1);
        if (len <= 0) return len;
        pos += len;
      }
      return pos;
    }
    default:
      return -1;
  }
}

// The bulk strings of a command (an array of bulk strings), at most the
// first two, the second cut at 64 bytes.
std::vector<std::string> FirstArgs(absl::string_view frame) {
  std::vector<std::string> args;
  if (frame.empty() || frame[0] != '*') return args;
  size_t pos = frame.find("\r\n") + 2;
  while (args.size() < 2 && pos < frame.size() && frame[pos] == '$') {
    const size_t eol = frame.find("\r\n", pos);
    int64_t n = 0;
    if (eol == absl::string_view::npos ||
        !absl::SimpleAtoi(frame.substr(pos + 1, eol - pos - 1), &n) || n < 0) {
      break;
    }
    args.emplace_back(frame.substr(eol + 2, std::min<int64_t>(n, 64)));
    pos = eol + 2 + n + 2;
  }
  return args;
}

// "NAME arg1": the command's name in upper case and its first argument.
std::string Label(absl::string_view frame) {
  std::vector<std::string> args = FirstArgs(frame);
  if (args.empty()) return "";
  std::string label = absl::AsciiStrToUpper(args[0]);
  if (args.size() > 1) absl::StrAppend(&label, " ", args[1]);
  return label;
}

bool LabelMatches(absl::string_view label, absl::string_view rule) {
  return !rule.empty() && absl::StartsWithIgnoreCase(label, rule);
}

std::string StandaloneReply(RogueServer::Standalone kind) {
  switch (kind) {
    case RogueServer::Standalone::kHttp:
      return "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n"
             "Content-Length: 12\r\nConnection: keep-alive\r\n\r\n"
             "Bad Request\n";
    case RogueServer::Standalone::kDeepNesting: {
      std::string s;
      for (int i = 0; i < 16; ++i) s += "*1\r\n";
      return s + ":1\r\n";
    }
    case RogueServer::Standalone::kLongBulk:
      return absl::StrCat("$", kOneMiB, "\r\n", std::string(kOneMiB, 'x'),
                          "\r\n");
    case RogueServer::Standalone::kLongStatus:
      return absl::StrCat("+", std::string(kOneMiB, 'x'), "\r\n");
    case RogueServer::Standalone::kNone:
      break;
  }
  return "";
}

int PollOne(int fd, short events, absl::Duration timeout) {
  pollfd p{fd, events, 0};
  const int r =
      poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout)));
  return r > 0 ? p.revents : 0;
}

}  // namespace

class RogueServer::Impl {
 public:
  Impl(Config config, int listener, int port)
      : config_(config), listener_(listener), port_(port) {
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }

  ~Impl() {
    stop_ = true;
    acceptor_.join();
    std::list<Worker> workers;
    {
      std::lock_guard<std::mutex> lock(mu_);
      workers.swap(workers_);
    }
    for (Worker& w : workers) w.thread.join();
    close(listener_);
  }

  int port() const { return port_; }

  void SetBehaviour(Behaviour behaviour) {
    std::lock_guard<std::mutex> lock(mu_);
    behaviour_ = std::move(behaviour);
  }

  Counters counters() const {
    std::lock_guard<std::mutex> lock(mu_);
    return counters_;
  }

 private:
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  // One client connection and, when fronting, its upstream connection.
  struct Conn {
    int client = -1;
    int upstream = -1;
    Behaviour behaviour;
    absl::Time accepted_at;
    Role role = Role::kAny;  // kAny: not known yet.
    std::string from_client;
    std::string from_upstream;
    std::deque<std::string> pending;  // Labels of commands not answered yet.
    int matching_replies = 0;
    bool reading = true;
    bool injected_idle = false;
    bool endless = false;
    absl::Time endless_last;
    double endless_credit = 0;
  };

  void Count(int64_t Counters::*field, int64_t n = 1) {
    std::lock_guard<std::mutex> lock(mu_);
    counters_.*field += n;
  }

  void AcceptLoop() {
    while (!stop_) {
      ReapFinished();
      if ((PollOne(listener_, POLLIN, kStep) & POLLIN) == 0) continue;
      const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      Count(&Counters::accepted);
      std::lock_guard<std::mutex> lock(mu_);
      if (static_cast<int>(workers_.size()) >= kMaxConnections) {
        close(fd);
        continue;
      }
      auto done = std::make_shared<std::atomic<bool>>(false);
      Behaviour behaviour = behaviour_;
      workers_.push_back(Worker{std::thread([this, fd, behaviour, done] {
                                  Serve(fd, behaviour);
                                  *done = true;
                                }),
                                done});
    }
  }

  void ReapFinished() {
    std::list<Worker> finished;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = workers_.begin(); it != workers_.end();) {
        if (*it->done) {
          finished.splice(finished.end(), workers_, it++);
        } else {
          ++it;
        }
      }
    }
    for (Worker& w : finished) w.thread.join();
  }

  bool Applies(const Conn& c) const {
    return c.behaviour.role == Role::kAny || c.behaviour.role == c.role;
  }

  // Writes all of `data` to `fd`, waiting in steps while the peer does not
  // read; false once the peer is gone or the server stops.
  bool WriteAll(int fd, absl::string_view data) {
    while (!data.empty()) {
      if (stop_) return false;
      const ssize_t n =
          send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        data.remove_prefix(n);
        continue;
      }
      if (n < 0 &&
          (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        PollOne(fd, POLLOUT, kStep);
        continue;
      }
      return false;
    }
    return true;
  }

  // Sends one reply (or a replacement) to the client; false if it is gone.
  bool Reply(Conn& c, const std::string& label, std::string out) {
    if (Applies(c)) {
      for (const auto& [rule, bytes] : c.behaviour.replace) {
        if (LabelMatches(label, rule)) {
          out = bytes;
          Count(&Counters::replaced);
          break;
        }
      }
      if (c.behaviour.inject_after_reply > 0 &&
          (c.behaviour.inject_after_command.empty() ||
           LabelMatches(label, c.behaviour.inject_after_command)) &&
          ++c.matching_replies == c.behaviour.inject_after_reply) {
        out += c.behaviour.inject;
        Count(&Counters::injected);
      }
    }
    if (Applies(c) && c.behaviour.drip) {
      for (char byte : out) {
        if (!WriteAll(c.client, absl::string_view(&byte, 1))) return false;
        for (absl::Time until = absl::Now() + absl::Seconds(1);
             absl::Now() < until;) {
          if (stop_) return false;
          absl::SleepFor(kStep);
        }
      }
    } else if (!WriteAll(c.client, out)) {
      return false;
    }
    if (Applies(c) && c.reading &&
        LabelMatches(label, c.behaviour.stop_reading_after)) {
      c.reading = false;
      Count(&Counters::stopped_reading);
    }
    return true;
  }

  // A complete command from the client.
  bool OnCommand(Conn& c, absl::string_view frame) {
    Count(&Counters::commands);
    const std::string label = Label(frame);
    // A subscriber sends AUTH (maybe) and INFO before its first SUBSCRIBE.
    if (c.role == Role::kAny && !absl::StartsWith(label, "AUTH") &&
        !absl::StartsWith(label, "INFO")) {
      c.role = absl::StartsWith(label, "SUBSCRIBE") ? Role::kSubscriber
                                                    : Role::kLock;
      Count(c.role == Role::kSubscriber ? &Counters::subscriber_connections
                                        : &Counters::lock_connections);
    }
    if (c.endless) return true;  // Read and dropped.
    if (config_.standalone != Standalone::kNone) {
      return Reply(c, label, StandaloneReply(config_.standalone));
    }
    c.pending.push_back(label);
    return WriteAll(c.upstream, frame);
  }

  // Idle-time faults; false if the client is gone.
  bool OnTick(Conn& c) {
    if (!Applies(c) || c.role == Role::kAny) return true;
    const absl::Time now = absl::Now();
    const bool idle = c.pending.empty();
    if (!c.injected_idle && idle && !c.behaviour.inject.empty() &&
        now - c.accepted_at >= c.behaviour.inject_after) {
      c.injected_idle = true;
      Count(&Counters::injected);
      if (!WriteAll(c.client, c.behaviour.inject)) return false;
    }
    if (!c.endless && idle &&
        now - c.accepted_at >= c.behaviour.endless_bulk_after) {
      c.endless = true;
      c.endless_last = now;
      if (!WriteAll(c.client, "$1000000000\r\n")) return false;
      Count(&Counters::endless_started);
    }
    if (c.endless) {
      // At most one second's worth is owed: what the kernel did not take
      // is dropped, not sent in a burst later.
      const double rate = static_cast<double>(c.behaviour.endless_bulk_rate);
      c.endless_credit = std::min(
          rate, c.endless_credit +
                    absl::ToDoubleSeconds(now - c.endless_last) * rate);
      c.endless_last = now;
      static const std::string* const kXs = new std::string(kReadChunk, 'x');
      while (c.endless_credit >= 1) {
        const size_t n = static_cast<size_t>(std::min<double>(
            c.endless_credit, static_cast<double>(kReadChunk)));
        const ssize_t sent =
            send(c.client, kXs->data(), n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
        if (sent <= 0) {
          c.endless_credit = 0;
          break;
        }
        c.endless_credit -= static_cast<double>(sent);
        Count(&Counters::endless_bytes, sent);
      }
    }
    return true;
  }

  int ConnectUpstream() {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(config_.upstream_port));
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      close(fd);
      return -1;
    }
    return fd;
  }

  void Serve(int fd, Behaviour behaviour) {
    Conn c;
    c.client = fd;
    c.behaviour = std::move(behaviour);
    c.accepted_at = absl::Now();
    if (config_.standalone == Standalone::kNone) {
      c.upstream = ConnectUpstream();
      if (c.upstream < 0) {
        close(fd);
        return;
      }
    }
    bool client_closed = false;
    char buf[kReadChunk];
    while (!stop_) {
      pollfd fds[2];
      int nfds = 0;
      fds[nfds++] = pollfd{
          c.client, static_cast<short>(c.reading ? POLLIN : POLLRDHUP), 0};
      if (c.upstream >= 0) fds[nfds++] = pollfd{c.upstream, POLLIN, 0};
      const int step_ms =
          c.endless ? 10 : static_cast<int>(absl::ToInt64Milliseconds(kStep));
      if (poll(fds, nfds, step_ms) < 0 && errno != EINTR) break;
      bool ok = true;
      if (!c.reading && (fds[0].revents & (POLLRDHUP | POLLHUP | POLLERR))) {
        client_closed = true;
        break;
      }
      if (c.reading && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
        const ssize_t n = recv(c.client, buf, sizeof(buf), 0);
        if (n <= 0) {
          client_closed = true;
          break;
        }
        c.from_client.append(buf, n);
        while (c.reading) {
          const int64_t len = FrameLength(c.from_client);
          if (len < 0) ok = false;  // Not RESP: a client we cannot serve.
          if (len <= 0) break;
          ok = OnCommand(c, absl::string_view(c.from_client).substr(0, len));
          c.from_client.erase(0, len);
          if (!ok) break;
        }
      }
      if (ok && nfds > 1 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
        const ssize_t n = recv(c.upstream, buf, sizeof(buf), 0);
        if (n <= 0) break;  // The upstream went away: so does the client.
        if (!c.endless) c.from_upstream.append(buf, n);
        for (;;) {
          const int64_t len = FrameLength(c.from_upstream);
          if (len < 0) ok = false;
          if (len <= 0) break;
          std::string label;
          if (!c.pending.empty()) {
            label = std::move(c.pending.front());
            c.pending.pop_front();
          }
          ok = Reply(c, label, c.from_upstream.substr(0, len));
          c.from_upstream.erase(0, len);
          if (!ok || c.endless) break;
        }
      }
      if (!ok || !OnTick(c)) {
        // A failed write: the client is gone (or we stop).
        client_closed = !stop_;
        break;
      }
    }
    if (client_closed) {
      Count(c.role == Role::kSubscriber ? &Counters::subscriber_closed_by_client
                                        : &Counters::lock_closed_by_client);
    }
    if (c.upstream >= 0) close(c.upstream);
    close(c.client);
  }

  const Config config_;
  const int listener_;
  const int port_;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  mutable std::mutex mu_;
  Behaviour behaviour_;        // Guarded by mu_.
  Counters counters_;          // Guarded by mu_.
  std::list<Worker> workers_;  // Guarded by mu_.
};

absl::StatusOr<std::unique_ptr<RogueServer>> RogueServer::Start(Config config) {
  if (config.standalone == Standalone::kNone &&
      (config.upstream_port <= 0 || config.upstream_port > 65535)) {
    return absl::InvalidArgumentError("RogueServer: no upstream port");
  }
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError("RogueServer: socket() failed");
  if (config.receive_buffer > 0) {
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &config.receive_buffer,
               sizeof(config.receive_buffer));
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      listen(fd, 16) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return absl::UnavailableError("RogueServer: cannot listen on 127.0.0.1");
  }
  return std::unique_ptr<RogueServer>(new RogueServer(
      std::make_unique<Impl>(config, fd, ntohs(addr.sin_port))));
}

RogueServer::RogueServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RogueServer::~RogueServer() = default;

int RogueServer::port() const { return impl_->port(); }

std::string RogueServer::Uri(absl::string_view password, int db) const {
  std::string uri = "redis://";
  if (!password.empty()) absl::StrAppend(&uri, ":", password, "@");
  absl::StrAppend(&uri, "127.0.0.1:", port());
  if (db != 0) absl::StrAppend(&uri, "/", db);
  return uri;
}

void RogueServer::SetBehaviour(Behaviour behaviour) {
  impl_->SetBehaviour(std::move(behaviour));
}

RogueServer::Counters RogueServer::counters() const {
  return impl_->counters();
}

}  // namespace redlock::testing
