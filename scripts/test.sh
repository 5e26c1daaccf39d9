#!/usr/bin/env bash
# The whole test suite, as CI runs it: starts the real servers the store tests need (installing what is missing),
# runs every module's tests against them, and stops what it started.
#   DEDUP_KEEP_SERVERS=1 scripts/test.sh   leaves the servers running for the next run.
#   Extra arguments go to Maven, e.g. scripts/test.sh -pl dedup-tck (and skip the consumer project and the
#   benchmark smoke run)
set -euo pipefail
cd "$(dirname "$0")/.."

# Captured first: a failing 'up' inside eval "$(...)" would not stop the script.
server_env="$(bash scripts/test-servers.sh up)"
eval "$server_env"
if [[ "${DEDUP_KEEP_SERVERS:-0}" != 1 ]]; then
  trap 'bash scripts/test-servers.sh down' EXIT
fi

# The servers were just started: a store test that cannot find one is a failure here, never a skip.
export DEDUP_REQUIRE_SERVERS=true
# install, not just verify: the consumer project below takes dedup from the local repository, as a user would.
# -Prelease: the release bundle as it would be published, checked (docs/development.md, "Releasing"); its javadoc
# jars are the javadoc check too: every doclint check, any warning fails (the root pom sets doclint=all and
# failOnWarnings; benchmarks and examples skip it). About 20 s more than without it.
mvn -B -Prelease install "$@"

if [[ $# -eq 0 ]]; then
  # A user's project set up only as the README says (dedup-bom + all four stores) claims on every server.
  mvn -B -f examples/consumer-project/pom.xml verify
  # The Spring Boot example application: a retried POST /payments is replayed, over real HTTP, on PostgreSQL.
  mvn -B -f examples/spring-boot-app/pom.xml verify
  # The same application on Spring Boot 3.5, with dedup-spring-boot3-starter.
  mvn -B -f examples/spring-boot3-app/pom.xml verify
  # The benchmarks' smoke run: every JMH benchmark once, briefly, so they keep working (full runs are by hand).
  bash scripts/bench.sh --quick
fi
