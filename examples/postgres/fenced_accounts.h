// Copyright 2026 The redlock Authors.
//
// Fencing where the data lives: a PostgreSQL table that keeps, next to each
// row, the highest fencing token that wrote it, and writes that check it
// (docs/lifetime-and-fencing.md, "PostgreSQL"). With libpq:
//
//   PGconn* db = PQconnectdb("host=127.0.0.1 dbname=bank");
//   absl::StatusOr<redlock::Lock> lock = client->Acquire("account:alice",
//                                                        fenced_options);
//   absl::StatusOr<bool> written =
//       FencedUpdate(db, "alice", new_balance, lock->fence());
//   if (written.ok() && !*written) { /* a newer holder wrote: stop */ }
//
// Each write is one statement: PostgreSQL takes the row's lock, re-reads
// the row's current fence (READ COMMITTED re-checks the WHERE clause on
// the newest version) and writes only if the token is not older. Two
// holders' writes therefore serialize on the row, whatever their timing.
//
// Tokens are uint64; the column is a bigint, so a token above INT64_MAX is
// refused (kOutOfRange) rather than wrapped.

#ifndef REDLOCK_EXAMPLES_POSTGRES_FENCED_ACCOUNTS_H_
#define REDLOCK_EXAMPLES_POSTGRES_FENCED_ACCOUNTS_H_

#include <libpq-fe.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace redlock::example {

// The table: each account, and the highest token that wrote it (0: none
// yet).
inline constexpr char kCreateAccounts[] =
    "CREATE TABLE accounts ("
    "  id      text   PRIMARY KEY,"
    "  balance bigint NOT NULL,"
    "  fence   bigint NOT NULL DEFAULT 0)";

// The checked write. `<=`, not `<`: a holder writes as often as it likes
// under its one token (the library never issues one token twice), and a
// strictly older token is refused.
inline constexpr char kFencedUpdate[] =
    "UPDATE accounts SET balance = $3, fence = $1"
    " WHERE id = $2 AND fence <= $1";

// The same write for a row that may not exist yet: inserted with the token,
// or updated only where the stored token is not newer.
inline constexpr char kFencedUpsert[] =
    "INSERT INTO accounts AS a (id, balance, fence) VALUES ($2, $3, $1)"
    " ON CONFLICT (id) DO UPDATE SET balance = excluded.balance,"
    " fence = excluded.fence WHERE a.fence <= excluded.fence";

// What not to do: the write without the check.
inline constexpr char kUncheckedUpdate[] =
    "UPDATE accounts SET balance = $2 WHERE id = $1";

// Runs kFencedUpdate. true: written (and `fence` recorded); false: the row
// carries a newer token (or there is no such row) and nothing changed.
// kOutOfRange for a token above INT64_MAX; kUnavailable with libpq's message
// if the statement failed.
absl::StatusOr<bool> FencedUpdate(PGconn* db, absl::string_view id,
                                  int64_t balance, uint64_t fence);

// Runs kFencedUpsert: true if the row was inserted or updated, false if it
// carries a newer token. Errors as FencedUpdate().
absl::StatusOr<bool> FencedUpsert(PGconn* db, absl::string_view id,
                                  int64_t balance, uint64_t fence);

// Runs kUncheckedUpdate: true if the row exists (it is then overwritten,
// whoever wrote it last).
absl::StatusOr<bool> UncheckedUpdate(PGconn* db, absl::string_view id,
                                     int64_t balance);

}  // namespace redlock::example

#endif  // REDLOCK_EXAMPLES_POSTGRES_FENCED_ACCOUNTS_H_
