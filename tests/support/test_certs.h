// Copyright 2026 The redlock Authors.
//
// TestCerts: throw-away certificates for TLS tests, made with the `openssl`
// command when a test runs, in a temporary directory of their own (no private
// key is ever committed). One set holds:
//
//   ca_file()            a CA ("redlock test CA") that signed everything below
//   server_cert()        for DNS:localhost and IP:127.0.0.1, with server_key()
//   client_cert()        a client certificate (clientAuth), with client_key()
//   wrong_ca_file()      a second CA that signed none of these
//   expired_cert()       DNS:localhost, IP:127.0.0.1, valid only in 2020
//                        (server_key())
//   other_name_cert()    DNS:other.example only, no IP entry (server_key())
//
//   auto certs = TestCerts::Make();
//   ASSERT_TRUE(certs.ok()) << certs.status();
//   config.tls.enabled = true;
//   config.tls.cert_file = (*certs)->server_cert(); ...
//
// Keys are EC P-256. The directory is removed when the TestCerts is
// destroyed: keep it alive as long as any server started with its files
// (a restart reads them again). Not thread-safe.

#ifndef REDLOCK_TESTS_SUPPORT_TEST_CERTS_H_
#define REDLOCK_TESTS_SUPPORT_TEST_CERTS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace redlock::testing {

class TestCerts {
 public:
  // Makes the whole set, every openssl run bounded by what is left of
  // `timeout` (the run is killed when it is over). Errors:
  //   kNotFound          no openssl binary on PATH or in /usr/bin.
  //   kDeadlineExceeded  openssl did not finish in time.
  //   kInternal          an openssl run failed (its output is in the
  //                      message), or mkdtemp, fork or exec failed.
  // Nothing is left behind on error.
  static absl::StatusOr<std::unique_ptr<TestCerts>> Make(
      absl::Duration timeout = absl::Seconds(20));

  ~TestCerts();
  TestCerts(const TestCerts&) = delete;
  TestCerts& operator=(const TestCerts&) = delete;

  // The temporary directory holding every file below.
  const std::string& dir() const { return dir_; }

  std::string ca_file() const { return Path("ca.pem"); }
  std::string server_cert() const { return Path("server.pem"); }
  std::string server_key() const { return Path("server.key"); }
  std::string client_cert() const { return Path("client.pem"); }
  std::string client_key() const { return Path("client.key"); }
  std::string wrong_ca_file() const { return Path("wrong-ca.pem"); }
  std::string expired_cert() const { return Path("expired.pem"); }
  std::string other_name_cert() const { return Path("other-name.pem"); }

  // Runs `openssl args...` in dir() (bounded by `timeout`): for tests that
  // check the files themselves, e.g. {"verify", "-CAfile", ca_file(), cert}.
  // OK with the combined output if it exited 0; kInternal with the output
  // otherwise.
  absl::StatusOr<std::string> RunOpenssl(
      const std::vector<std::string>& args,
      absl::Duration timeout = absl::Seconds(10)) const;
  // The same for any program (argv[0] looked up on PATH), e.g. redis-cli
  // --tls --cacert ca_file() ... PING. kDeadlineExceeded if it had to be
  // killed at `timeout`.
  absl::StatusOr<std::string> RunProgram(
      const std::vector<std::string>& argv,
      absl::Duration timeout = absl::Seconds(10)) const;

 private:
  TestCerts(std::string openssl, std::string dir)
      : openssl_(std::move(openssl)), dir_(std::move(dir)) {}

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  const std::string openssl_;
  const std::string dir_;
};

}  // namespace redlock::testing

#endif  // REDLOCK_TESTS_SUPPORT_TEST_CERTS_H_
