// Copyright 2026 The redlock Authors.

#include "src/transport/tls.h"

#include <arpa/inet.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "src/transport/openssl_library.h"

namespace redlock::internal {
namespace {

// OpenSSL's queued errors as one line (and the queue emptied).
std::string OpenSslErrors(const OpenSsl& ssl) {
  std::string text;
  while (unsigned long e = ssl.ERR_get_error()) {
    char buf[256];
    ssl.ERR_error_string_n(e, buf, sizeof(buf));
    if (!text.empty()) text += "; ";
    text += buf;
  }
  return text.empty() ? "no detail from OpenSSL" : text;
}

bool IsIpAddress(const std::string& name) {
  unsigned char buf[16];
  return inet_pton(AF_INET, name.c_str(), buf) == 1 ||
         inet_pton(AF_INET6, name.c_str(), buf) == 1;
}

absl::Status FileError(const OpenSsl& ssl, absl::string_view option,
                       const std::string& file, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("tls.", option, ": cannot ",
                                                 what, " \"", file,
                                                 "\": ", OpenSslErrors(ssl)));
}

// Why a verification failed, in words.
std::string VerifyText(const OpenSsl& ssl, long result,
                       const std::string& name) {
  switch (result) {
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
      return absl::StrCat(
          "the server's certificate is not signed by a trusted CA (",
          ssl.X509_verify_cert_error_string(result),
          "; give its CA with tls.ca_file / --cacert)");
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return "the server's certificate has expired";
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return "the server's certificate is not valid yet (check the clocks)";
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return absl::StrCat("the server's certificate does not match the name \"",
                          name,
                          "\" (name the master as its certificate does, or "
                          "set ?tls_name= / tls.server_name / --sni)");
    default:
      return absl::StrCat("the server's certificate was refused: ",
                          ssl.X509_verify_cert_error_string(result));
  }
}

}  // namespace

absl::StatusOr<std::shared_ptr<TlsContext>> TlsContext::Create(
    const TlsOptions& options) {
  absl::StatusOr<const OpenSsl*> loaded = LoadOpenSsl();
  if (!loaded.ok()) return loaded.status();
  const OpenSsl& ssl = **loaded;
  ssl.ERR_clear_error();
  SSL_CTX* ctx = ssl.SSL_CTX_new(ssl.TLS_client_method());
  if (ctx == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot make a TLS context: ", OpenSslErrors(ssl)));
  }
  // Owns ctx from here on.
  std::shared_ptr<TlsContext> context(new TlsContext(&ssl, ctx, options));
  // SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION), written out.
  ssl.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION,
                   nullptr);
  if (!options.ca_file.empty() || !options.ca_dir.empty()) {
    if (ssl.SSL_CTX_load_verify_locations(
            ctx, options.ca_file.empty() ? nullptr : options.ca_file.c_str(),
            options.ca_dir.empty() ? nullptr : options.ca_dir.c_str()) != 1) {
      return options.ca_file.empty()
                 ? FileError(ssl, "ca_dir", options.ca_dir, "use CA directory")
                 : FileError(ssl, "ca_file", options.ca_file, "read CA file");
    }
  } else if (ssl.SSL_CTX_set_default_verify_paths(ctx) != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tls: cannot use the system's CA store: ", OpenSslErrors(ssl)));
  }
  if (options.cert_file.empty() != options.key_file.empty()) {
    return absl::InvalidArgumentError(
        "tls: a client certificate needs both cert_file and key_file "
        "(--cert and --key)");
  }
  if (!options.cert_file.empty()) {
    if (ssl.SSL_CTX_use_certificate_chain_file(
            ctx, options.cert_file.c_str()) != 1) {
      return FileError(ssl, "cert_file", options.cert_file, "read certificate");
    }
    if (ssl.SSL_CTX_use_PrivateKey_file(ctx, options.key_file.c_str(),
                                        SSL_FILETYPE_PEM) != 1) {
      return FileError(ssl, "key_file", options.key_file, "read private key");
    }
    if (ssl.SSL_CTX_check_private_key(ctx) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("tls: key_file \"", options.key_file,
                       "\" does not match cert_file \"", options.cert_file,
                       "\": ", OpenSslErrors(ssl)));
    }
  }
  return context;
}

TlsContext::~TlsContext() { ssl_->SSL_CTX_free(ctx_); }

TlsSession::TlsSession(std::shared_ptr<const TlsContext> context,
                       std::string name)
    : context_(std::move(context)), name_(std::move(name)) {}

TlsSession::~TlsSession() {
  // Frees both BIOs.
  if (ssl_ != nullptr) context_->ssl().SSL_free(ssl_);
}

absl::Status TlsSession::Init() {
  const OpenSsl& ssl = context_->ssl();
  ssl.ERR_clear_error();
  ssl_ = ssl.SSL_new(context_->ctx());
  in_ = ssl.BIO_new(ssl.BIO_s_mem());
  out_ = ssl.BIO_new(ssl.BIO_s_mem());
  if (ssl_ == nullptr || in_ == nullptr || out_ == nullptr) {
    if (ssl_ == nullptr) {
      ssl.BIO_free(in_);
      ssl.BIO_free(out_);
    } else {
      ssl.SSL_set_bio(ssl_, in_, out_);
    }
    return absl::InternalError(
        absl::StrCat("cannot start TLS: ", OpenSslErrors(ssl)));
  }
  // An empty input BIO means "wait for more", not end of stream
  // (BIO_set_mem_eof_return(in_, -1), written out).
  ssl.BIO_ctrl(in_, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nullptr);
  ssl.SSL_set_bio(ssl_, in_, out_);
  ssl.SSL_set_connect_state(ssl_);
  const bool ip = IsIpAddress(name_);
  if (!ip && !name_.empty()) {
    // SSL_set_tlsext_host_name(ssl_, name), written out.
    ssl.SSL_ctrl(ssl_, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                 const_cast<char*>(name_.c_str()));
  }
  if (context_->options().insecure) {
    ssl.SSL_set_verify(ssl_, SSL_VERIFY_NONE, nullptr);
    return absl::OkStatus();
  }
  ssl.SSL_set_verify(ssl_, SSL_VERIFY_PEER, nullptr);
  X509_VERIFY_PARAM* param = ssl.SSL_get0_param(ssl_);
  if (ip) {
    if (ssl.X509_VERIFY_PARAM_set1_ip_asc(param, name_.c_str()) != 1) {
      return absl::InternalError(
          absl::StrCat("cannot check the certificate against ", name_, ": ",
                       OpenSslErrors(ssl)));
    }
  } else if (ssl.SSL_set1_host(ssl_, name_.c_str()) != 1) {
    return absl::InternalError(
        absl::StrCat("cannot check the certificate against ", name_, ": ",
                     OpenSslErrors(ssl)));
  }
  return absl::OkStatus();
}

void TlsSession::Drain(std::string* out) {
  char buf[16384];
  int n;
  while ((n = context_->ssl().BIO_read(out_, buf, sizeof(buf))) > 0) {
    out->append(buf, n);
  }
}

absl::Status TlsSession::Failure(int ret, absl::string_view during) {
  const OpenSsl& ssl = context_->ssl();
  const int error = ssl.SSL_get_error(ssl_, ret);
  const unsigned long code = ssl.ERR_peek_last_error();
  const int reason = ERR_GET_REASON(code);
  std::string why;
  if (!done_ && ssl.SSL_get_verify_result(ssl_) != X509_V_OK &&
      !context_->options().insecure) {
    why = VerifyText(ssl, ssl.SSL_get_verify_result(ssl_), name_);
  } else if (reason == SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED ||
             (reason == SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE &&
              context_->options().cert_file.empty())) {
    why =
        "the server requires a client certificate and none was sent (set "
        "tls.cert_file and tls.key_file, or --cert and --key)";
  } else if (reason == SSL_R_SSLV3_ALERT_BAD_CERTIFICATE ||
             reason == SSL_R_TLSV1_ALERT_UNKNOWN_CA ||
             reason == SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN) {
    why = absl::StrCat("the server refused our client certificate (",
                       OpenSslErrors(ssl), ")");
  } else if (!done_ && (reason == SSL_R_WRONG_VERSION_NUMBER ||
                        reason == SSL_R_PACKET_LENGTH_TOO_LONG ||
                        reason == SSL_R_RECORD_LENGTH_MISMATCH)) {
    why =
        "the server did not answer TLS: a plain (non-TLS) port? use redis:// "
        "for it";
  } else if (error == SSL_ERROR_ZERO_RETURN) {
    why = "the server closed the TLS session";
  } else {
    why = OpenSslErrors(ssl);
  }
  ssl.ERR_clear_error();
  return absl::UnavailableError(absl::StrCat(during, ": ", why));
}

absl::StatusOr<bool> TlsSession::Handshake(absl::string_view in,
                                           std::string* out) {
  const OpenSsl& ssl = context_->ssl();
  if (!in.empty()) {
    // A TLS server answers a ClientHello with a handshake (22) or alert (21)
    // record; anything else is another protocol.
    if (!saw_bytes_ && in[0] != 0x16 && in[0] != 0x15) {
      return absl::UnavailableError(
          "TLS handshake failed: the server did not answer TLS: a plain "
          "(non-TLS) port? use redis:// for it");
    }
    saw_bytes_ = true;
    if (ssl.BIO_write(in_, in.data(), static_cast<int>(in.size())) !=
        static_cast<int>(in.size())) {
      return absl::ResourceExhaustedError("TLS: out of memory");
    }
  }
  ssl.ERR_clear_error();
  const int ret = ssl.SSL_do_handshake(ssl_);
  Drain(out);
  if (ret == 1) {
    done_ = true;
    return true;
  }
  const int error = ssl.SSL_get_error(ssl_, ret);
  if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
    return false;
  }
  return Failure(ret, "TLS handshake failed");
}

absl::Status TlsSession::Decrypt(absl::string_view in, std::string* plain,
                                 std::string* out) {
  const OpenSsl& ssl = context_->ssl();
  if (!in.empty() &&
      ssl.BIO_write(in_, in.data(), static_cast<int>(in.size())) !=
          static_cast<int>(in.size())) {
    return absl::ResourceExhaustedError("TLS: out of memory");
  }
  char buf[16384];
  for (;;) {
    ssl.ERR_clear_error();
    const int n = ssl.SSL_read(ssl_, buf, sizeof(buf));
    if (n > 0) {
      plain->append(buf, n);
      // Nothing left to decrypt: spare the call that would say so.
      if (ssl.SSL_pending(ssl_) == 0 && ssl.BIO_ctrl_pending(in_) == 0) {
        Drain(out);
        return absl::OkStatus();
      }
      continue;
    }
    Drain(out);
    const int error = ssl.SSL_get_error(ssl_, n);
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
      return absl::OkStatus();
    }
    return Failure(n, "TLS connection lost");
  }
}

absl::Status TlsSession::Encrypt(absl::string_view plain, std::string* out) {
  const OpenSsl& ssl = context_->ssl();
  while (!plain.empty()) {
    ssl.ERR_clear_error();
    const int n =
        ssl.SSL_write(ssl_, plain.data(), static_cast<int>(plain.size()));
    if (n <= 0) return Failure(n, "TLS write failed");
    plain.remove_prefix(n);
  }
  Drain(out);
  return absl::OkStatus();
}

std::string TlsSession::Description() const {
  if (ssl_ == nullptr || !done_) return "";
  const OpenSsl& ssl = context_->ssl();
  // SSL_get_cipher_name(ssl_), written out.
  return absl::StrCat(
      ssl.SSL_get_version(ssl_), " ",
      ssl.SSL_CIPHER_get_name(ssl.SSL_get_current_cipher(ssl_)));
}

}  // namespace redlock::internal
