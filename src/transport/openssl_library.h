// Copyright 2026 The redlock Authors.
//
// OpenSSL, loaded the first time something needs it (a TLS master, or the
// version report), not when the process starts. Loading libssl.so.3 and
// libcrypto.so.3 costs a new process about 1 ms of CPU (their thousands of
// symbol relocations are bound at load time), which every `redlock run` and
// every program linked with the library would pay without a TLS master in
// sight.
//
//   absl::StatusOr<const OpenSsl*> ssl = LoadOpenSsl();
//   if (!ssl.ok()) return ssl.status();
//   SSL_CTX* ctx = (*ssl)->SSL_CTX_new((*ssl)->TLS_client_method());
//
// The functions are the ones OpenSSL 3's headers declare, with their types
// (decltype), looked up in libssl.so.3 by name. OpenSSL's macros that
// expand to a call (SSL_CTX_set_min_proto_version, BIO_set_mem_eof_return,
// SSL_set_tlsext_host_name, SSL_get_cipher_name) are written out as the
// calls they expand to.
#ifndef REDLOCK_SRC_TRANSPORT_OPENSSL_LIBRARY_H_
#define REDLOCK_SRC_TRANSPORT_OPENSSL_LIBRARY_H_

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "absl/status/statusor.h"

namespace redlock::internal {

// Every OpenSSL function the library calls.
#define REDLOCK_OPENSSL_FUNCTIONS(X)    \
  X(OpenSSL_version)                    \
  X(ERR_get_error)                      \
  X(ERR_error_string_n)                 \
  X(ERR_clear_error)                    \
  X(ERR_peek_last_error)                \
  X(X509_verify_cert_error_string)      \
  X(X509_VERIFY_PARAM_set1_ip_asc)      \
  X(TLS_client_method)                  \
  X(SSL_CTX_new)                        \
  X(SSL_CTX_free)                       \
  X(SSL_CTX_ctrl)                       \
  X(SSL_CTX_load_verify_locations)      \
  X(SSL_CTX_set_default_verify_paths)   \
  X(SSL_CTX_use_certificate_chain_file) \
  X(SSL_CTX_use_PrivateKey_file)        \
  X(SSL_CTX_check_private_key)          \
  X(SSL_new)                            \
  X(SSL_free)                           \
  X(SSL_ctrl)                           \
  X(SSL_set_bio)                        \
  X(SSL_set_connect_state)              \
  X(SSL_set_verify)                     \
  X(SSL_get0_param)                     \
  X(SSL_set1_host)                      \
  X(SSL_do_handshake)                   \
  X(SSL_read)                           \
  X(SSL_write)                          \
  X(SSL_pending)                        \
  X(SSL_get_error)                      \
  X(SSL_get_verify_result)              \
  X(SSL_get_version)                    \
  X(SSL_get_current_cipher)             \
  X(SSL_CIPHER_get_name)                \
  X(BIO_new)                            \
  X(BIO_free)                           \
  X(BIO_s_mem)                          \
  X(BIO_read)                           \
  X(BIO_write)                          \
  X(BIO_ctrl)                           \
  X(BIO_ctrl_pending)

struct OpenSsl {
#define REDLOCK_OPENSSL_MEMBER(name) decltype(&::name) name = nullptr;
  REDLOCK_OPENSSL_FUNCTIONS(REDLOCK_OPENSSL_MEMBER)
#undef REDLOCK_OPENSSL_MEMBER
};

// The library's functions, every one of them found. Loads libssl.so.3 (and
// with it libcrypto.so.3) on the first call, from any thread, once; later
// calls give the same answer. kFailedPrecondition naming the file and the
// loader's reason when it cannot be loaded or lacks a function (then TLS
// is unavailable and nothing else is affected). The library stays loaded
// for the life of the process.
absl::StatusOr<const OpenSsl*> LoadOpenSsl();

// Whether this process has libssl.so.3 loaded, by us or by anything else
// (dlopen with RTLD_NOLOAD: it loads nothing). For tests.
bool OpenSslIsLoadedForTesting();

}  // namespace redlock::internal

#endif  // REDLOCK_SRC_TRANSPORT_OPENSSL_LIBRARY_H_
