// Copyright 2026 The redlock Authors.
//
// TLS for the library's connections (src/transport/wire.h), on Debian's
// OpenSSL 3. TlsContext is one client's settings (TlsOptions: trusted CAs, the
// client certificate), loaded once when the client is made. TlsSession is one
// connection's TLS state as a pure transform between plaintext and the bytes
// on the socket (two memory BIOs): the connection moves the bytes itself, so
// TLS and plain TCP share one socket path (send() with MSG_NOSIGNAL, never
// SIGPIPE) and one set of events. No I/O here.

#ifndef REDLOCK_SRC_TRANSPORT_TLS_H_
#define REDLOCK_SRC_TRANSPORT_TLS_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "redlock/options.h"

struct ssl_ctx_st;
struct ssl_st;
struct bio_st;

namespace redlock::internal {

struct OpenSsl;  // src/transport/openssl_library.h

class TlsContext {
 public:
  // Loads OpenSSL if no TLS context did before (LoadOpenSsl(): its
  // kFailedPrecondition if it cannot), then reads the CA file/directory (or
  // the system store), the client certificate and key. kInvalidArgument
  // naming the option and the file when one cannot be read or the key does
  // not match the certificate.
  static absl::StatusOr<std::shared_ptr<TlsContext>> Create(
      const TlsOptions& options);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  const TlsOptions& options() const { return options_; }
  ssl_ctx_st* ctx() const { return ctx_; }
  // OpenSSL's functions, loaded.
  const OpenSsl& ssl() const { return *ssl_; }

 private:
  TlsContext(const OpenSsl* ssl, ssl_ctx_st* ctx, TlsOptions options)
      : ssl_(ssl), ctx_(ctx), options_(std::move(options)) {}
  const OpenSsl* const ssl_;
  ssl_ctx_st* const ctx_;
  const TlsOptions options_;
};

class TlsSession {
 public:
  // `name`: what the server's certificate must be for (a host name, or an
  // IP address checked against its IP entries), and the SNI for a name.
  TlsSession(std::shared_ptr<const TlsContext> context, std::string name);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // Makes the SSL object; kInternal if OpenSSL cannot.
  absl::Status Init();

  // Drives the handshake with `in` (bytes received from the server) and
  // appends what must be sent to `out`. True once it has completed; an
  // error says in words why it failed (an unknown CA, a name mismatch, an
  // expired certificate, a plain server ...).
  absl::StatusOr<bool> Handshake(absl::string_view in, std::string* out);
  // After the handshake: decrypts `in` into `plain` (appending), appending
  // anything TLS itself must send to `out`. kUnavailable when the server
  // closed the TLS session or sent an alert, with the reason.
  absl::Status Decrypt(absl::string_view in, std::string* plain,
                       std::string* out);
  // Encrypts `plain`, appending the bytes to send to `out`.
  absl::Status Encrypt(absl::string_view plain, std::string* out);

  // "TLSv1.3 TLS_AES_256_GCM_SHA384" once the handshake is done.
  std::string Description() const;

 private:
  absl::Status Failure(int ret, absl::string_view during);
  void Drain(std::string* out);

  std::shared_ptr<const TlsContext> context_;
  const std::string name_;
  ssl_st* ssl_ = nullptr;
  bio_st* in_ = nullptr;   // Network -> SSL (owned by ssl_).
  bio_st* out_ = nullptr;  // SSL -> network (owned by ssl_).
  bool saw_bytes_ = false;
  bool done_ = false;
};

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_TRANSPORT_TLS_H_
