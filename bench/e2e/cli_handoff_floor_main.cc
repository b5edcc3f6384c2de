// Copyright 2026 The redlock Authors.
//
// redlock-e2e-handoff-floor: the least work a Redlock hand-off between two
// processes needs, written without the library, so that the cli_handoff
// phase (bench/e2e/phases/cli_handoff.cc) can show how much of `redlock
// run`'s hand-off is the algorithm's and how much is ours. It takes the
// same arguments as `redlock run` (the options are read for --ttl,
// --key-prefix and --wait only) and REDLOCK_MASTERS, and it does only this:
//
//   - two connections to each master (numeric IPv4 redis:// only): one for
//     commands, one subscribed to the key's channel;
//   - an attempt: SET KEY TOKEN NX PX TTL to every master in one write
//     each, the lock held once every master answered and a majority said
//     +OK;
//   - a failed attempt undoes its own grants and sleeps in poll(2) on the
//     subscribed connections until any master publishes (or 100 ms); every
//     waiter tries again at once (no queue, no jitter): the herd;
//   - with --queued, two round trips as the library makes them: a refused
//     attempt queues the waiter's token on each master (kAttemptQueued),
//     the release pops the head of each master's queue and names it, and
//     only the waiter named (by any one master) tries again at once;
//   - with --granted, one round trip: the release hands each master's key
//     to the first token queued there (kReleaseToNext), and a waiter holds
//     the lock once a majority published its token;
//   - with --direct, the same, but the release publishes on the heir's own
//     channel (the key's channel, ':', the heir's token), the only one each
//     waiter subscribes to: a hand-off wakes no other waiter;
//   - the command run with vfork()+execvp(), its exit status read;
//   - the release: one EVAL per master that deletes the key if it holds
//     TOKEN and then publishes on the key's channel.
//
// It has no validity, no drift term, no handshake, no checks of a master's
// persistence or identity, no fencing, no signal handling: NOT a lock to
// use, only a floor to measure against. It writes the same
// REDLOCK_TIMING_FILE line as the tool (tools/redlock/cli.h) so that the
// phase splits its hand-offs the same way. libc only.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

enum Mark {
  kMain,
  kConfigured,
  kClient,
  kAcquired,
  kSpawning,
  kForked,
  kReaped,
  kReleased,
  kExit,
  kMarks
};
const char* const kMarkNames[kMarks] = {"main",     "configured", "client",
                                        "acquired", "spawning",   "forked",
                                        "reaped",   "released",   "exit"};
int64_t marks[kMarks] = {};

void WriteTimings() {
  const char* path = std::getenv("REDLOCK_TIMING_FILE");
  if (path == nullptr || *path == '\0') return;
  std::string line = "timing " + std::to_string(getpid());
  for (int i = 0; i < kMarks; ++i) {
    if (marks[i] != 0) {
      line += std::string(" ") + kMarkNames[i] + "=" + std::to_string(marks[i]);
    }
  }
  line += "\n";
  const int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ssize_t ignored = write(fd, line.data(), line.size());
  (void)ignored;
  close(fd);
}

[[noreturn]] void Fail(const std::string& why) {
  std::fprintf(stderr, "redlock-e2e-handoff-floor: %s\n", why.c_str());
  std::exit(70);
}

std::string Bulk(const std::string& s) {
  return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}

std::string Command(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) out += Bulk(a);
  return out;
}

// One connection; replies are read as whole lines (every reply this program
// waits for is a one-line reply: +OK, $-1, :N, -ERR).
struct Conn {
  int fd = -1;
  std::string in;
  int unread = 0;  // Replies of commands sent and not waited for.

  void Send(const std::string& bytes) const {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
      if (n <= 0) Fail("write to a master failed");
      done += static_cast<size_t>(n);
    }
  }
  // Reads what the socket has into `in`; false at EOF or error.
  bool Fill() {
    char buf[4096];
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) return false;
    in.append(buf, static_cast<size_t>(n));
    return true;
  }
  // Takes one line from `in` if it holds one.
  bool TakeLine(std::string* line) {
    const size_t end = in.find("\r\n");
    if (end == std::string::npos) return false;
    *line = in.substr(0, end);
    in.erase(0, end + 2);
    return true;
  }
  std::string ReadLine() {
    std::string line;
    while (!TakeLine(&line)) {
      if (!Fill()) Fail("a master closed the connection");
    }
    return line;
  }
};

// The payloads of the whole "message" pushes `s.in` holds (*3, $7,
// message, $N, CHANNEL, $M, PAYLOAD), taken out of it.
void TakeMessages(Conn& s, std::vector<std::string>* payloads) {
  for (;;) {
    size_t pos = 0;
    std::string line[7];
    for (int i = 0; i < 7; ++i) {
      const size_t end = s.in.find("\r\n", pos);
      if (end == std::string::npos) return;
      line[i] = s.in.substr(pos, end - pos);
      pos = end + 2;
    }
    s.in.erase(0, pos);
    payloads->push_back(line[6]);
  }
}

Conn Connect(const std::string& uri) {
  const std::string prefix = "redis://";
  if (uri.compare(0, prefix.size(), prefix) != 0) Fail("not redis://: " + uri);
  const std::string hostport = uri.substr(prefix.size());
  const size_t colon = hostport.rfind(':');
  if (colon == std::string::npos) Fail("no port in " + uri);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(
      static_cast<uint16_t>(std::atoi(hostport.substr(colon + 1).c_str())));
  if (inet_pton(AF_INET, hostport.substr(0, colon).c_str(), &addr.sin_addr) !=
      1) {
    Fail("not a numeric IPv4 address: " + uri);
  }
  Conn c;
  c.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (c.fd < 0) Fail("socket failed");
  const int one = 1;
  setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (connect(c.fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    Fail("cannot connect to " + uri);
  }
  return c;
}

// The one-round-trip variant ("run-granted"): a waiter queues its token
// where the key is taken, and the release hands each master's key to the
// first token queued there, publishing it; the waiter holds the lock once a
// majority of masters named it. A waiter with a minority that makes no
// progress for 50 ms (two waiters queued in different orders) gives its
// grants back and tries again with a new token.
const char kAttemptOrQueue[] =
    "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then "
    "return 1 end redis.call('rpush', KEYS[2], ARGV[1]) return 0";
// ARGV[3] "direct" (--direct): the message goes to the heir's own channel
// (KEYS[3], ':', the token without its "-<generation>"), the only one each
// waiter subscribes to, so a hand-off wakes no other waiter; otherwise to
// KEYS[3], which every waiter hears.
const char kReleaseToNext[] =
    "if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end "
    "local next = redis.call('lpop', KEYS[2]) "
    "if not next then redis.call('del', KEYS[1]) return 1 end "
    "redis.call('set', KEYS[1], next, 'PX', ARGV[2]) "
    "local to = KEYS[3] "
    "if ARGV[3] == 'direct' then "
    "to = to .. ':' .. string.match(next, '^(.*)-%d+$') end "
    "redis.call('publish', to, next) return 1";

// The queued variant ("--queued"): two round trips as the library makes
// them, without the herd. A refused attempt queues the waiter's token once;
// the release pops the head of the queue and names it in its message, and
// only the waiter named retries at once (the others wait for their name, or
// 100 ms).
const char kAttemptQueued[] =
    "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then "
    "redis.call('lrem', KEYS[2], 0, ARGV[1]) return 1 end "
    "if not redis.call('lpos', KEYS[2], ARGV[1]) then "
    "redis.call('rpush', KEYS[2], ARGV[1]) end return 0";
const char kReleaseNaming[] =
    "if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end "
    "redis.call('del', KEYS[1]) "
    "redis.call('publish', KEYS[3], redis.call('lpop', KEYS[2]) or 'r') "
    "return 1";

const char kRelease[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "redis.call('del', KEYS[1]) redis.call('publish', KEYS[2], 'r') "
    "return 1 end return 0";

// The one-round-trip hand-off's acquisition (the comment above
// kAttemptOrQueue): returns the token the lock is held with, or "" when
// the wait ran out.
std::string AcquireGranted(std::vector<Conn>& cmd, std::vector<Conn>& sub,
                           const std::string& key, const std::string& queue,
                           const std::string& channel,
                           const std::string& ttl_ms, const std::string& base,
                           const std::string& told, int64_t deadline) {
  const size_t n = cmd.size();
  const size_t quorum = n / 2 + 1;
  for (int generation = 0;; ++generation) {
    const std::string token = base + "-" + std::to_string(generation);
    const std::string attempt =
        Command({"EVAL", kAttemptOrQueue, "2", key, queue, token, ttl_ms});
    for (Conn& c : cmd) c.Send(attempt);
    std::vector<bool> held(n, false);
    size_t count = 0;
    for (size_t i = 0; i < n; ++i) {
      const std::string reply = cmd[i].ReadLine();
      if (reply == ":1") {
        held[i] = true;
        ++count;
      } else if (reply != ":0") {
        Fail("the attempt answered " + reply);
      }
    }
    int64_t progress = NowNs();
    std::vector<pollfd> fds(n);
    while (count < quorum) {
      std::vector<std::string> payloads;
      for (size_t i = 0; i < n; ++i) {
        payloads.clear();
        TakeMessages(sub[i], &payloads);
        for (const std::string& p : payloads) {
          if (p == token && !held[i]) {
            held[i] = true;
            ++count;
            progress = NowNs();
          }
        }
      }
      if (count >= quorum) break;
      const int64_t now = NowNs();
      if (now - progress > 50000000 || now > deadline) {
        // Give back what this token holds and take it out of every queue.
        const std::string give_back =
            Command({"EVAL", kReleaseToNext, "3", key, queue, channel, token,
                     ttl_ms, told});
        const std::string unqueue = Command({"LREM", queue, "0", token});
        for (Conn& c : cmd) c.Send(give_back + unqueue);
        for (Conn& c : cmd) {
          c.ReadLine();
          c.ReadLine();
        }
        if (now > deadline) return "";
        std::fputs("redlock-e2e-handoff-floor: split, trying again\n", stderr);
        break;
      }
      for (size_t i = 0; i < n; ++i) fds[i] = {sub[i].fd, POLLIN, 0};
      if (poll(fds.data(), fds.size(), 10) > 0) {
        for (size_t i = 0; i < n; ++i) {
          if ((fds[i].revents & POLLIN) != 0 && !sub[i].Fill()) {
            Fail("a master closed the subscribed connection");
          }
        }
      }
    }
    if (count < quorum) continue;
    // Held: the token may still wait in the queues of the other masters.
    const std::string unqueue = Command({"LREM", queue, "0", token});
    for (size_t i = 0; i < n; ++i) {
      if (!held[i]) {
        cmd[i].Send(unqueue);
        ++cmd[i].unread;
      }
    }
    return token;
  }
}

}  // namespace

int main(int argc, char** argv) {
  marks[kMain] = NowNs();
  std::string ttl_ms = "10000";
  std::string key_prefix = "redlock:";
  int64_t wait_ns = 60LL * 1000000000;
  std::string resource;
  bool granted_mode = false;
  bool queued_mode = false;
  bool direct_mode = false;
  int command = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {
      command = i + 1;
      break;
    }
    if (a == "run" || a == "--quiet") continue;
    if (a == "--granted") {
      granted_mode = true;
      continue;
    }
    if (a == "--direct") {  // --granted, told on the heir's own channel.
      granted_mode = true;
      direct_mode = true;
      continue;
    }
    if (a == "--queued") {
      queued_mode = true;
      continue;
    }
    if (a.rfind("--ttl=", 0) == 0 || a.rfind("--wait=", 0) == 0) {
      // Whole seconds ("10s") or milliseconds ("250ms") only.
      const std::string v = a.substr(a.find('=') + 1);
      const bool ms = v.size() > 2 && v.compare(v.size() - 2, 2, "ms") == 0;
      const long long n = std::atoll(v.c_str());
      const long long as_ms = ms ? n : n * 1000;
      if (as_ms <= 0) Fail("bad duration: " + a);
      if (a[2] == 't') {
        ttl_ms = std::to_string(as_ms);
      } else {
        wait_ns = as_ms * 1000000;
      }
    } else if (a.rfind("--key-prefix=", 0) == 0) {
      key_prefix = a.substr(std::strlen("--key-prefix="));
    } else if (a.rfind("--", 0) == 0) {
      Fail("unknown option " + a);
    } else {
      resource = a;
    }
  }
  if (resource.empty() || command < 0 || command >= argc) {
    Fail(
        "usage: redlock-e2e-handoff-floor [--queued|--granted|--direct] run "
        "[--ttl=D] [--wait=D] "
        "[--key-prefix=P] RESOURCE -- COMMAND...");
  }
  const char* masters_env = std::getenv("REDLOCK_MASTERS");
  if (masters_env == nullptr) Fail("REDLOCK_MASTERS is not set");
  std::vector<std::string> uris;
  {
    std::string all = masters_env;
    size_t start = 0;
    while (start <= all.size()) {
      const size_t comma = all.find(',', start);
      const size_t end = comma == std::string::npos ? all.size() : comma;
      if (end > start) uris.push_back(all.substr(start, end - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (uris.empty()) Fail("REDLOCK_MASTERS names no master");
  const std::string key = key_prefix + resource;
  const std::string channel = key + ":released";
  char token[40];
  std::snprintf(token, sizeof(token), "%d-%lld", getpid(),
                static_cast<long long>(NowNs()));
  marks[kConfigured] = NowNs();

  const int n = static_cast<int>(uris.size());
  const int quorum = n / 2 + 1;
  std::vector<Conn> cmd, sub;
  for (const std::string& u : uris) {
    cmd.push_back(Connect(u));
    sub.push_back(Connect(u));
  }
  const std::string subscribe =
      Command({"SUBSCRIBE", direct_mode ? channel + ":" + token : channel});
  for (Conn& s : sub) s.Send(subscribe);
  for (Conn& s : sub) {
    // *3, $9, subscribe, $N, channel, :1
    for (int line = 0; line < 6; ++line) s.ReadLine();
  }
  marks[kClient] = NowNs();

  const int64_t deadline = NowNs() + wait_ns;
  std::string release;
  if (granted_mode) {
    const std::string queue = key + ":queue";
    const std::string told = direct_mode ? "direct" : "all";
    const std::string held_with = AcquireGranted(cmd, sub, key, queue, channel,
                                                 ttl_ms, token, told, deadline);
    if (held_with.empty()) {
      std::fputs("redlock-e2e-handoff-floor: gave up waiting\n", stderr);
      WriteTimings();
      return 75;
    }
    release = Command({"EVAL", kReleaseToNext, "3", key, queue, channel,
                       held_with, ttl_ms, told});
  } else if (queued_mode) {
    release = Command(
        {"EVAL", kReleaseNaming, "3", key, key + ":queue", channel, token});
  } else {
    release = Command({"EVAL", kRelease, "2", key, channel, token});
  }
  const std::string set =
      queued_mode ? Command({"EVAL", kAttemptQueued, "2", key, key + ":queue",
                             token, ttl_ms})
                  : Command({"SET", key, token, "NX", "PX", ttl_ms});
  std::vector<pollfd> fds(static_cast<size_t>(n));
  while (!granted_mode) {
    // Messages already heard are spent: drop them before the attempt, so
    // that one arriving during it wakes the poll below.
    for (Conn& s : sub) {
      fcntl(s.fd, F_SETFL, O_NONBLOCK);
      while (s.Fill()) {
      }
      s.in.clear();
      fcntl(s.fd, F_SETFL, 0);
    }
    for (Conn& c : cmd) c.Send(set);
    std::vector<bool> granted(static_cast<size_t>(n), false);
    int ok = 0;
    for (int i = 0; i < n; ++i) {
      const std::string reply = cmd[static_cast<size_t>(i)].ReadLine();
      if (reply == "+OK" || reply == ":1") {
        granted[static_cast<size_t>(i)] = true;
        ++ok;
      } else if (reply != "$-1" && reply != ":0") {
        Fail("SET answered " + reply);
      }
    }
    if (ok >= quorum) break;
    if (ok > 0) {
      // An undo names nobody: its message would wake a waiter for a lock
      // that was never made.
      const std::string undo =
          Command({"EVAL", kRelease, "2", key, channel, token});
      for (int i = 0; i < n; ++i) {
        if (granted[static_cast<size_t>(i)])
          cmd[static_cast<size_t>(i)].Send(undo);
      }
      for (int i = 0; i < n; ++i) {
        if (granted[static_cast<size_t>(i)])
          cmd[static_cast<size_t>(i)].ReadLine();
      }
    }
    const int64_t left_ms = (deadline - NowNs()) / 1000000;
    if (left_ms <= 0) {
      std::fputs("redlock-e2e-handoff-floor: gave up waiting\n", stderr);
      WriteTimings();
      return 75;
    }
    for (int i = 0; i < n; ++i) {
      fds[static_cast<size_t>(i)] = {sub[static_cast<size_t>(i)].fd, POLLIN, 0};
    }
    if (!queued_mode) {
      poll(fds.data(), fds.size(),
           left_ms < 100 ? static_cast<int>(left_ms) : 100);
      continue;
    }
    // Queued: on once a message names this waiter, or after 100 ms.
    const int64_t until = NowNs() + std::min<int64_t>(left_ms, 100) * 1000000;
    bool named = false;
    while (!named) {
      const int64_t wait_ms = (until - NowNs()) / 1000000;
      if (wait_ms <= 0) break;
      if (poll(fds.data(), fds.size(), static_cast<int>(wait_ms)) <= 0)
        continue;
      std::vector<std::string> payloads;
      for (int i = 0; i < n; ++i) {
        Conn& s = sub[static_cast<size_t>(i)];
        if ((fds[static_cast<size_t>(i)].revents & POLLIN) != 0 && !s.Fill()) {
          Fail("a master closed the subscribed connection");
        }
        TakeMessages(s, &payloads);
      }
      for (const std::string& p : payloads) named = named || p == token;
    }
  }
  marks[kAcquired] = NowNs();

  marks[kSpawning] = NowNs();
  const pid_t child = vfork();
  if (child == 0) {
    execvp(argv[command], argv + command);
    _exit(127);
  }
  if (child < 0) Fail("vfork failed");
  marks[kForked] = NowNs();
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
  }
  marks[kReaped] = NowNs();

  for (Conn& c : cmd) c.Send(release);
  for (Conn& c : cmd) {
    for (; c.unread > 0; --c.unread) c.ReadLine();
    c.ReadLine();
  }
  marks[kReleased] = NowNs();
  marks[kExit] = NowNs();
  WriteTimings();
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
