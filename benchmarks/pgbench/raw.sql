-- The raw baseline's INSERT ... ON CONFLICT DO NOTHING, as PostgresBaseline sends it.
\set k random(1, 1000000000000)
INSERT INTO dedup_bench_raw_0 (namespace, key, owner, state, expires_at, created_at) VALUES ('pgb-raw', 'k' || :k, md5(:k::text), 'IN_PROGRESS', statement_timestamp() + interval '300 seconds', statement_timestamp()) ON CONFLICT DO NOTHING;
