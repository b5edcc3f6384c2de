// Copyright 2026 The redlock Authors.

#include "src/transport/wire.h"

#include <arpa/inet.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "src/algorithm/redis_reply.h"
#include "src/transport/reply_reader.h"

namespace redlock::internal {
namespace {

// Read at most this much per readiness; a full read reads again.
constexpr size_t kReadChunk = 16 * 1024;

std::string Errno(int error) { return std::strerror(error); }

// A reply, in a few characters, for an error message.
std::string Sketch(const RedisReply& reply) {
  auto cut = [](const std::string& s) {
    return absl::CHexEscape(s.size() > 40 ? s.substr(0, 40) + "..." : s);
  };
  switch (reply.type) {
    case RedisReply::Type::kStatus:
      return absl::StrCat("a status \"", cut(reply.str), "\"");
    case RedisReply::Type::kError:
      return absl::StrCat("an error \"", cut(reply.str), "\"");
    case RedisReply::Type::kInteger:
      return absl::StrCat("an integer ", reply.integer);
    case RedisReply::Type::kString:
      return absl::StrCat("a bulk string \"", cut(reply.str), "\"");
    case RedisReply::Type::kNil:
      return "a nil";
    case RedisReply::Type::kArray:
      return absl::StrCat("an array of ", reply.elements.size());
  }
  return "a reply";
}

class WireConnection final : public Connection {
 public:
  WireConnection(event_base* base, ConnectionObserver* observer,
                 ConnectionMode mode, std::unique_ptr<TlsSession> tls)
      : base_(base), observer_(observer), mode_(mode), tls_(std::move(tls)) {}

  ~WireConnection() override {
    if (destroyed_ != nullptr) *destroyed_ = true;
    CloseSocket();
    if (flush_ != nullptr) event_free(flush_);
    if (report_ != nullptr) event_free(report_);
  }

  // Makes the socket and starts connecting.
  absl::Status Start(const MasterAddress& address) {
    flush_ = event_new(base_, -1, 0, &WireConnection::OnFlush, this);
    report_ = event_new(base_, -1, 0, &WireConnection::OnReport, this);
    if (flush_ == nullptr || report_ == nullptr) {
      return absl::InternalError("cannot make the connection's events");
    }
    sockaddr_storage storage{};
    socklen_t length = 0;
    int family = AF_UNIX;
    if (address.transport == MasterAddress::Transport::kUnix) {
      auto* un = reinterpret_cast<sockaddr_un*>(&storage);
      if (address.path.size() >= sizeof(un->sun_path)) {
        return absl::InvalidArgumentError(
            absl::StrCat("Unix socket path is longer than ",
                         sizeof(un->sun_path) - 1, " bytes"));
      }
      un->sun_family = AF_UNIX;
      std::memcpy(un->sun_path, address.path.data(), address.path.size());
      length = sizeof(sockaddr_un);
    } else if (auto* in4 = reinterpret_cast<sockaddr_in*>(&storage);
               inet_pton(AF_INET, address.host.c_str(), &in4->sin_addr) == 1) {
      family = in4->sin_family = AF_INET;
      in4->sin_port = htons(static_cast<uint16_t>(address.port));
      length = sizeof(sockaddr_in);
    } else if (auto* in6 = reinterpret_cast<sockaddr_in6*>(&storage);
               inet_pton(AF_INET6, address.host.c_str(), &in6->sin6_addr) ==
               1) {
      family = in6->sin6_family = AF_INET6;
      in6->sin6_port = htons(static_cast<uint16_t>(address.port));
      length = sizeof(sockaddr_in6);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("host \"", address.host, "\" is not a numeric address"));
    }
    fd_ = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) {
      return absl::UnavailableError(
          absl::StrCat("connect failed: socket: ", Errno(errno)));
    }
    if (family != AF_UNIX) {
      const int one = 1;
      setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    read_ = event_new(base_, fd_, EV_READ | EV_PERSIST, &WireConnection::OnRead,
                      this);
    write_ = event_new(base_, fd_, EV_WRITE, &WireConnection::OnWrite, this);
    if (read_ == nullptr || write_ == nullptr) {
      return absl::InternalError("cannot make the connection's events");
    }
    int r;
    do {
      r = connect(fd_, reinterpret_cast<sockaddr*>(&storage), length);
    } while (r != 0 && errno == EINTR);
    // EAGAIN from a Unix socket is a full listen backlog, not a connect in
    // progress.
    if (r != 0 && errno != EINPROGRESS) {
      return absl::UnavailableError(
          absl::StrCat("connect failed: ", Errno(errno)));
    }
    // Connected or not, the outcome is reported from the loop: the write
    // event fires at once for a socket already connected.
    event_add(write_, nullptr);
    return absl::OkStatus();
  }

  bool SendArgs(absl::Span<const absl::string_view> argv) override {
    return Queue(argv, absl::string_view());
  }

  bool SendEncoded(absl::Span<const absl::string_view> argv,
                   absl::string_view encoded) override {
    return Queue(argv, encoded);
  }

  void FlushBeforeClose() override {
    if (phase_ != Phase::kOpen || in_callback_ > 0) return;
    WriteOut(/*report=*/false);
  }

  std::string TlsDescription() const override {
    return tls_ != nullptr && phase_ == Phase::kOpen ? tls_->Description()
                                                     : std::string();
  }

  std::string ConnectProgress() const override {
    if (phase_ == Phase::kHandshaking) {
      return received_ == 0
                 ? "TCP connected; the server did not answer TLS (a plain, "
                   "non-TLS port? use redis:// for it)"
                 : "TCP connected; the TLS handshake did not complete";
    }
    return "";
  }

 private:
  enum class Phase { kConnecting, kHandshaking, kOpen, kDead };

  // SendArgs()/SendEncoded(): `encoded`, if not empty, is argv's RESP text.
  bool Queue(absl::Span<const absl::string_view> argv,
             absl::string_view encoded) {
    if (phase_ == Phase::kDead || failing_) return false;
    absl::Status status;
    if (tls_ != nullptr && phase_ == Phase::kOpen) {
      if (encoded.empty()) {
        scratch_.clear();
        AppendRespCommand(argv, &scratch_);
        encoded = scratch_;
      }
      status = tls_->Encrypt(encoded, &out_);
    } else {
      // Plain, or TLS until the handshake is done.
      std::string* to = tls_ != nullptr ? &plain_ : &out_;
      if (encoded.empty()) {
        AppendRespCommand(argv, to);
      } else {
        to->append(encoded.data(), encoded.size());
      }
    }
    ++awaiting_;
    if (!status.ok()) {
      FailLater(std::move(status));
      return false;
    }
    if (out_.size() - out_pos_ + plain_.size() > kMaxOutputBytes) {
      FailLater(absl::UnavailableError(absl::StrCat(
          "the server is not reading: ", out_.size() - out_pos_ + plain_.size(),
          " bytes wait to be sent (at most ", kMaxOutputBytes, ")")));
      return false;
    }
    if (phase_ == Phase::kOpen && !event_pending(write_, EV_WRITE, nullptr)) {
      // One send for everything queued in this turn of the loop.
      event_active(flush_, 0, 0);
    }
    return true;
  }

  static void OnRead(int, short, void* arg) {
    static_cast<WireConnection*>(arg)->Readable();
  }
  static void OnWrite(int, short, void* arg) {
    static_cast<WireConnection*>(arg)->Writable();
  }
  static void OnFlush(int, short, void* arg) {
    auto* self = static_cast<WireConnection*>(arg);
    if (self->phase_ == Phase::kOpen) self->WriteOut(/*report=*/true);
  }
  static void OnReport(int, short, void* arg) {
    auto* self = static_cast<WireConnection*>(arg);
    self->Fail(std::move(self->failure_));
  }

  // Makes an observer call; false if the observer destroyed this inside it.
  template <typename Call>
  bool Notify(Call call) {
    bool destroyed = false;
    bool* outer = destroyed_;
    destroyed_ = &destroyed;
    ++in_callback_;
    call();
    if (destroyed) {
      if (outer != nullptr) *outer = true;
      return false;
    }
    --in_callback_;
    destroyed_ = outer;
    return true;
  }

  void CloseSocket() {
    if (read_ != nullptr) event_free(read_);
    if (write_ != nullptr) event_free(write_);
    read_ = write_ = nullptr;
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

  // Reports `why` from the loop: a Connection method never calls the
  // observer.
  void FailLater(absl::Status why) {
    if (failing_) return;
    failing_ = true;
    failure_ = std::move(why);
    event_active(report_, 0, 0);
  }

  // The connection is dead: OnConnect(error) if it never connected,
  // OnLost otherwise. Loop callbacks only. May destroy this.
  void Fail(absl::Status why) {
    if (phase_ == Phase::kDead) return;
    const bool reported = connect_reported_;
    phase_ = Phase::kDead;
    CloseSocket();
    Notify([&] {
      if (reported) {
        observer_->OnLost(std::move(why));
      } else {
        observer_->OnConnect(std::move(why));
      }
    });
  }

  void Writable() {
    if (phase_ == Phase::kConnecting) {
      int error = 0;
      socklen_t len = sizeof(error);
      if (getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &len) != 0) {
        error = errno;
      }
      if (error != 0) {
        Fail(absl::UnavailableError(
            absl::StrCat("connect failed: ", Errno(error))));
        return;
      }
      event_add(read_, nullptr);
      if (tls_ != nullptr) {
        phase_ = Phase::kHandshaking;
        absl::StatusOr<bool> done = tls_->Handshake("", &out_);
        if (!done.ok()) {
          Fail(done.status());
          return;
        }
        WriteOut(/*report=*/true);
        return;
      }
      Opened();
      return;
    }
    WriteOut(/*report=*/true);
  }

  // Connected (and the TLS handshake done): tells the observer, then sends
  // what was queued meanwhile.
  // False if the connection died (and may be gone): touch nothing then.
  bool Opened() {
    phase_ = Phase::kOpen;
    if (!plain_.empty()) {
      absl::Status status = tls_->Encrypt(plain_, &out_);
      plain_.clear();
      plain_.shrink_to_fit();
      if (!status.ok()) {
        Fail(std::move(status));  // As OnConnect(error): never reported.
        return false;
      }
    }
    connect_reported_ = true;
    if (!Notify([&] { observer_->OnConnect(absl::OkStatus()); })) return false;
    if (phase_ != Phase::kOpen) return false;
    return WriteOut(/*report=*/true);
  }

  // Sends what is queued, as far as the socket takes it; arms the write
  // event for the rest. With `report` false (FlushBeforeClose) a failure is
  // only noted. False if the connection died reporting it (and may be
  // gone): touch nothing then.
  bool WriteOut(bool report) {
    while (out_pos_ < out_.size()) {
      const ssize_t n = send(fd_, out_.data() + out_pos_,
                             out_.size() - out_pos_, MSG_NOSIGNAL);
      if (n > 0) {
        out_pos_ += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        event_add(write_, nullptr);
        return true;
      }
      absl::Status lost = absl::UnavailableError(
          absl::StrCat("connection lost: ", Errno(n < 0 ? errno : EPIPE)));
      if (report) {
        Fail(std::move(lost));
        return false;
      }
      FailLater(std::move(lost));
      return true;
    }
    // The buffer keeps its room while what goes out fills a good part of it
    // (a keep-alive's batches, turn after turn, would otherwise grow it
    // again from nothing each time); a large buffer that was mostly empty
    // this time is given back.
    const size_t used = out_.size();
    out_.clear();
    out_pos_ = 0;
    if (out_.capacity() > 4 * kReadChunk && used < out_.capacity() / 4) {
      out_.shrink_to_fit();
    }
    return true;
  }

  void Readable() {
    char buf[kReadChunk];
    for (;;) {
      const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n == 0) {
        Fail(absl::UnavailableError(
            phase_ == Phase::kHandshaking
                ? "TLS handshake failed: the server closed the connection "
                  "(a plain, non-TLS port? use redis:// for it)"
                : absl::StrCat("connection closed by the server",
                               NothingYetHint())));
        return;
      }
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        Fail(absl::UnavailableError(
            absl::StrCat("connection lost: ", Errno(errno), NothingYetHint())));
        return;
      }
      received_ += static_cast<size_t>(n);
      if (!Received(absl::string_view(buf, static_cast<size_t>(n)))) return;
      if (static_cast<size_t>(n) < sizeof(buf)) return;
    }
  }

  // What a plain connection that ends before any reply may be: a TLS port
  // (redis-server resets or closes a connection whose first bytes are not
  // a TLS handshake, without a word).
  std::string NothingYetHint() const {
    if (tls_ != nullptr || received_ > 0) return "";
    return " before any reply (a TLS port? if the server speaks TLS only, "
           "use rediss:// or --tls)";
  }

  // Bytes off the socket. False if the connection died or was destroyed.
  bool Received(absl::string_view bytes) {
    if (tls_ == nullptr) return Process(bytes);
    std::string& plain = plain_in_;
    plain.clear();
    if (phase_ == Phase::kHandshaking) {
      absl::StatusOr<bool> done = tls_->Handshake(bytes, &out_);
      if (!done.ok()) {
        Fail(done.status());
        return false;
      }
      if (!*done) return WriteOut(/*report=*/true);
      if (!Opened()) return false;
      bytes = absl::string_view();  // Whatever else came is in the session.
    }
    absl::Status status = tls_->Decrypt(bytes, &plain, &out_);
    if (out_pos_ < out_.size() && !WriteOut(/*report=*/true)) return false;
    if (phase_ == Phase::kDead) return false;
    // Replies decrypted before the failure still count.
    if (!plain.empty() && !Process(plain)) return false;
    if (!status.ok()) {
      Fail(std::move(status));
      return false;
    }
    return true;
  }

  // Plaintext from the server: replies to commands, or pushes.
  bool Process(absl::string_view bytes) {
    if (mode_ == ConnectionMode::kReplies && awaiting_ == 0 &&
        !reader_.mid_reply()) {
      Fail(absl::DataLossError(
          absl::StrCat("the server sent ", bytes.size(),
                       " bytes nobody asked for (starting \"",
                       absl::CHexEscape(bytes.substr(0, 24)), "\")")));
      return false;
    }
    // Reused from read to read: no allocation per read once warm.
    std::vector<RedisReply>& replies = replies_;
    replies.clear();
    absl::Status status = reader_.Feed(bytes, &replies);
    for (RedisReply& reply : replies) {
      if (mode_ == ConnectionMode::kPushes) {
        if (!Notify([&] { observer_->OnPush(std::move(reply)); })) return false;
      } else {
        if (awaiting_ == 0) {
          Fail(absl::DataLossError(absl::StrCat(
              "the server sent a reply nobody asked for: ", Sketch(reply))));
          return false;
        }
        --awaiting_;
        if (!Notify([&] { observer_->OnReply(std::move(reply)); })) {
          return false;
        }
      }
      if (phase_ == Phase::kDead) return false;
    }
    if (!status.ok()) {
      Fail(absl::DataLossError(
          absl::StrCat("connection closed: ", status.message())));
      return false;
    }
    if (mode_ == ConnectionMode::kReplies && awaiting_ == 0 &&
        reader_.mid_reply()) {
      Fail(absl::DataLossError(
          "the server sent bytes nobody asked for after its last reply"));
      return false;
    }
    return true;
  }

  event_base* const base_;
  ConnectionObserver* const observer_;
  const ConnectionMode mode_;
  std::unique_ptr<TlsSession> tls_;
  Phase phase_ = Phase::kConnecting;
  int fd_ = -1;
  event* read_ = nullptr;
  event* write_ = nullptr;
  event* flush_ = nullptr;
  event* report_ = nullptr;
  std::string out_;  // Bytes for the socket, from out_pos_ on.
  size_t out_pos_ = 0;
  std::string plain_;     // Commands queued during the TLS handshake.
  std::string scratch_;   // A command on its way to TLS.
  std::string plain_in_;  // What one read decrypted to.
  std::vector<RedisReply> replies_;  // What one read completed.
  ReplyReader reader_;
  // Commands sent that have no reply yet (kReplies mode).
  size_t awaiting_ = 0;
  size_t received_ = 0;  // Bytes read off the socket.
  bool connect_reported_ = false;
  bool failing_ = false;
  absl::Status failure_;
  int in_callback_ = 0;
  bool* destroyed_ = nullptr;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Connection>> OpenWireConnection(
    event_base* base, const MasterAddress& address,
    std::shared_ptr<const TlsContext> tls, ConnectionObserver* observer,
    ConnectionMode mode) {
  std::unique_ptr<TlsSession> session;
  if (address.transport == MasterAddress::Transport::kTls) {
    if (tls == nullptr) {
      return absl::FailedPreconditionError(
          "a TLS master, and no TLS context to reach it with");
    }
    std::string name = tls->options().server_name.empty()
                           ? address.TlsName()
                           : tls->options().server_name;
    session = std::make_unique<TlsSession>(std::move(tls), std::move(name));
    if (absl::Status s = session->Init(); !s.ok()) return s;
  }
  auto connection = std::make_unique<WireConnection>(base, observer, mode,
                                                     std::move(session));
  if (absl::Status s = connection->Start(address); !s.ok()) return s;
  return connection;
}

}  // namespace redlock::internal
