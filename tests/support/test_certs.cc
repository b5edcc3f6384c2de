// Copyright 2026 The redlock Authors.

#include "tests/support/test_certs.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "tests/support/after_fork.h"

namespace redlock::testing {
namespace {

absl::StatusOr<std::string> FindOpenssl() {
  const char* path = std::getenv("PATH");
  for (absl::string_view dir :
       absl::StrSplit(path != nullptr ? path : "", ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(dir, "/openssl");
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  if (access("/usr/bin/openssl", X_OK) == 0) {
    return std::string("/usr/bin/openssl");
  }
  return absl::NotFoundError(
      "openssl not found on PATH or in /usr/bin: the TLS tests make their "
      "certificates with it; install the Debian package openssl");
}

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

// One configuration for every step: `req` needs a distinguished_name
// section even with -subj, and `openssl ca` a database. Nothing is taken
// from the system's openssl.cnf.
std::string ConfigText(const std::string& dir) {
  return absl::StrCat(
      "[req]\n"
      "distinguished_name = req_dn\n"
      "prompt = no\n"
      "[req_dn]\n"
      "CN = unused\n"
      "[ca]\n"
      "default_ca = test_ca\n"
      "[test_ca]\n"
      "dir = ",
      dir,
      "\n"
      "database = $dir/cadb/index.txt\n"
      "new_certs_dir = $dir/cadb\n"
      "serial = $dir/cadb/serial\n"
      "certificate = $dir/ca.pem\n"
      "private_key = $dir/ca.key\n"
      "default_md = sha256\n"
      "policy = any_subject\n"
      "copy_extensions = none\n"
      "unique_subject = no\n"
      "[any_subject]\n"
      "commonName = supplied\n"
      "[ca_ext]\n"
      "basicConstraints = critical, CA:TRUE\n"
      "keyUsage = critical, keyCertSign, cRLSign\n"
      "subjectKeyIdentifier = hash\n"
      "[server_ext]\n"
      "basicConstraints = CA:FALSE\n"
      "keyUsage = critical, digitalSignature, keyEncipherment\n"
      "extendedKeyUsage = serverAuth\n"
      "subjectAltName = DNS:localhost, IP:127.0.0.1\n"
      "[other_name_ext]\n"
      "basicConstraints = CA:FALSE\n"
      "keyUsage = critical, digitalSignature, keyEncipherment\n"
      "extendedKeyUsage = serverAuth\n"
      "subjectAltName = DNS:other.example\n"
      "[client_ext]\n"
      "basicConstraints = CA:FALSE\n"
      "keyUsage = critical, digitalSignature, keyEncipherment\n"
      "extendedKeyUsage = clientAuth\n");
}

absl::Status WriteFile(const std::string& path, absl::string_view text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> TestCerts::RunOpenssl(
    const std::vector<std::string>& args, absl::Duration timeout) const {
  std::vector<std::string> argv = {openssl_};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProgram(argv, timeout);
}

absl::StatusOr<std::string> TestCerts::RunProgram(
    const std::vector<std::string>& argv_in, absl::Duration timeout) const {
  if (argv_in.empty()) return absl::InvalidArgumentError("empty argv");
  const std::string what = absl::StrJoin(argv_in, " ");
  // Prepared before fork(): the child only calls async-signal-safe functions.
  std::vector<std::string> argv_strings = argv_in;
  std::vector<char*> argv;
  for (std::string& arg : argv_strings) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::string log_path = Path("run.log");
  const int log_fd =
      open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (log_fd < 0) {
    return absl::InternalError(
        absl::StrCat("open ", log_path, ": ", std::strerror(errno)));
  }
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    BelongToParentAfterFork(parent);
    if (chdir(dir_.c_str()) != 0) _exit(126);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  const int fork_errno = errno;
  close(log_fd);
  if (null_fd >= 0) close(null_fd);
  if (pid < 0) {
    return absl::InternalError(
        absl::StrCat("fork for ", what, ": ", std::strerror(fork_errno)));
  }
  const absl::Time deadline = absl::Now() + timeout;
  int status = 0;
  while (true) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      return absl::InternalError(
          absl::StrCat("waitpid for ", what, ": ", std::strerror(errno)));
    }
    if (absl::Now() >= deadline) {
      kill(pid, SIGKILL);  // Our own child, by PID.
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return absl::DeadlineExceededError(absl::StrCat(
          what, " did not finish within ", absl::FormatDuration(timeout)));
    }
    absl::SleepFor(absl::Milliseconds(2));
  }
  std::string output = ReadWhole(log_path);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(absl::StrCat(
        what, " failed (",
        WIFEXITED(status) ? absl::StrCat("exit ", WEXITSTATUS(status))
                          : absl::StrCat("signal ", WTERMSIG(status)),
        "): ", output));
  }
  return output;
}

absl::StatusOr<std::unique_ptr<TestCerts>> TestCerts::Make(
    absl::Duration timeout) {
  absl::StatusOr<std::string> openssl = FindOpenssl();
  if (!openssl.ok()) return openssl.status();
  const char* tmpdir = std::getenv("TMPDIR");
  std::string pattern =
      absl::StrCat(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp",
                   "/redlock-certs-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(
        absl::StrCat("mkdtemp ", pattern, ": ", std::strerror(errno)));
  }
  // From here the destructor removes the directory on every error path.
  std::unique_ptr<TestCerts> certs(
      new TestCerts(*std::move(openssl), std::move(pattern)));
  const std::string& dir = certs->dir_;
  std::error_code error;
  std::filesystem::create_directory(dir + "/cadb", error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("mkdir ", dir, "/cadb: ", error.message()));
  }
  const std::string config = certs->Path("openssl.cnf");
  for (const auto& [path, text] :
       std::vector<std::pair<std::string, std::string>>{
           {config, ConfigText(dir)},
           {dir + "/cadb/index.txt", ""},
           {dir + "/cadb/serial", "1000\n"}}) {
    if (absl::Status s = WriteFile(path, text); !s.ok()) return s;
  }

  const absl::Time deadline = absl::Now() + timeout;
  const std::vector<std::string> new_key = {
      "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
      "-out"};
  auto key = [&](const std::string& name) {
    std::vector<std::string> args = new_key;
    args.push_back(name);
    return args;
  };
  auto self_signed_ca = [&](const std::string& key_file,
                            const std::string& cert_file,
                            const std::string& name) {
    return std::vector<std::string>{
        "req",  "-x509",  "-new",        "-config",     config,
        "-key", key_file, "-out",        cert_file,     "-days",
        "3",    "-subj",  "/CN=" + name, "-extensions", "ca_ext"};
  };
  auto request = [&](const std::string& key_file, const std::string& csr,
                     const std::string& common_name) {
    return std::vector<std::string>{
        "req",    "-new", "-config", config,  "-key",
        key_file, "-out", csr,       "-subj", "/CN=" + common_name};
  };
  // `openssl ca` signs with the test CA; start and end dates are given
  // explicitly for the expired certificate (OpenSSL 3.0's `x509 -req` has
  // no start date).
  auto sign = [&](const std::string& csr, const std::string& cert,
                  const std::string& extensions,
                  std::vector<std::string> dates) {
    std::vector<std::string> args = {
        "ca", "-batch", "-notext", "-config",     config,    "-in",
        csr,  "-out",   cert,      "-extensions", extensions};
    args.insert(args.end(), dates.begin(), dates.end());
    return args;
  };
  const std::vector<std::string> valid = {"-days", "3"};
  const std::vector<std::vector<std::string>> steps = {
      key("ca.key"),
      self_signed_ca("ca.key", "ca.pem", "redlock test CA"),
      key("wrong-ca.key"),
      self_signed_ca("wrong-ca.key", "wrong-ca.pem", "redlock unrelated CA"),
      key("server.key"),
      request("server.key", "server.csr", "localhost"),
      sign("server.csr", "server.pem", "server_ext", valid),
      sign("server.csr", "expired.pem", "server_ext",
           {"-startdate", "20200101000000Z", "-enddate", "20200102000000Z"}),
      request("server.key", "other-name.csr", "other.example"),
      sign("other-name.csr", "other-name.pem", "other_name_ext", valid),
      key("client.key"),
      request("client.key", "client.csr", "redlock test client"),
      sign("client.csr", "client.pem", "client_ext", valid),
  };
  for (const std::vector<std::string>& step : steps) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError(
          absl::StrCat("making test certificates took longer than ",
                       absl::FormatDuration(timeout)));
    }
    absl::StatusOr<std::string> ran = certs->RunOpenssl(step, left);
    if (!ran.ok()) return ran.status();
  }
  // The wrong CA's key is never needed again.
  std::filesystem::remove(certs->Path("wrong-ca.key"), error);
  return certs;
}

TestCerts::~TestCerts() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

}  // namespace redlock::testing
