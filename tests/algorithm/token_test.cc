// Copyright 2026 The redlock Authors.

#include "src/algorithm/token.h"

#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"

extern char** environ;

namespace redlock::internal {
namespace {

// Set in the environment of the processes FreshProcessesDrawDifferentTokens
// starts: there, PrintsTheFirstTokenOfAFreshProcess prints instead of
// skipping.
constexpr char kPrintFirstTokenEnv[] = "REDLOCK_TOKEN_TEST_PRINT_FIRST_TOKEN";
constexpr char kFirstTokenPrefix[] = "first-token=";

// Everything readable from `fd` until EOF.
std::string ReadAll(int fd) {
  std::string out;
  char buffer[256];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

// Runs this test binary afresh (exec, not only fork) with only
// PrintsTheFirstTokenOfAFreshProcess, and returns the token it printed.
std::string FirstTokenOfAFreshProcess() {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::string exe = "/proc/self/exe";
  std::string filter =
      "--gtest_filter=NewTokenTest.PrintsTheFirstTokenOfAFreshProcess";
  std::vector<char*> argv = {exe.data(), filter.data(), nullptr};
  std::vector<std::string> env_strings = {std::string(kPrintFirstTokenEnv) +
                                          "=1"};
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int err = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(),
                              envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  std::string out = err == 0 ? ReadAll(fds[0]) : "";
  close(fds[0]);
  if (err != 0) return "posix_spawn failed";
  int status = 0;
  waitpid(pid, &status, 0);
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (absl::ConsumePrefix(&line, kFirstTokenPrefix)) return std::string(line);
  }
  return "no token printed: " + out;
}

TEST(NewTokenTest, Is32LowercaseHexDigits) {
  absl::StatusOr<std::string> token = NewToken();
  ASSERT_TRUE(token.ok()) << token.status();
  ASSERT_EQ(token->size(), 32u);
  for (char c : *token) {
    EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << *token;
  }
}

TEST(NewTokenTest, TenThousandTokensAreAllDistinct) {
  absl::flat_hash_set<std::string> seen;
  for (int i = 0; i < 10000; ++i) {
    absl::StatusOr<std::string> token = NewToken();
    ASSERT_TRUE(token.ok()) << token.status();
    EXPECT_TRUE(seen.insert(*token).second) << "repeated: " << *token;
  }
}

TEST(NewTokenTest, EveryHexDigitPositionVaries) {
  // A constant prefix or suffix (a counter, a time stamp) would show here.
  std::string first = *NewToken();
  std::vector<bool> varied(32, false);
  for (int i = 0; i < 200; ++i) {
    std::string next = *NewToken();
    for (int p = 0; p < 32; ++p) varied[p] = varied[p] || next[p] != first[p];
  }
  for (int p = 0; p < 32; ++p) EXPECT_TRUE(varied[p]) << "position " << p;
}

// A PRNG in the process (seeded once, whatever the seed) is copied by fork:
// parent and child would then draw the same next token.
TEST(NewTokenTest, ParentAndForkedChildDrawDifferentTokens) {
  // Whatever state a token source keeps is set up before the fork.
  ASSERT_TRUE(NewToken().ok());
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    absl::StatusOr<std::string> token = NewToken();
    const std::string out = token.ok() ? *token : "error";
    const bool written = write(fds[1], out.data(), out.size()) ==
                         static_cast<ssize_t>(out.size());
    _exit(written ? 0 : 1);
  }
  close(fds[1]);
  absl::StatusOr<std::string> parent = NewToken();
  const std::string child = ReadAll(fds[0]);
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ASSERT_TRUE(parent.ok()) << parent.status();
  ASSERT_EQ(child.size(), 32u) << child;
  EXPECT_NE(*parent, child);
}

// A PRNG seeded with a constant, or with the time in seconds, gives two
// processes started together the same first token.
TEST(NewTokenTest, FreshProcessesDrawDifferentFirstTokens) {
  const std::string first = FirstTokenOfAFreshProcess();
  const std::string second = FirstTokenOfAFreshProcess();
  ASSERT_EQ(first.size(), 32u) << first;
  ASSERT_EQ(second.size(), 32u) << second;
  EXPECT_NE(first, second);
}

// Not a test on its own: the process FreshProcessesDrawDifferentFirstTokens
// starts, which runs only this.
TEST(NewTokenTest, PrintsTheFirstTokenOfAFreshProcess) {
  if (getenv(kPrintFirstTokenEnv) == nullptr) {
    GTEST_SKIP() << "run by FreshProcessesDrawDifferentFirstTokens";
  }
  absl::StatusOr<std::string> token = NewToken();
  ASSERT_TRUE(token.ok()) << token.status();
  std::printf("%s%s\n", kFirstTokenPrefix, token->c_str());
  std::fflush(stdout);
}

}  // namespace
TEST(NewTokenTest, SpellTokenSpellsEveryByteAsBytesToHexStringDoesAndPackTokenUndoesIt) {
  // Every byte value at every position, then random tokens.
  for (int start = 0; start < 256; start += 16) {
    uint8_t bytes[16];
    for (int j = 0; j < 16; ++j) bytes[j] = static_cast<uint8_t>(start + j);
    for (int shift = 0; shift < 16; ++shift) {
      uint8_t rotated[16];
      for (int j = 0; j < 16; ++j) rotated[j] = bytes[(j + shift) % 16];
      char out[32];
      SpellToken(rotated, out);
      const std::string want = absl::BytesToHexString(
          absl::string_view(reinterpret_cast<const char*>(rotated), 16));
      EXPECT_EQ(absl::string_view(out, 32), want);
      uint8_t back[16];
      ASSERT_TRUE(PackToken(want, back));
      EXPECT_EQ(std::memcmp(back, rotated, 16), 0);
    }
  }
  for (int i = 0; i < 200; ++i) {
    absl::StatusOr<std::string> token = NewToken();
    ASSERT_TRUE(token.ok());
    uint8_t bytes[16];
    ASSERT_TRUE(PackToken(*token, bytes));
    char out[32];
    SpellToken(bytes, out);
    EXPECT_EQ(absl::string_view(out, 32), *token);
  }
}

}  // namespace redlock::internal
