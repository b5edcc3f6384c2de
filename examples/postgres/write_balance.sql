-- The checked write for psql, with the token from `redlock run --fencing`
-- (REDLOCK_FENCE) or `redlock elect` (REDLOCK_EPOCH):
--
--   psql -X -v ON_ERROR_STOP=1 -v fence="$REDLOCK_FENCE" \
--        -v account=alice -v balance=150 -f write_balance.sql
--
-- Exits 0 if the row was written. If a newer token wrote it first, no row
-- matches, \gset finds no row and psql exits 3 ("no rows returned for
-- \gset"): the holder is stale and must stop.
UPDATE accounts SET balance = :balance, fence = :fence
 WHERE id = :'account' AND fence <= :fence
RETURNING fence AS written \gset
