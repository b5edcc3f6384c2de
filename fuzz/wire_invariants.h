// Copyright 2026 The redlock Authors.
//
// The wire fuzzer's harness and invariants (fuzz/wire_fuzzer.cc), shared with
// tests/transport/fuzz_regressions_test.cc, which runs the committed corpus
// (fuzz/corpus/wire/) and every input the fuzzer ever crashed on through the
// same code.
//
// One input is a target, cut points and a byte stream (ParseWireInput). The
// stream is what a server sends, in the pieces the cut points make:
//  - to a real Master (marker_key set, so the whole handshake runs; AUTH and
//    SELECT when the flags ask) connected over a real Unix socket on a real
//    libevent loop, with user commands sent through Master::Send (a SET, a
//    release script by EVALSHA, and an extend script after a chosen piece);
//  - or to a Subscriber (push mode) subscribed to two channels, which drops
//    one and adds another after a chosen piece;
//  - or straight to a ReplyReader, piece by piece, compared with a second
//    one fed the whole stream at once.
// The harness plays the server: it accepts the connection, reads and drops
// whatever the client sends, writes the pieces one at a time and runs the
// loop until it is quiet after each. Timers are set far beyond one input's
// run time (no timeout, no reconnect), so what happens is decided by the
// bytes alone.
//
// Invariants (Run() returns a description of the first one broken):
//  - every Master::Send callback runs exactly once (by the Master's
//    destruction at the latest); a reply reaches it only while the master is
//    ready() and never after its connection was lost; every failure carries
//    a non-empty message, and so do last_error() of the Master and the
//    Subscriber;
//  - the Subscriber hears no message after its connection was lost;
//  - a ReplyReader fed in pieces gives the same replies, the same verdict and
//    the same error as one fed the whole stream (a refused stream: replies
//    before the refusal agree), holds no more than kMaxReplyBytes + 1 bytes
//    after any Feed(), and once refused keeps failing with the same error;
//  - its replies are the ones hiredis's own reply objects give for the same
//    bytes (FromHiredis), all of them when it took the stream.
// Anything else (a crash, a sanitizer report) is the fuzzer's to catch.

#ifndef REDLOCK_FUZZ_WIRE_INVARIANTS_H_
#define REDLOCK_FUZZ_WIRE_INVARIANTS_H_

#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <hiredis/read.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "redlock/options.h"
#include "src/algorithm/redis_reply.h"
#include "src/algorithm/scripts.h"
#include "src/engine/master.h"
#include "src/engine/wakeups.h"
#include "src/transport/libevent_runtime.h"
#include "src/transport/reply_reader.h"

namespace redlock::fuzz {

// A repeated last piece stops growing the stream at this size.
inline constexpr size_t kMaxRepeatedBytes = 192 * 1024;

enum class WireTarget { kMaster, kSubscriber, kReader };

struct WireInput {
  WireTarget target = WireTarget::kMaster;
  bool password = false;  // The URI has credentials: AUTH first.
  bool select = false;    // The URI has db 3: SELECT.
  // After this piece (index), the mid-stream action: another Send for a
  // Master, Remove + Add for a Subscriber. Past the last piece: never.
  size_t action_after = 0;
  std::vector<absl::string_view> pieces;
};

// Reads the layout described in fuzz/wire_fuzzer.cc. Every input is valid:
// missing header bytes read as zeros, a piece longer than what is left takes
// what is left. The pieces point into `data`.
inline WireInput ParseWireInput(absl::string_view data) {
  WireInput in;
  auto take = [&data]() -> uint8_t {
    if (data.empty()) return 0;
    const auto b = static_cast<uint8_t>(data[0]);
    data.remove_prefix(1);
    return b;
  };
  const uint8_t mode = take();
  in.target = static_cast<WireTarget>(mode % 3);
  const uint8_t flags = mode / 3;
  in.password = (flags & 1) != 0;
  in.select = (flags & 2) != 0;
  const uint8_t cut_byte = take();
  const size_t cuts = cut_byte % 16;
  std::vector<size_t> lengths;
  for (size_t i = 0; i < cuts; ++i) {
    const size_t low = take();
    lengths.push_back(low | (static_cast<size_t>(take()) << 8));
  }
  for (size_t length : lengths) {
    const absl::string_view piece = data.substr(0, length);
    in.pieces.push_back(piece);
    data.remove_prefix(piece.size());
  }
  in.pieces.push_back(data);
  // The last piece again, 2^(cut_byte / 16) times in all (at most 4096) but
  // at most kMaxRepeatedBytes: streams longer than any input, to reach the
  // bounds.
  const size_t last = data.size();
  size_t repeats = size_t{1} << std::min(cut_byte / 16, 12);
  if (last > 0) repeats = std::min(repeats, kMaxRepeatedBytes / last);
  if (last == 0) repeats = 1;
  for (size_t i = 1; i < repeats; ++i) in.pieces.push_back(data);
  // flags / 4 ranges over 0..20: mostly within the pieces.
  in.action_after = (flags / 4) % (in.pieces.size() + 1);
  return in;
}

// Builds an input from its parts (for the corpus and the tests).
inline std::string MakeWireInput(uint8_t mode,
                                 const std::vector<std::string>& pieces) {
  std::string out;
  out.push_back(static_cast<char>(mode));
  const size_t cuts = pieces.empty() ? 0 : pieces.size() - 1;
  out.push_back(static_cast<char>(cuts));
  for (size_t i = 0; i < cuts; ++i) {
    out.push_back(static_cast<char>(pieces[i].size() & 0xff));
    out.push_back(static_cast<char>((pieces[i].size() >> 8) & 0xff));
  }
  for (const std::string& piece : pieces) out += piece;
  return out;
}

inline std::string Describe(const internal::RedisReply& r) {
  using Type = internal::RedisReply::Type;
  switch (r.type) {
    case Type::kArray: {
      std::string out = "[";
      for (const auto& e : r.elements) absl::StrAppend(&out, Describe(e), ",");
      return out + "]";
    }
    case Type::kInteger:
      return absl::StrCat(":", r.integer);
    case Type::kNil:
      return "nil";
    default:
      return absl::StrCat(static_cast<int>(r.type), "\"",
                          absl::CHexEscape(r.str.substr(0, 32)), "\"");
  }
}

inline bool SameReply(const internal::RedisReply& a,
                      const internal::RedisReply& b) {
  if (a.type != b.type || a.str != b.str || a.integer != b.integer ||
      a.elements.size() != b.elements.size()) {
    return false;
  }
  for (size_t i = 0; i < a.elements.size(); ++i) {
    if (!SameReply(a.elements[i], b.elements[i])) return false;
  }
  return true;
}

// What hiredis's own reply objects make of `bytes`, converted with
// FromHiredis (the reader bounded by BoundReplyReader, as the reply fuzzer
// reads): every reply up to the first one hiredis refuses. The reference a
// ReplyReader, which builds its RedisReply values itself, is held to.
inline std::vector<internal::RedisReply> HiredisReplies(
    absl::string_view bytes) {
  std::vector<internal::RedisReply> out;
  redisReader* reader = redisReaderCreate();
  if (reader == nullptr) return out;
  internal::BoundReplyReader(reader);
  if (redisReaderFeed(reader, bytes.data(), bytes.size()) == REDIS_OK) {
    for (;;) {
      void* raw = nullptr;
      if (redisReaderGetReply(reader, &raw) != REDIS_OK || raw == nullptr) {
        break;
      }
      out.push_back(internal::FromHiredis(static_cast<const redisReply*>(raw)));
      freeReplyObject(raw);
    }
  }
  redisReaderFree(reader);
  return out;
}

// The ReplyReader invariants on `pieces`.
inline std::string CheckReaderPieces(
    const std::vector<absl::string_view>& pieces) {
  using internal::kMaxReplyBytes;
  using internal::RedisReply;
  using internal::ReplyReader;
  ReplyReader split;
  std::vector<RedisReply> split_replies;
  absl::Status split_status;
  std::string whole_bytes;
  for (absl::string_view piece : pieces) {
    whole_bytes.append(piece.data(), piece.size());
    absl::Status s = split.Feed(piece, &split_replies);
    if (split.buffered() > kMaxReplyBytes + 1) {
      return absl::StrCat("ReplyReader holds ", split.buffered(),
                          " bytes after a Feed()");
    }
    if (!s.ok()) {
      if (s.message().empty()) return "ReplyReader refused without a message";
      if (!split_status.ok() && s != split_status) {
        return absl::StrCat("ReplyReader changed its refusal from \"",
                            split_status.ToString(), "\" to \"", s.ToString(),
                            "\"");
      }
      split_status = s;
    } else if (!split_status.ok()) {
      return "ReplyReader accepted bytes after refusing the stream";
    }
  }
  ReplyReader whole;
  std::vector<RedisReply> whole_replies;
  const absl::Status whole_status = whole.Feed(whole_bytes, &whole_replies);
  if (whole.buffered() > kMaxReplyBytes + 1) {
    return absl::StrCat("ReplyReader holds ", whole.buffered(),
                        " bytes after a Feed()");
  }
  if (split_status.ok() != whole_status.ok() ||
      split_status.message() != whole_status.message()) {
    return absl::StrCat("fed in ", pieces.size(),
                        " pieces: ", split_status.ToString(),
                        "; fed whole: ", whole_status.ToString());
  }
  if (split_status.ok() && (split.buffered() != whole.buffered() ||
                            split.mid_reply() != whole.mid_reply())) {
    return "pieces and whole disagree on the reply in progress";
  }
  if (split_status.ok() && split_replies.size() != whole_replies.size()) {
    return absl::StrCat("fed in pieces: ", split_replies.size(),
                        " replies; fed whole: ", whole_replies.size());
  }
  const size_t common = std::min(split_replies.size(), whole_replies.size());
  for (size_t i = 0; i < common; ++i) {
    if (!SameReply(split_replies[i], whole_replies[i])) {
      return absl::StrCat("reply ", i, " differs: ", Describe(split_replies[i]),
                          " vs ", Describe(whole_replies[i]));
    }
  }
  if (split.fed() != whole.fed() && split_status.ok()) {
    return "fed() disagrees";
  }
  // The same replies as hiredis's own objects give: all of them if the
  // stream was taken, those before the refusal if not (hiredis does not
  // bound a reply's bytes, so it may read further).
  const std::vector<RedisReply> reference = HiredisReplies(whole_bytes);
  if (whole_status.ok() && reference.size() != whole_replies.size()) {
    return absl::StrCat("ReplyReader read ", whole_replies.size(),
                        " replies, hiredis's objects ", reference.size());
  }
  if (reference.size() < whole_replies.size()) {
    return absl::StrCat("ReplyReader read ", whole_replies.size(),
                        " replies before refusing, hiredis's objects only ",
                        reference.size());
  }
  for (size_t i = 0; i < whole_replies.size(); ++i) {
    if (!SameReply(whole_replies[i], reference[i])) {
      return absl::StrCat("reply ", i, " differs from hiredis's objects: ",
                          Describe(whole_replies[i]), " vs ",
                          Describe(reference[i]));
    }
  }
  return "";
}

// Plays the server on a Unix socket for one client at a time.
class WireHarness {
 public:
  WireHarness() = default;
  ~WireHarness() {
    if (listen_fd_ >= 0) close(listen_fd_);
    if (!path_.empty()) unlink(path_.c_str());
    if (!dir_.empty()) rmdir(dir_.c_str());
  }
  WireHarness(const WireHarness&) = delete;
  WireHarness& operator=(const WireHarness&) = delete;

  // Makes the temporary directory and the listening socket. An error
  // message, or "".
  std::string Init() {
    const char* tmp = getenv("TMPDIR");
    std::string templ = absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp",
                                     "/redlock-wire-fuzz.XXXXXX");
    if (mkdtemp(templ.data()) == nullptr) {
      return absl::StrCat("mkdtemp: ", std::strerror(errno));
    }
    dir_ = templ;
    path_ = dir_ + "/s";
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path_.size() >= sizeof(addr.sun_path)) return "socket path too long";
    std::memcpy(addr.sun_path, path_.data(), path_.size());
    listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listen_fd_ < 0) return absl::StrCat("socket: ", std::strerror(errno));
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) !=
            0 ||
        listen(listen_fd_, 16) != 0) {
      return absl::StrCat("bind/listen: ", std::strerror(errno));
    }
    // For recording the seed corpus (fuzz/record_wire_seeds.py): what the
    // client sends for the first input run is written to this file.
    if (const char* dump = getenv("REDLOCK_WIRE_FUZZ_REQUESTS")) dump_ = dump;
    return "";
  }

  const std::string& path() const { return path_; }
  // Of the last Run(): the Master was ready() before it was destroyed; the
  // messages the Subscriber heard. To show that a seed does what it is for.
  bool last_ready() const { return last_ready_; }
  int64_t last_messages() const { return last_messages_; }

  // One input, start to end. "" if every invariant held.
  std::string Run(absl::string_view data) {
    const WireInput in = ParseWireInput(data);
    last_ready_ = false;
    last_messages_ = 0;
    if (in.target == WireTarget::kReader) return CheckReaderPieces(in.pieces);
    DropStale();
    event_base* base = event_base_new();
    if (base == nullptr) return "";  // Out of resources: nothing to check.
    std::string problem;
    {
      internal::LibeventRuntime runtime(base);
      problem = in.target == WireTarget::kMaster ? RunMaster(&runtime, in)
                                                 : RunSubscriber(&runtime, in);
    }
    CloseServer();
    event_base_free(base);
    dump_.clear();  // libFuzzer may run a lone input twice.
    return problem;
  }

 private:
  internal::MasterConfig Config(const WireInput& in) const {
    internal::MasterConfig config;
    // What ParseMasterUri("unix://fuzzuser:fuzzpass@<path>?db=3") is to
    // give, made by hand: on branch wire at a8a780e the parser refuses every
    // unix:// path ('/' is not among the characters it lets through).
    MasterAddress& address = config.address;
    address.transport = MasterAddress::Transport::kUnix;
    address.host.clear();
    address.port = 0;
    address.path = path_;
    if (in.password) {
      address.user = "fuzzuser";
      address.password = "fuzzpass";
      address.has_password = true;
    }
    if (in.select) address.db = 3;
    // Nothing times out and nothing reconnects within one input.
    config.request_timeout = absl::Seconds(600);
    config.connect_timeout = absl::Seconds(600);
    config.stalled_timeout = absl::Seconds(600);
    config.backoff.initial = absl::Seconds(600);
    config.backoff.max = absl::Seconds(600);
    config.marker_key = "redlock:fuzz:marker";
    return config;
  }

  // Connections left in the backlog by an earlier input.
  void DropStale() {
    for (;;) {
      const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      close(fd);
    }
  }

  // Accepts the client's connection (it is in the backlog by now).
  bool AcceptClient() {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 1000) != 1) return false;
    server_fd_ =
        accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    return server_fd_ >= 0;
  }

  void CloseServer() {
    if (server_fd_ >= 0) close(server_fd_);
    server_fd_ = -1;
  }

  // Reads and drops what the client sent.
  void Drain() {
    if (server_fd_ < 0) return;
    char buf[4096];
    ssize_t n;
    while ((n = recv(server_fd_, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
      if (dump_.empty()) continue;
      if (FILE* f = std::fopen(dump_.c_str(), "ab")) {
        std::fwrite(buf, 1, static_cast<size_t>(n), f);
        std::fclose(f);
      }
    }
  }

  // Runs the loop until it has nothing left to do at once (bounded).
  void Settle(event_base* base) {
    for (int i = 0; i < 16; ++i) {
      Drain();
      event_base_loop(base, EVLOOP_NONBLOCK);
      if (event_base_get_num_events(base, EVENT_BASE_COUNT_ACTIVE) == 0) break;
    }
    Drain();
  }

  // Writes `piece` whole (the client reads as it goes).
  void Write(event_base* base, absl::string_view piece) {
    while (!piece.empty() && server_fd_ >= 0) {
      const ssize_t n = send(server_fd_, piece.data(), piece.size(),
                             MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        piece.remove_prefix(static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        const size_t before = piece.size();
        Settle(base);
        // The client stopped reading (it closed, or holds what it has):
        // the rest cannot be delivered.
        if (before == piece.size()) {
          pollfd p{server_fd_, POLLOUT, 0};
          if (poll(&p, 1, 0) != 1) return;
        }
        continue;
      }
      return;  // The client closed the connection.
    }
  }

  struct Call {
    int calls = 0;
  };

  std::string RunMaster(internal::LibeventRuntime* runtime,
                        const WireInput& in) {
    using internal::Master;
    event_base* base = runtime->base();
    std::string problem;
    auto note = [&problem](std::string what) {
      if (problem.empty()) problem = std::move(what);
    };
    std::vector<std::unique_ptr<Call>> calls;
    bool lost = false;  // Seen by a callback: the connection was lost.
    auto master = std::make_unique<Master>(runtime, Config(in));
    Master* m = master.get();
    auto send = [&](internal::Command command) {
      calls.push_back(std::make_unique<Call>());
      Call* call = calls.back().get();
      m->Send(command, [&, call, m](absl::StatusOr<internal::RedisReply> r) {
        if (++call->calls > 1) note("a Send callback ran twice");
        if (m->counters().connection_failures > 0) lost = true;
        if (r.ok()) {
          if (lost) note("a reply delivered after the connection was lost");
          if (!m->ready()) note("a reply delivered while not ready()");
        } else if (r.status().message().empty()) {
          note(absl::StrCat("a Send failed without a message: ",
                            r.status().ToString()));
        }
      });
    };
    const std::string token = "0123456789abcdef0123456789abcdef";
    send(internal::AcquireCommand("fuzz:k", token, absl::Seconds(10)));
    send(internal::ReleaseCommand("fuzz:k", token));
    if (!AcceptClient()) {
      master.reset();
      return "the Master did not connect to the harness";
    }
    Settle(base);
    for (size_t i = 0; i < in.pieces.size(); ++i) {
      Write(base, in.pieces[i]);
      Settle(base);
      if (i == in.action_after) {
        send(internal::ExtendCommand("fuzz:k", token, absl::Seconds(10)));
        Settle(base);
      }
      if (!m->last_error().ok() && m->last_error().message().empty()) {
        note(absl::StrCat("last_error() without a message: ",
                          m->last_error().ToString()));
      }
    }
    last_ready_ = m->ready();
    master.reset();
    for (size_t i = 0; i < calls.size(); ++i) {
      if (calls[i]->calls != 1) {
        note(absl::StrCat("Send callback ", i, " ran ", calls[i]->calls,
                          " times"));
      }
    }
    return problem;
  }

  class Listener final : public internal::Subscriber::Listener {
   public:
    explicit Listener(const internal::Subscriber** subscriber)
        : subscriber_(subscriber) {}
    void OnMessage(int, absl::string_view, absl::string_view) override {
      if (*subscriber_ != nullptr && !(*subscriber_)->last_error().ok()) {
        problem = "a message heard after the subscriber's connection was lost";
      }
    }
    void OnSettled(bool) override {}
    std::string problem;

   private:
    const internal::Subscriber** subscriber_;
  };

  std::string RunSubscriber(internal::LibeventRuntime* runtime,
                            const WireInput& in) {
    event_base* base = runtime->base();
    const internal::Subscriber* watched = nullptr;
    Listener listener(&watched);
    std::string problem;
    {
      internal::Subscriber subscriber(runtime, Config(in), /*master=*/0,
                                      &listener);
      subscriber.Add("redlock:fuzz:a");
      subscriber.Add("redlock:fuzz:b");
      watched = &subscriber;
      if (!AcceptClient()) return "the Subscriber did not connect";
      Settle(base);
      for (size_t i = 0; i < in.pieces.size(); ++i) {
        Write(base, in.pieces[i]);
        Settle(base);
        if (i == in.action_after) {
          subscriber.Remove("redlock:fuzz:a");
          subscriber.Add("redlock:fuzz:c");
          Settle(base);
        }
        const absl::Status& error = subscriber.last_error();
        if (!error.ok() && error.message().empty() && problem.empty()) {
          problem = absl::StrCat("subscriber last_error() without a message: ",
                                 error.ToString());
        }
        if (!error.ok() && !subscriber.Settled("redlock:fuzz:b") &&
            problem.empty()) {
          problem = "a channel unsettled after the connection was lost";
        }
      }
      last_messages_ = subscriber.messages();
      watched = nullptr;
    }
    return problem.empty() ? listener.problem : problem;
  }

  std::string dir_;
  std::string path_;
  std::string dump_;
  bool last_ready_ = false;
  int64_t last_messages_ = 0;
  int listen_fd_ = -1;
  int server_fd_ = -1;
};

}  // namespace redlock::fuzz

#endif  // REDLOCK_FUZZ_WIRE_INVARIANTS_H_
