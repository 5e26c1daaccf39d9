#!/usr/bin/env bash
# Benchmarks every store against a raw-driver baseline on the same local server (JMH), and writes
#   benchmarks/results/<yyyyMMdd-HHmmss>[-quick]/results.json   JMH's results
#                                                /results.md     store, operation, threads, ops/s, baseline, ratio
#                                                /results.svg    the chart
#
# Usage: scripts/bench.sh           the full profile: 1 fork, warm-up 1 x 2 s, measurement 3 x 2 s, 1/4/16 threads
#                                   (about 35-40 minutes on 2 cores; run it on an otherwise idle machine)
#        scripts/bench.sh --quick   a smoke test: every benchmark once, one 200 ms iteration, 1 thread (~1-2 min)
#        Further options go to the runner, e.g. scripts/bench.sh --stores postgres,redis --threads 4
#
# Starts whatever test server is not running (scripts/test-servers.sh up) and leaves them all running afterwards:
# other developers' tests may be using them. 'scripts/test-servers.sh down' stops them.
set -euo pipefail
cd "$(dirname "$0")/.."

suffix=""
args=()
for arg in "$@"; do
  if [[ $arg == --quick ]]; then
    suffix="-quick"
  fi
  args+=("$arg")
done

started=$SECONDS
echo "[bench] starting the test servers (scripts/test-servers.sh up)" >&2
# Captured first: a failing 'up' inside eval "$(...)" would not stop the script.
server_env="$(bash scripts/test-servers.sh up)"
eval "$server_env"

echo "[bench] building benchmarks/target/dedup-benchmarks.jar" >&2
mvn -B -q -pl benchmarks -am package -DskipTests

out="benchmarks/results/$(date +%Y%m%d-%H%M%S)$suffix"
mkdir -p "$out"
status=0
java -jar benchmarks/target/dedup-benchmarks.jar --out "$out" "${args[@]}" || status=$?

echo "[bench] took $((SECONDS - started)) s in all; results in $out (results.md, results.svg, results.json)" >&2
exit "$status"
