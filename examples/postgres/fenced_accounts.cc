// Copyright 2026 The redlock Authors.

#include "examples/postgres/fenced_accounts.h"

#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace redlock::example {
namespace {

// Runs `sql` with `params` (as text) and returns how many rows it wrote.
absl::StatusOr<int> RowsWritten(PGconn* db, const char* sql,
                                const std::vector<std::string>& params) {
  std::vector<const char*> values;
  for (const std::string& p : params) values.push_back(p.c_str());
  std::unique_ptr<PGresult, decltype(&PQclear)> result(
      PQexecParams(db, sql, static_cast<int>(values.size()), nullptr,
                   values.data(), nullptr, nullptr, 0),
      &PQclear);
  if (PQresultStatus(result.get()) != PGRES_COMMAND_OK) {
    return absl::UnavailableError(PQerrorMessage(db));
  }
  return std::atoi(PQcmdTuples(result.get()));
}

absl::StatusOr<std::string> TokenParam(uint64_t fence) {
  if (fence > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return absl::OutOfRangeError(
        absl::StrCat("token ", fence, " does not fit a bigint"));
  }
  return absl::StrCat(fence);
}

absl::StatusOr<bool> FencedWrite(PGconn* db, const char* sql,
                                 absl::string_view id, int64_t balance,
                                 uint64_t fence) {
  absl::StatusOr<std::string> token = TokenParam(fence);
  if (!token.ok()) return token.status();
  absl::StatusOr<int> rows =
      RowsWritten(db, sql, {*token, std::string(id), absl::StrCat(balance)});
  if (!rows.ok()) return rows.status();
  return *rows == 1;
}

}  // namespace

absl::StatusOr<bool> FencedUpdate(PGconn* db, absl::string_view id,
                                  int64_t balance, uint64_t fence) {
  return FencedWrite(db, kFencedUpdate, id, balance, fence);
}

absl::StatusOr<bool> FencedUpsert(PGconn* db, absl::string_view id,
                                  int64_t balance, uint64_t fence) {
  return FencedWrite(db, kFencedUpsert, id, balance, fence);
}

absl::StatusOr<bool> UncheckedUpdate(PGconn* db, absl::string_view id,
                                     int64_t balance) {
  absl::StatusOr<int> rows = RowsWritten(
      db, kUncheckedUpdate, {std::string(id), absl::StrCat(balance)});
  if (!rows.ok()) return rows.status();
  return *rows == 1;
}

}  // namespace redlock::example
