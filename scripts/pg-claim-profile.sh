#!/usr/bin/env bash
# The PostgreSQL fresh claim's server-side profile, without JDBC: pgbench runs the store's claim statement, the raw
# INSERT ... ON CONFLICT DO NOTHING and Spring Integration's putIfAbsent insert (benchmarks/pgbench/*.sql, values
# inlined) at 1, 4 and 16 clients and prints each one's rate, latency and WAL bytes per statement. The tables are the
# ones PeerBenchmark creates: run it once first (see docs/benchmarks.md). Needs the harness's PostgreSQL (port 15432).
#   SECONDS_EACH=8 NO_FLUSH=1 scripts/pg-claim-profile.sh   NO_FLUSH=1: synchronous_commit=off, the flush left out
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
connection=(-h 127.0.0.1 -p "${PGPORT:-15432}" -U postgres)
psql=("$bin/psql" "${connection[@]}" -d dedup -Atq)
if [[ "${NO_FLUSH:-0}" == 1 ]]; then
  export PGOPTIONS="-c synchronous_commit=off"
fi
for clients in 1 4 16; do
  for statement in claim raw spring-integration; do
    before="$("${psql[@]}" -c "SELECT pg_current_wal_insert_lsn()")"
    out="$("$bin/pgbench" "${connection[@]}" -n -c "$clients" -j "$clients" -T "${SECONDS_EACH:-8}" -M prepared \
      -f "benchmarks/pgbench/$statement.sql" dedup 2>&1)"
    after="$("${psql[@]}" -c "SELECT pg_current_wal_insert_lsn()")"
    done_count="$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")"
    wal="$("${psql[@]}" -c "SELECT round(pg_wal_lsn_diff('$after', '$before') / greatest($done_count, 1))")"
    echo "clients=$clients $statement: $(grep -E '^tps' <<<"$out" | cut -d' ' -f3) statements/s," \
      "latency $(sed -n 's/^latency average = //p' <<<"$out"), $wal WAL bytes per statement"
  done
done
"${psql[@]}" -c "DELETE FROM dedup_bench_claims_0 WHERE namespace = 'pgb-store';
  DELETE FROM dedup_bench_raw_0 WHERE namespace = 'pgb-raw';
  DELETE FROM dedup_bench_si_metadata_store WHERE region = 'pgb-si'"
