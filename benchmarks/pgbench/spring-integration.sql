-- Spring Integration's JdbcMetadataStore.putIfAbsent insert on PostgreSQL (7.0), as PeerBenchmark runs it.
\set k random(1, 1000000000000)
INSERT INTO dedup_bench_si_metadata_store(METADATA_KEY, METADATA_VALUE, REGION) SELECT 'k' || :k, 'seen', 'pgb-si' FROM dedup_bench_si_metadata_store WHERE METADATA_KEY='k' || :k AND REGION='pgb-si' HAVING COUNT(*)=0 ON CONFLICT DO NOTHING;
