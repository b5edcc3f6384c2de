// Copyright 2026 The redlock Authors.
//
// HugeHeaderPeer: a TCP listener on loopback that answers the first thing a
// connection sends with "*380000000\r\n" — an array header declaring 380
// million elements, what a broken or hostile master could send — and then
// keeps the connection open, so the client must give up on its own. Not a
// Redis: a fault, like the fault proxy's. Serves one connection.

#ifndef REDLOCK_TESTS_SUPPORT_HOSTILE_PEER_H_
#define REDLOCK_TESTS_SUPPORT_HOSTILE_PEER_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

namespace redlock::testing {

class HugeHeaderPeer {
 public:
  HugeHeaderPeer() {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (bind(listener_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        listen(listener_, 4) != 0 ||
        getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return;
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] {
      const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;  // The listener was shut down.
      char buf[4096];
      if (read(fd, buf, sizeof(buf)) > 0) {
        static constexpr char kHeader[] = "*380000000\r\n";
        (void)!write(fd, kHeader, sizeof(kHeader) - 1);
      }
      // Keep the connection open until the test is done: the client must
      // give up on its own.
      while (read(fd, buf, sizeof(buf)) > 0) {
      }
      close(fd);
    });
  }
  ~HugeHeaderPeer() {
    shutdown(listener_, SHUT_RDWR);
    if (thread_.joinable()) thread_.join();
    close(listener_);
  }
  // 0 if the listener could not be set up.
  int port() const { return port_; }
  std::string Uri() const {
    return "redis://127.0.0.1:" + std::to_string(port_);
  }

 private:
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace redlock::testing

#endif  // REDLOCK_TESTS_SUPPORT_HOSTILE_PEER_H_
