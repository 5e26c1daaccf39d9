#!/usr/bin/env bash
# Starts, stops and describes the real servers the integration tests run against:
#   - PostgreSQL 15 with pg_cron (a private cluster, not the machine's own on 5432)
#   - MariaDB 10.11 with the event scheduler on (a private server, not the machine's own on 3306)
#   - Redis standalone (not the machine's own on 6379)
#   - Redis Cluster, 3 masters + 3 replicas
#   - dynalite, the open-source DynamoDB emulator (npm)
#   - Kafka 4.1.1, one KRaft broker+controller, from the Maven Central jars (fetched with Maven)
#   - RabbitMQ: a broker already answering on its port is used as it is (and never
#     stopped); otherwise rabbitmq-server (Debian) is installed as root and started
# Everything binds to 127.0.0.1 on fixed ports below the ephemeral port range and
# lives in one state directory, so nothing else on the machine is touched.
#
# Usage: scripts/test-servers.sh up|down|env|status
#        scripts/test-servers.sh pause|resume postgres|mariadb|redis|redis-cluster:<port>|dynalite|kafka
#        scripts/test-servers.sh up kafka     start (installing if needed) only the Kafka broker
#   up      start whatever is not running yet (installs missing packages as root),
#           then print the export lines; use as: eval "$(scripts/test-servers.sh up)"
#   down    stop exactly the processes 'up' started and delete their data
#   env     print the export lines the tests read
#   status  one line per server
#   pause   stop one server but keep its data (reliability tests: a simulated outage)
#   resume  start a paused server again
#
# Environment (all optional):
#   DEDUP_SERVERS_DIR               state directory (default: /tmp/dedup-test-servers, one per
#                                   machine, so every checkout finds and reuses the same servers
#                                   instead of colliding on their fixed ports)
#   DEDUP_PG_PORT                   default 15432
#   DEDUP_MARIADB_PORT              default 13306
#   DEDUP_REDIS_PORT                default 16379
#   DEDUP_REDIS_CLUSTER_BASE_PORT   first of 6 consecutive ports, default 17001
#   DEDUP_REDIS_CLUSTER_TIMEOUT     seconds to wait for a healthy cluster, default 60
#   DEDUP_KAFKA_PORT                Kafka's client port, default 19092; its controller uses the next one
#   DEDUP_MVN                       the Maven command that fetches Kafka's jars, default mvn
#   DEDUP_RABBITMQ_PORT             default 5672 (AMQP's own port, where a machine's broker listens)
#   DEDUP_RABBITMQ_NODE             node name of a broker this script starts, default rabbit@localhost
# A changed port takes effect after 'down' (PostgreSQL keeps its port in its config).
#
# Progress messages go to stderr; only the export lines go to stdout.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# Absolute and canonical: the servers change directory, and the PID checks
# compare this path with the command line pg_ctl gives the postmaster.
STATE_DIR="$(realpath -m "${DEDUP_SERVERS_DIR:-/tmp/dedup-test-servers}")"

PG_PORT="${DEDUP_PG_PORT:-15432}"
PG_DB=dedup
MARIADB_PORT="${DEDUP_MARIADB_PORT:-13306}"
MARIADB_DB=dedup
REDIS_PORT="${DEDUP_REDIS_PORT:-16379}"
CLUSTER_BASE_PORT="${DEDUP_REDIS_CLUSTER_BASE_PORT:-17001}"
CLUSTER_NODES=6                 # with --cluster-replicas 1: 3 masters + 3 replicas
CLUSTER_TIMEOUT="${DEDUP_REDIS_CLUSTER_TIMEOUT:-60}"
DYNALITE_PORT="${DEDUP_DYNALITE_PORT:-18000}"
DYNALITE_VERSION=4.0.0
KAFKA_PORT="${DEDUP_KAFKA_PORT:-19092}"
KAFKA_CONTROLLER_PORT=$((KAFKA_PORT + 1))
KAFKA_VERSION=4.1.1
RABBIT_PORT="${DEDUP_RABBITMQ_PORT:-5672}"
RABBIT_NODE="${DEDUP_RABBITMQ_NODE:-rabbit@localhost}"
# npm packages survive 'down' (which deletes server data), so a second 'up' installs nothing.
CACHE_DIR="$(realpath -m "${DEDUP_SERVERS_CACHE:-/tmp/dedup-test-servers-cache}")"

PGBIN=/usr/lib/postgresql/15/bin
PG_CRON_CONTROL=/usr/share/postgresql/15/extension/pg_cron.control
PG_CRON_LIBRARY=/usr/lib/postgresql/15/lib/pg_cron.so

# One subdirectory per server; 'down' deletes exactly these.
PG_DIR="$STATE_DIR/postgres"
MARIADB_DIR="$STATE_DIR/mariadb"
REDIS_DIR="$STATE_DIR/redis"
CLUSTER_DIR="$STATE_DIR/redis-cluster"
DYNALITE_DIR="$STATE_DIR/dynalite"
DYNALITE_BIN="$CACHE_DIR/npm/node_modules/dynalite/cli.js"
KAFKA_DIR="$STATE_DIR/kafka"
KAFKA_LIB="$CACHE_DIR/kafka-$KAFKA_VERSION/lib"
RABBIT_DIR="$STATE_DIR/rabbitmq"

CLUSTER_PORTS=()
for ((i = 0; i < CLUSTER_NODES; i++)); do
  CLUSTER_PORTS+=($((CLUSTER_BASE_PORT + i)))
done

# ---------------------------------------------------------------------------
# Messages

log()  { printf '[test-servers] %s\n' "$*" >&2; }
warn() { printf '[test-servers] WARNING: %s\n' "$*" >&2; }
die()  { printf '[test-servers] ERROR: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------------------
# Processes

# Prints the PID stored in a record file, or nothing if there is none.
read_pid() {
  local file=$1 pid=""
  if [[ -f $file ]]; then
    read -r pid < "$file" || true
  fi
  if [[ $pid =~ ^[0-9]+$ ]]; then
    echo "$pid"
  fi
  return 0
}

# Alive means: exists and is not a zombie. The servers are re-parented to PID 1,
# which reaps them late, so a stopped server can linger as a zombie for seconds.
# Reads /proc directly: these checks run often and forking ps costs ~70 ms here.
pid_alive() {
  local stat state
  read -r stat 2>/dev/null < "/proc/$1/stat" || return 1
  # Format: "PID (COMMAND) STATE ...", and COMMAND may contain spaces.
  stat=${stat##*) }
  state=${stat%% *}
  [[ $state != Z ]]
}

# True if the PID is alive and its command line contains every given string.
# This keeps a recycled PID that now belongs to another program from being
# mistaken for one of ours.
pid_is() {
  local pid=$1 args=() cmdline needle
  shift
  pid_alive "$pid" || return 1
  # The arguments are NUL-separated; join them with spaces and end with one.
  mapfile -d '' args 2>/dev/null < "/proc/$pid/cmdline" || return 1
  cmdline="${args[*]} "
  for needle in "$@"; do
    [[ $cmdline == *"$needle"* ]] || return 1
  done
}

# TERM, wait up to 10 s, then KILL. Only called with a PID that pid_is confirmed.
stop_pid() {
  local pid=$1 name=$2 i
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    pid_alive "$pid" || return 0
    sleep 0.1
  done
  warn "$name (pid $pid) ignored TERM for 10 s; sending KILL"
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    pid_alive "$pid" || return 0
    sleep 0.1
  done
  die "$name (pid $pid) is still running after KILL"
}

# Runs a command that starts a long-lived server, without the lock descriptor.
spawn() {
  "$@" 9>&-
}

# Runs a command every 0.1 s until it succeeds; fails after TIMEOUT seconds.
wait_until() {
  local timeout=$1 deadline
  shift
  deadline=$((SECONDS + timeout))
  until "$@"; do
    if ((SECONDS >= deadline)); then
      return 1
    fi
    sleep 0.1
  done
}

# ---------------------------------------------------------------------------
# Ports

port_in_use() {
  [[ -n $(ss -Hltn "sport = :$1" 2>/dev/null) ]]
}

# Called only when none of our own servers holds the port, so any listener
# belongs to someone else and we must not start (or kill) anything there.
require_port_free() {
  local port=$1 what=$2
  if port_in_use "$port"; then
    die "port $port (for $what) is already taken by a process this script did not start: $(ss -Hltnp "sport = :$port" | head -n 1)"
  fi
}

check_port_numbers() {
  local port
  for port in "$PG_PORT" "$MARIADB_PORT" "$REDIS_PORT" "${CLUSTER_PORTS[@]}" "$DYNALITE_PORT" "$RABBIT_PORT" \
      "$KAFKA_PORT" "$KAFKA_CONTROLLER_PORT"; do
    if ! [[ $port =~ ^[0-9]+$ ]] || ((port < 1 || port > 65535)); then
      die "invalid port '$port'"
    fi
  done
  # The cluster bus listens on port + 10000, which redis-server refuses above 65535.
  if ((CLUSTER_BASE_PORT + CLUSTER_NODES - 1 + 10000 > 65535)); then
    die "redis cluster ports $CLUSTER_BASE_PORT.. are too high: the cluster bus uses port + 10000"
  fi
}

# A fixed port inside the ephemeral range can be grabbed by the local end of any
# outgoing connection; that made a server die with EADDRINUSE before.
warn_if_ephemeral() {
  local lo hi port
  [[ -r /proc/sys/net/ipv4/ip_local_port_range ]] || return 0
  read -r lo hi < /proc/sys/net/ipv4/ip_local_port_range
  for port in "$@"; do
    if ((port >= lo && port <= hi)); then
      warn "port $port lies inside the ephemeral port range $lo-$hi; an outgoing connection may take it"
    fi
  done
}

# ---------------------------------------------------------------------------
# Packages

ensure_installed() {
  local missing=()
  [[ -x $PGBIN/initdb ]] || missing+=(postgresql-15)
  [[ -f $PG_CRON_CONTROL && -f $PG_CRON_LIBRARY ]] || missing+=(postgresql-15-cron)
  command -v mariadbd >/dev/null || [[ -x /usr/sbin/mariadbd ]] || missing+=(mariadb-server)
  command -v mariadb-admin >/dev/null || missing+=(mariadb-client)
  command -v redis-server >/dev/null || missing+=(redis-server)
  command -v redis-cli >/dev/null || missing+=(redis-tools)
  command -v ss >/dev/null || missing+=(iproute2)
  command -v node >/dev/null || missing+=(nodejs)
  command -v npm >/dev/null || missing+=(npm)
  command -v curl >/dev/null || missing+=(curl)
  if ((${#missing[@]} == 0)); then
    return 0
  fi
  if ((EUID != 0)); then
    die "missing packages: ${missing[*]}. Install them as root: apt-get install ${missing[*]}"
  fi
  # The machine's policy-rc.d keeps the packaged services (5432, 6379) from starting.
  log "installing missing packages: ${missing[*]}"
  apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2
  if [[ ! -x $PGBIN/initdb || ! -f $PG_CRON_CONTROL || ! -f $PG_CRON_LIBRARY ]]; then
    die "PostgreSQL 15 or pg_cron still missing after installing ${missing[*]}"
  fi
  if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
    die "redis-server or redis-cli still missing after installing ${missing[*]}"
  fi
}

# ---------------------------------------------------------------------------
# PostgreSQL 15 + pg_cron

# initdb and postgres refuse to run as root, so as root they run as 'postgres'.
pg_run() {
  if ((EUID == 0)); then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

pg_psql() {
  "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres "$@"
}

postgres_answers() {
  "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres
}

# PID of our postmaster, if it is alive; nothing otherwise.
postgres_pid() {
  local pid
  pid=$(read_pid "$PG_DIR/postgres.pid")
  if [[ -n $pid ]] && pid_is "$pid" postgres "-D $PG_DIR/data "; then
    echo "$pid"
  fi
  return 0
}

prepare_postgres_dir() {
  # The server's unix socket lives here; its path must fit in sun_path (107 bytes).
  local socket="$PG_DIR/.s.PGSQL.$PG_PORT.lock"
  if ((${#socket} > 107)); then
    die "state directory path too long for a unix socket ($socket); set DEDUP_SERVERS_DIR to a shorter path"
  fi
  mkdir -p "$PG_DIR"
  if ((EUID == 0)); then
    chown postgres:postgres "$PG_DIR"
    runuser -u postgres -- test -w "$PG_DIR" \
      || die "user postgres cannot write $PG_DIR (is a parent directory closed to it?); set DEDUP_SERVERS_DIR elsewhere"
  fi
}

init_postgres() {
  local data="$PG_DIR/data"
  log "initdb $data"
  if ! pg_run "$PGBIN/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
      > "$PG_DIR/initdb.log" 2>&1; then
    cat "$PG_DIR/initdb.log" >&2
    die "initdb failed"
  fi
  # pg_cron must be preloaded and bound to one database; both need a restart to
  # change, so they are set here, before the first start.
  cat >> "$data/postgresql.conf" <<EOF

# Added by scripts/test-servers.sh
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$PG_DIR'
max_connections = 200
shared_preload_libraries = 'pg_cron'
cron.database_name = '$PG_DB'
EOF
}

# Creates the test database and pg_cron in it; cheap, so it runs on every 'up'.
ensure_postgres_db() {
  local exists
  exists=$(pg_psql -d postgres -Atc "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'")
  if [[ -z $exists ]]; then
    log "creating database $PG_DB"
    pg_psql -d postgres -c "CREATE DATABASE $PG_DB"
  fi
  pg_psql -d "$PG_DB" -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS pg_cron"
}

start_postgres() {
  local pid data="$PG_DIR/data"
  pid=$(postgres_pid)
  if [[ -n $pid ]]; then
    wait_until 10 postgres_answers \
      || die "postgres (pid $pid) runs but does not answer on port $PG_PORT; see $PG_DIR/server.log or run '$0 down'"
    log "postgres already running (pid $pid, port $PG_PORT)"
    ensure_postgres_db
    return 0
  fi
  require_port_free "$PG_PORT" postgres
  prepare_postgres_dir
  if [[ ! -f $data/PG_VERSION ]]; then
    init_postgres
  fi
  log "starting postgres on 127.0.0.1:$PG_PORT"
  if ! spawn pg_run "$PGBIN/pg_ctl" -D "$data" -l "$PG_DIR/server.log" -w -t 60 start >&2; then
    tail -n 20 "$PG_DIR/server.log" >&2 || true
    die "postgres did not start; see $PG_DIR/server.log"
  fi
  # The first line of postmaster.pid is the postmaster's PID; keep our own record.
  head -n 1 "$data/postmaster.pid" > "$PG_DIR/postgres.pid"
  ensure_postgres_db
}

# Stops the server but keeps its data: 'pause postgres' uses it to simulate an outage.
halt_postgres() {
  local pid
  pid=$(postgres_pid)
  if [[ -n $pid ]]; then
    log "stopping postgres (pid $pid)"
    # Fast mode rolls back open sessions and shuts down cleanly.
    if ! pg_run "$PGBIN/pg_ctl" -D "$PG_DIR/data" -m fast -w -t 30 stop >&2; then
      warn "pg_ctl stop failed; signalling pid $pid directly"
    fi
    # pg_ctl returns once postmaster.pid is gone; make sure the process is too.
    if pid_is "$pid" postgres "-D $PG_DIR/data "; then
      stop_pid "$pid" postgres
    fi
  fi
}

stop_postgres() {
  halt_postgres
  rm -rf "$PG_DIR"
}

# ---------------------------------------------------------------------------
# MariaDB 10.11, event scheduler on (the MySQL/MariaDB store's TTL cleanup runs as an EVENT)

MARIADBD=/usr/sbin/mariadbd

mariadb_answers() {
  mariadb-admin --no-defaults --protocol=tcp -h 127.0.0.1 -P "$MARIADB_PORT" -u root --connect-timeout=2 \
    ping >/dev/null 2>&1
}

# PID of our mariadbd, if it is alive; nothing otherwise.
mariadb_pid() {
  local pid
  pid=$(read_pid "$MARIADB_DIR/mariadb.pid")
  if [[ -n $pid ]] && pid_is "$pid" mariadbd "--datadir=$MARIADB_DIR/data "; then
    echo "$pid"
  fi
  return 0
}

init_mariadb() {
  log "initialising a MariaDB data directory in $MARIADB_DIR/data"
  # root over TCP with no password, as the tests connect; the server binds to 127.0.0.1 only.
  if ! mariadb-install-db --no-defaults --user=root --datadir="$MARIADB_DIR/data" \
      --auth-root-authentication-method=normal --skip-test-db > "$MARIADB_DIR/install.log" 2>&1; then
    tail -n 20 "$MARIADB_DIR/install.log" >&2 || true
    rm -rf "$MARIADB_DIR/data"
    die "mariadb-install-db failed; see $MARIADB_DIR/install.log"
  fi
}

start_mariadb() {
  local pid
  pid=$(mariadb_pid)
  if [[ -n $pid ]]; then
    wait_until 10 mariadb_answers \
      || die "mariadb (pid $pid) runs but does not answer on port $MARIADB_PORT; see $MARIADB_DIR/server.log or run '$0 down'"
    log "mariadb already running (pid $pid, port $MARIADB_PORT)"
    return 0
  fi
  require_port_free "$MARIADB_PORT" mariadb
  mkdir -p "$MARIADB_DIR"
  if [[ ! -d $MARIADB_DIR/data/mysql ]]; then
    init_mariadb
  fi
  rm -f "$MARIADB_DIR/mariadb.pid"
  log "starting mariadb on 127.0.0.1:$MARIADB_PORT"
  # Tests only: no binary log, a small buffer pool; the commit still flushes the redo log (durability as shipped).
  # Backgrounded directly, not through spawn (whose subshell would linger holding the lock).
  nohup "$MARIADBD" --no-defaults --user=root --datadir="$MARIADB_DIR/data" --socket="$MARIADB_DIR/sock" \
    --port="$MARIADB_PORT" --bind-address=127.0.0.1 --pid-file="$MARIADB_DIR/mariadb.pid" --skip-name-resolve \
    --event-scheduler=ON --innodb-buffer-pool-size=128M --max-connections=300 \
    --log-error="$MARIADB_DIR/server.log" > /dev/null 2>&1 9>&- &
  if ! wait_until 30 mariadb_answers; then
    tail -n 20 "$MARIADB_DIR/server.log" >&2 || true
    die "mariadb did not answer on port $MARIADB_PORT within 30 s; see $MARIADB_DIR/server.log"
  fi
  wait_until 5 test -s "$MARIADB_DIR/mariadb.pid" || die "mariadb wrote no pid file ($MARIADB_DIR/mariadb.pid)"
  mariadb --no-defaults --protocol=tcp -h 127.0.0.1 -P "$MARIADB_PORT" -u root \
    -e "CREATE DATABASE IF NOT EXISTS $MARIADB_DB" || die "could not create database $MARIADB_DB on mariadb"
}

# Stops the server but keeps its data: 'pause mariadb' uses it to simulate an outage.
halt_mariadb() {
  local pid
  pid=$(mariadb_pid)
  if [[ -n $pid ]]; then
    log "stopping mariadb (pid $pid)"
    stop_pid "$pid" mariadb
  fi
}

stop_mariadb() {
  halt_mariadb
  rm -rf "$MARIADB_DIR"
}

# ---------------------------------------------------------------------------
# Redis (shared by the standalone server and the cluster nodes)

redis_answers() {
  [[ $(redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null) == PONG ]]
}

# PID from DIR/redis.pid (written by redis-server itself), if alive and ours.
# A daemonized redis-server shows itself as "redis-server 127.0.0.1:PORT".
redis_pid() {
  local dir=$1 port=$2 pid
  pid=$(read_pid "$dir/redis.pid")
  if [[ -n $pid ]] && pid_is "$pid" redis-server "127.0.0.1:$port "; then
    echo "$pid"
  fi
  return 0
}

# Starts one redis-server in DIR on PORT unless ours already runs there.
# Extra arguments go to redis-server (the cluster nodes use that).
start_redis_process() {
  local dir=$1 port=$2 name=$3 pid
  shift 3
  pid=$(redis_pid "$dir" "$port")
  if [[ -n $pid ]]; then
    wait_until 10 redis_answers "$port" \
      || die "$name (pid $pid) runs but does not answer on port $port; see $dir/redis.log or run '$0 down'"
    log "$name already running (pid $pid, port $port)"
    return 0
  fi
  require_port_free "$port" "$name"
  mkdir -p "$dir"
  rm -f "$dir/redis.pid"
  log "starting $name on 127.0.0.1:$port"
  spawn redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no --daemonize yes \
    --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --dir "$dir" "$@"
  if ! wait_until 10 redis_answers "$port"; then
    tail -n 20 "$dir/redis.log" >&2 || true
    die "$name on port $port did not answer within 10 s; see $dir/redis.log"
  fi
  wait_until 5 test -s "$dir/redis.pid" || die "$name on port $port wrote no pidfile ($dir/redis.pid)"
}

stop_redis_process() {
  local dir=$1 port=$2 name=$3 pid
  pid=$(redis_pid "$dir" "$port")
  if [[ -n $pid ]]; then
    log "stopping $name (pid $pid, port $port)"
    stop_pid "$pid" "$name"
  fi
}

# ---------------------------------------------------------------------------
# Redis standalone

start_redis() {
  start_redis_process "$REDIS_DIR" "$REDIS_PORT" redis
}

stop_redis() {
  stop_redis_process "$REDIS_DIR" "$REDIS_PORT" redis
  rm -rf "$REDIS_DIR"
}

# ---------------------------------------------------------------------------
# Redis Cluster

# CLUSTER INFO and INFO replication of every node, one redis-cli call per node
# (process start-up is the slow part here). NODE_INFO[i] belongs to CLUSTER_PORTS[i].
NODE_INFO=()
read_cluster_info() {
  local port
  NODE_INFO=()
  for port in "${CLUSTER_PORTS[@]}"; do
    # A node that does not answer gets an empty entry instead of ending the script.
    NODE_INFO+=("$(printf 'CLUSTER INFO\nINFO replication\n' | redis-cli -h 127.0.0.1 -p "$port" 2>/dev/null || true)")
  done
}

# Prints the value of a "name:value" line (redis ends lines with CRLF).
info_field() {
  local text=$1 name=$2 line
  while IFS= read -r line; do
    line=${line%$'\r'}
    if [[ $line == "$name:"* ]]; then
      echo "${line#*:}"
      return 0
    fi
  done <<< "$text"
}

# Healthy: every node sees cluster_state:ok, and every replica has linked to its
# master. Right after creation the replicas still show as slot-less masters for a
# few seconds, so count the linked replicas instead of trusting the roles.
cluster_healthy() {
  local info linked=0
  for info in "${NODE_INFO[@]}"; do
    [[ $(info_field "$info" cluster_state) == ok ]] || return 1
    if [[ $(info_field "$info" role) == slave ]]; then
      [[ $(info_field "$info" master_link_status) == up ]] || return 1
      linked=$((linked + 1))
    fi
  done
  ((linked == CLUSTER_NODES / 2))
}

cluster_ready() {
  read_cluster_info
  cluster_healthy
}

# Fresh nodes know only themselves and serve no slots.
cluster_is_fresh() {
  local info
  for info in "${NODE_INFO[@]}"; do
    [[ $(info_field "$info" cluster_known_nodes) == 1 ]] || return 1
    [[ $(info_field "$info" cluster_slots_assigned) == 0 ]] || return 1
  done
}

cluster_is_created() {
  local info
  for info in "${NODE_INFO[@]}"; do
    [[ $(info_field "$info" cluster_known_nodes) == "$CLUSTER_NODES" ]] || return 1
    [[ $(info_field "$info" cluster_slots_assigned) == 16384 ]] || return 1
  done
}

create_cluster() {
  local addresses=() port
  for port in "${CLUSTER_PORTS[@]}"; do
    addresses+=("127.0.0.1:$port")
  done
  log "creating the redis cluster (3 masters + 3 replicas)"
  redis-cli --cluster create "${addresses[@]}" --cluster-replicas 1 --cluster-yes >&2 \
    || die "redis-cli --cluster create failed"
}

print_cluster_state() {
  local i info
  read_cluster_info
  for i in "${!CLUSTER_PORTS[@]}"; do
    info=${NODE_INFO[i]}
    printf '[test-servers]   node %s: cluster_state=%s role=%s master_link_status=%s\n' "${CLUSTER_PORTS[i]}" \
      "$(info_field "$info" cluster_state)" "$(info_field "$info" role)" \
      "$(info_field "$info" master_link_status)" >&2
  done
}

start_redis_cluster() {
  local port dir
  for port in "${CLUSTER_PORTS[@]}"; do
    dir="$CLUSTER_DIR/$port"
    # Each node also listens on port + 10000 for the cluster bus.
    if [[ -z $(redis_pid "$dir" "$port") ]]; then
      require_port_free $((port + 10000)) "redis cluster bus of node $port"
    fi
    start_redis_process "$dir" "$port" "redis-cluster node" \
      --cluster-enabled yes --cluster-config-file "$dir/nodes.conf" \
      --cluster-node-timeout 5000 --repl-diskless-sync-delay 0
  done
  # Nodes restarted from their nodes.conf rejoin by themselves; create only once.
  read_cluster_info
  if cluster_is_fresh; then
    create_cluster
  elif ! cluster_is_created; then
    print_cluster_state
    die "the redis cluster is half set up (an interrupted 'up'?); run '$0 down' and then '$0 up'"
  fi
  # An already healthy cluster (a repeated 'up') needs no second look.
  if ! cluster_healthy && ! wait_until "$CLUSTER_TIMEOUT" cluster_ready; then
    print_cluster_state
    die "the redis cluster was not healthy within ${CLUSTER_TIMEOUT} s (logs: $CLUSTER_DIR/*/redis.log)"
  fi
  log "redis cluster ready on ports ${CLUSTER_PORTS[0]}-${CLUSTER_PORTS[-1]}"
}

stop_redis_cluster() {
  local port
  for port in "${CLUSTER_PORTS[@]}"; do
    stop_redis_process "$CLUSTER_DIR/$port" "$port" "redis-cluster node"
  done
  rm -rf "$CLUSTER_DIR"
}

# ---------------------------------------------------------------------------
# DynamoDB: dynalite (npm, MIT), the open-source emulator; the vendor's DynamoDB Local may not be used.

install_dynalite() {
  if [[ -f $DYNALITE_BIN ]]; then
    return 0
  fi
  local major
  major=$(node --version | sed 's/^v\([0-9]*\).*/\1/')
  ((major >= 20)) || die "dynalite $DYNALITE_VERSION needs Node.js 20 or newer, found $(node --version)"
  log "installing dynalite $DYNALITE_VERSION from npm into $CACHE_DIR/npm"
  mkdir -p "$CACHE_DIR/npm"
  (cd "$CACHE_DIR/npm" && npm install --no-audit --no-fund --silent "dynalite@$DYNALITE_VERSION" >&2) \
    || die "npm install dynalite@$DYNALITE_VERSION failed"
  [[ -f $DYNALITE_BIN ]] || die "dynalite installed, but $DYNALITE_BIN is missing"
}

dynalite_answers() {
  # Any HTTP answer will do: dynalite replies 400 to a request without a DynamoDB target.
  curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$DYNALITE_PORT/"
}

dynalite_pid() {
  local pid
  pid=$(read_pid "$DYNALITE_DIR/dynalite.pid")
  if [[ -n $pid ]] && pid_is "$pid" "$DYNALITE_BIN" "--port $DYNALITE_PORT "; then
    echo "$pid"
  fi
  return 0
}

start_dynalite() {
  local pid
  pid=$(dynalite_pid)
  if [[ -n $pid ]]; then
    wait_until 10 dynalite_answers \
      || die "dynalite (pid $pid) runs but does not answer on port $DYNALITE_PORT; see $DYNALITE_DIR/dynalite.log"
    log "dynalite already running (pid $pid, port $DYNALITE_PORT)"
    return 0
  fi
  install_dynalite
  require_port_free "$DYNALITE_PORT" dynalite
  mkdir -p "$DYNALITE_DIR"
  log "starting dynalite on 127.0.0.1:$DYNALITE_PORT"
  # On disk (LevelDB), so 'pause'/'resume' keeps the tables like a real outage would; tables become ACTIVE at
  # once instead of after 500 ms. Backgrounded directly (not through spawn, whose subshell would linger holding
  # the lock) so that $! is node's own PID.
  mkdir -p "$DYNALITE_DIR/data"
  # Through scripts/dynalite-server.js, which keeps it running when a client drops a request half-sent.
  nohup node "$SCRIPT_DIR/dynalite-server.js" "$DYNALITE_BIN" --host 127.0.0.1 --port "$DYNALITE_PORT" \
    --path "$DYNALITE_DIR/data" \
    --createTableMs 0 --deleteTableMs 0 --updateTableMs 0 > "$DYNALITE_DIR/dynalite.log" 2>&1 9>&- &
  echo $! > "$DYNALITE_DIR/dynalite.pid"
  if ! wait_until 15 dynalite_answers; then
    tail -n 20 "$DYNALITE_DIR/dynalite.log" >&2 || true
    die "dynalite on port $DYNALITE_PORT did not answer within 15 s; see $DYNALITE_DIR/dynalite.log"
  fi
}

halt_dynalite() {
  local pid
  pid=$(dynalite_pid)
  if [[ -n $pid ]]; then
    log "stopping dynalite (pid $pid, port $DYNALITE_PORT)"
    stop_pid "$pid" dynalite
  fi
}

stop_dynalite() {
  halt_dynalite
  rm -rf "$DYNALITE_DIR"
}

# ---------------------------------------------------------------------------
# RabbitMQ: the machine's broker when one answers, else rabbitmq-server started here.
# Tests make a vhost of their own per run (rabbitmqctl) and delete it, or fall back to unique names.

# True when an AMQP 0-9-1 broker answers: it replies to the protocol header with a frame of type 1.
rabbitmq_answers() {
  local first
  first=$(timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$RABBIT_PORT && printf 'AMQP\\x00\\x00\\x09\\x01' >&3 \
    && head -c 1 <&3" 2>/dev/null | od -An -tx1 | tr -d ' \n') || true
  [[ $first == 01 ]]
}

# PID of the broker this script started, if alive. Only a broker started here writes this
# pidfile; its command line does not name our directory, so check it is a RabbitMQ node.
rabbitmq_pid() {
  local pid
  pid=$(read_pid "$RABBIT_DIR/rabbitmq.pid")
  if [[ -n $pid ]] && pid_is "$pid" beam.smp "-s rabbit boot "; then
    echo "$pid"
  fi
  return 0
}

install_rabbitmq() {
  if command -v rabbitmq-server >/dev/null; then
    return 0
  fi
  if ((EUID != 0)); then
    die "no RabbitMQ answers on port $RABBIT_PORT and rabbitmq-server is missing; install it as root (apt-get install rabbitmq-server) or run a broker there"
  fi
  log "installing rabbitmq-server"
  apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q rabbitmq-server >&2
  command -v rabbitmq-server >/dev/null || die "rabbitmq-server still missing after installing it"
}

start_rabbitmq() {
  local pid
  pid=$(rabbitmq_pid)
  if [[ -n $pid ]]; then
    wait_until 60 rabbitmq_answers \
      || die "rabbitmq (pid $pid) runs but does not answer on port $RABBIT_PORT; see $RABBIT_DIR/log or run '$0 down'"
    log "rabbitmq already running (pid $pid, port $RABBIT_PORT)"
    return 0
  fi
  if port_in_use "$RABBIT_PORT"; then
    wait_until 10 rabbitmq_answers \
      || die "port $RABBIT_PORT is taken by something that does not answer as an AMQP broker: $(ss -Hltnp "sport = :$RABBIT_PORT" | head -n 1)"
    log "using the RabbitMQ broker already running on port $RABBIT_PORT (not started here, never stopped here)"
    return 0
  fi
  install_rabbitmq
  # A package install may have started the machine's own service (no policy-rc.d): use it then.
  if wait_until 2 rabbitmq_answers; then
    log "using the RabbitMQ broker the package started on port $RABBIT_PORT (not stopped here)"
    return 0
  fi
  ((EUID == 0)) || die "no RabbitMQ answers on port $RABBIT_PORT; start one, or run '$0 up' as root"
  mkdir -p "$RABBIT_DIR/mnesia" "$RABBIT_DIR/log"
  chown -R rabbitmq:rabbitmq "$RABBIT_DIR"
  rm -f "$RABBIT_DIR/rabbitmq.pid"
  # Our own config file, so a machine-wide /etc/rabbitmq/rabbitmq.conf cannot move the listener elsewhere.
  printf 'listeners.tcp.1 = 127.0.0.1:%s\n' "$RABBIT_PORT" > "$RABBIT_DIR/rabbitmq.conf"
  log "starting rabbitmq-server on 127.0.0.1:$RABBIT_PORT (node $RABBIT_NODE)"
  # Loopback only, for AMQP, the Erlang distribution and epmd; data and logs in our directory.
  spawn env RABBITMQ_NODENAME="$RABBIT_NODE" RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT="$RABBIT_PORT" \
    RABBITMQ_MNESIA_BASE="$RABBIT_DIR/mnesia" RABBITMQ_LOG_BASE="$RABBIT_DIR/log" \
    RABBITMQ_PID_FILE="$RABBIT_DIR/rabbitmq.pid" RABBITMQ_CONFIG_FILE="$RABBIT_DIR/rabbitmq.conf" \
    ERL_EPMD_ADDRESS=127.0.0.1 \
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}" \
    rabbitmq-server -detached >&2
  if ! wait_until 90 rabbitmq_answers; then
    tail -n 20 "$RABBIT_DIR"/log/*.log >&2 2>/dev/null || true
    die "rabbitmq on port $RABBIT_PORT did not answer within 90 s; see $RABBIT_DIR/log"
  fi
  wait_until 10 test -s "$RABBIT_DIR/rabbitmq.pid" || die "rabbitmq wrote no pidfile ($RABBIT_DIR/rabbitmq.pid)"
}

# Stops only a broker this script started; the machine's own broker is left alone.
stop_rabbitmq() {
  local pid
  pid=$(rabbitmq_pid)
  if [[ -n $pid ]]; then
    log "stopping rabbitmq (pid $pid, port $RABBIT_PORT)"
    stop_pid "$pid" rabbitmq
  fi
  rm -rf "$RABBIT_DIR"
}

# ---------------------------------------------------------------------------
# Kafka: one KRaft node (broker + controller) from the Maven Central jars, no binary download.

# Fetches kafka_2.13 and its runtime jars into the cache once; 'down' keeps them.
install_kafka() {
  if [[ -f $KAFKA_LIB/.complete ]]; then
    return 0
  fi
  command -v java >/dev/null || die "java is needed to run Kafka"
  local mvn=${DEDUP_MVN:-mvn} project="$CACHE_DIR/kafka-$KAFKA_VERSION"
  command -v "${mvn%% *}" >/dev/null || die "Maven ($mvn) is needed to fetch Kafka's jars"
  log "fetching kafka_2.13:$KAFKA_VERSION and its jars from Maven Central into $KAFKA_LIB"
  rm -rf "$KAFKA_LIB"
  mkdir -p "$project"
  # log4j-slf4j-impl: the SLF4J 1.7 binding the Kafka distribution ships, so the broker logs through log4j2.
  cat > "$project/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.dedup.test-servers</groupId>
  <artifactId>kafka-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>$KAFKA_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>2.24.3</version>
    </dependency>
  </dependencies>
</project>
POM
  # shellcheck disable=SC2086 # DEDUP_MVN may carry arguments
  if ! $mvn -q -B -f "$project/pom.xml" \
      org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$KAFKA_LIB" >&2 9>&-; then
    die "could not fetch Kafka's jars with $mvn"
  fi
  [[ -f $KAFKA_LIB/kafka_2.13-$KAFKA_VERSION.jar ]] || die "kafka_2.13-$KAFKA_VERSION.jar is missing in $KAFKA_LIB"
  touch "$KAFKA_LIB/.complete"
}

kafka_pid() {
  local pid
  pid=$(read_pid "$KAFKA_DIR/kafka.pid")
  if [[ -n $pid ]] && pid_is "$pid" kafka.Kafka "$KAFKA_DIR/server.properties "; then
    echo "$pid"
  fi
  return 0
}

# The broker logs this once the controller has registered and unfenced it: clients can use it from then on.
kafka_answers() {
  port_in_use "$KAFKA_PORT" && grep -q 'Kafka Server started' "$KAFKA_DIR/server.log" 2>/dev/null
}

write_kafka_config() {
  cat > "$KAFKA_DIR/server.properties" <<PROPERTIES
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$KAFKA_DIR/data
num.partitions=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=3
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
# A restart after a crash waits for the old broker's session; shorter than the 9 s default.
broker.session.timeout.ms=4000
broker.heartbeat.interval.ms=1000
# Lower bounds only (the defaults stay): a chaos test sets a short session on its own group, so that a consumer
# killed with SIGKILL gives its partitions up within about 2 s instead of 45 s.
group.consumer.min.session.timeout.ms=1000
group.consumer.min.heartbeat.interval.ms=250
PROPERTIES
  cat > "$KAFKA_DIR/log4j2.properties" <<'PROPERTIES'
rootLogger.level=INFO
rootLogger.appenderRef.stdout.ref=STDOUT
appender.stdout.type=Console
appender.stdout.name=STDOUT
appender.stdout.layout.type=PatternLayout
appender.stdout.layout.pattern=[%d] %p %m (%c)%n
logger.apache.name=org.apache.kafka
logger.apache.level=WARN
PROPERTIES
}

start_kafka() {
  local pid
  pid=$(kafka_pid)
  if [[ -n $pid ]]; then
    wait_until 60 kafka_answers \
      || die "kafka (pid $pid) runs but does not answer on port $KAFKA_PORT; see $KAFKA_DIR/server.log"
    log "kafka already running (pid $pid, port $KAFKA_PORT)"
    return 0
  fi
  install_kafka
  require_port_free "$KAFKA_PORT" kafka
  require_port_free "$KAFKA_CONTROLLER_PORT" "kafka controller"
  mkdir -p "$KAFKA_DIR"
  write_kafka_config
  # Small heap and C1 only: the broker shares two cores with the builds.
  local java=(java -Xms128m -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1
    "-Dlog4j2.configurationFile=$KAFKA_DIR/log4j2.properties" "-Dkafka.logs.dir=$KAFKA_DIR" -cp "$KAFKA_LIB/*")
  if [[ ! -f $KAFKA_DIR/data/meta.properties ]]; then
    log "formatting kafka storage in $KAFKA_DIR/data"
    local cluster_id
    # A KRaft cluster id: 16 random bytes, URL-safe Base64 without padding (22 characters).
    cluster_id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | cut -c 1-22)
    # One id in 64 starts with '-', which the storage tool reads as an option ("expected one argument").
    cluster_id="A${cluster_id:1}"
    if ! "${java[@]}" kafka.tools.StorageTool format -t "$cluster_id" -c "$KAFKA_DIR/server.properties" \
        > "$KAFKA_DIR/format.log" 2>&1 9>&-; then
      cat "$KAFKA_DIR/format.log" >&2
      die "kafka storage format failed"
    fi
  fi
  log "starting kafka on 127.0.0.1:$KAFKA_PORT (controller $KAFKA_CONTROLLER_PORT)"
  # A fresh log each start, so kafka_answers sees this start's line. Backgrounded directly so $! is java's PID.
  nohup "${java[@]}" kafka.Kafka "$KAFKA_DIR/server.properties" > "$KAFKA_DIR/server.log" 2>&1 9>&- &
  echo $! > "$KAFKA_DIR/kafka.pid"
  if ! wait_until 60 kafka_answers; then
    tail -n 30 "$KAFKA_DIR/server.log" >&2 || true
    die "kafka on port $KAFKA_PORT did not start within 60 s; see $KAFKA_DIR/server.log"
  fi
}

kafka_ports_closed() {
  ! port_in_use "$KAFKA_PORT" && ! port_in_use "$KAFKA_CONTROLLER_PORT"
}

# Stops the broker but keeps its data: 'pause kafka' uses it to simulate an outage.
halt_kafka() {
  local pid
  pid=$(kafka_pid)
  if [[ -n $pid ]]; then
    log "stopping kafka (pid $pid, port $KAFKA_PORT)"
    stop_pid "$pid" kafka
    # A killed JVM's main thread can be a zombie while its other threads still hold the sockets.
    wait_until 30 kafka_ports_closed \
      || die "kafka's ports $KAFKA_PORT/$KAFKA_CONTROLLER_PORT are still open after it stopped"
  fi
}

stop_kafka() {
  halt_kafka
  rm -rf "$KAFKA_DIR"
}

kafka_status() {
  local pid state=stopped
  pid=$(kafka_pid)
  if [[ -n $pid ]]; then
    state="not-answering"
    if kafka_answers; then state=running; fi
  fi
  status_line kafka "$state" "$KAFKA_PORT" "${pid:--}"
}

# 'up kafka': only the broker, for a state directory whose other servers run elsewhere (or not at all).
cmd_up_kafka() {
  local started=$SECONDS
  check_port_numbers
  warn_if_ephemeral "$KAFKA_PORT" "$KAFKA_CONTROLLER_PORT"
  take_lock
  start_kafka
  log "kafka up ($((SECONDS - started)) s); state in $STATE_DIR"
  echo "export DEDUP_TEST_KAFKA_BOOTSTRAP='127.0.0.1:$KAFKA_PORT'"
}

# ---------------------------------------------------------------------------
# Subcommands

print_env() {
  local addresses=() port joined
  for port in "${CLUSTER_PORTS[@]}"; do
    addresses+=("127.0.0.1:$port")
  done
  joined=$(IFS=,; echo "${addresses[*]}")
  echo "export DEDUP_TEST_POSTGRES_URL='jdbc:postgresql://127.0.0.1:$PG_PORT/$PG_DB?user=postgres'"
  echo "export DEDUP_TEST_MARIADB_URL='jdbc:mariadb://127.0.0.1:$MARIADB_PORT/$MARIADB_DB?user=root'"
  echo "export DEDUP_TEST_REDIS_URL='redis://127.0.0.1:$REDIS_PORT'"
  echo "export DEDUP_TEST_REDIS_CLUSTER_URL='redis://$joined'"
  echo "export DEDUP_TEST_DYNAMODB_URL='http://127.0.0.1:$DYNALITE_PORT'"
  echo "export DEDUP_TEST_RABBITMQ_URL='amqp://guest:guest@127.0.0.1:$RABBIT_PORT'"
  echo "export DEDUP_TEST_KAFKA_BOOTSTRAP='127.0.0.1:$KAFKA_PORT'"
  # Reliability tests stop and restart a server through this script (pause/resume).
  echo "export DEDUP_TEST_SERVERS_SCRIPT='$(realpath "${BASH_SOURCE[0]}")'"
}

status_line() {
  printf '%-14s %-14s port %-12s pid %s\n' "$1" "$2" "$3" "$4"
}

print_status() {
  local pid state port pids=() running=0

  pid=$(postgres_pid)
  state=stopped
  if [[ -n $pid ]]; then
    state="not-answering"
    if postgres_answers; then state=running; fi
  fi
  status_line postgres "$state" "$PG_PORT" "${pid:--}"

  pid=$(mariadb_pid)
  state=stopped
  if [[ -n $pid ]]; then
    state="not-answering"
    if mariadb_answers; then state=running; fi
  fi
  status_line mariadb "$state" "$MARIADB_PORT" "${pid:--}"

  pid=$(redis_pid "$REDIS_DIR" "$REDIS_PORT")
  state=stopped
  if [[ -n $pid ]]; then
    state="not-answering"
    if redis_answers "$REDIS_PORT"; then state=running; fi
  fi
  status_line redis "$state" "$REDIS_PORT" "${pid:--}"

  for port in "${CLUSTER_PORTS[@]}"; do
    pid=$(redis_pid "$CLUSTER_DIR/$port" "$port")
    if [[ -n $pid ]] && redis_answers "$port"; then
      pids+=("$pid")
      running=$((running + 1))
    fi
  done
  if ((running == 0)); then
    state=stopped
  elif ((running == CLUSTER_NODES)) && cluster_ready; then
    state=running
  else
    state="degraded($running/$CLUSTER_NODES)"
  fi
  status_line redis-cluster "$state" "${CLUSTER_PORTS[0]}-${CLUSTER_PORTS[-1]}" \
    "$(IFS=,; echo "${pids[*]:--}")"

  pid=$(dynalite_pid)
  state=stopped
  if [[ -n $pid ]]; then
    state="not-answering"
    if dynalite_answers; then state=running; fi
  fi
  status_line dynalite "$state" "$DYNALITE_PORT" "${pid:--}"

  pid=$(rabbitmq_pid)
  state=stopped
  if rabbitmq_answers; then
    state=running
    [[ -n $pid ]] || state=running-external
  elif [[ -n $pid ]]; then
    state="not-answering"
  fi
  status_line rabbitmq "$state" "$RABBIT_PORT" "${pid:--}"
  kafka_status
}

# 'up' and 'down' must not interleave (e.g. two test runs starting at once).
# The lock is held on file descriptor 9 until this script exits; every server is
# started through spawn() so that it does not inherit fd 9 and keep the lock.
take_lock() {
  mkdir -p "$STATE_DIR"
  exec 9>> "$STATE_DIR/.lock"
  if ! flock -n 9; then
    log "waiting for another test-servers.sh up/down to finish"
    flock -w 300 9 || die "another test-servers.sh up/down still holds $STATE_DIR/.lock after 300 s"
  fi
}

cmd_up() {
  local started=$SECONDS
  check_port_numbers
  ensure_installed
  warn_if_ephemeral "$PG_PORT" "$MARIADB_PORT" "$REDIS_PORT" "${CLUSTER_PORTS[@]}" "$DYNALITE_PORT" "$RABBIT_PORT"
  warn_if_ephemeral "$KAFKA_PORT" "$KAFKA_CONTROLLER_PORT"
  local port
  for port in "${CLUSTER_PORTS[@]}"; do
    warn_if_ephemeral $((port + 10000))
  done
  take_lock
  start_postgres
  start_mariadb
  start_redis
  start_redis_cluster
  start_dynalite
  start_rabbitmq
  start_kafka
  log "all servers up ($((SECONDS - started)) s); state in $STATE_DIR"
  print_env
}

cmd_down() {
  if [[ ! -d $STATE_DIR ]]; then
    log "nothing to stop ($STATE_DIR does not exist)"
    return 0
  fi
  take_lock
  stop_kafka
  stop_rabbitmq
  stop_dynalite
  stop_redis_cluster
  stop_redis
  stop_mariadb
  stop_postgres
  log "all servers stopped; their data is deleted"
}

# pause/resume one server, keeping its data, so a test can watch a store ride out an outage.
cmd_pause() {
  take_lock
  case "$1" in
    postgres) halt_postgres ;;
    mariadb) halt_mariadb ;;
    redis) stop_redis_process "$REDIS_DIR" "$REDIS_PORT" redis ;;
    dynalite) halt_dynalite ;;
    kafka) halt_kafka ;;
    # One cluster node, e.g. redis-cluster:17001: its replica takes over after the node timeout.
    redis-cluster:*) stop_redis_process "$CLUSTER_DIR/${1#redis-cluster:}" "${1#redis-cluster:}" "redis-cluster node" ;;
    *) usage ;;
  esac
}

cmd_resume() {
  take_lock
  case "$1" in
    postgres) start_postgres ;;
    mariadb) start_mariadb ;;
    redis) start_redis ;;
    dynalite) start_dynalite ;;
    kafka) start_kafka ;;
    # Restarts every stopped node; each rejoins from its nodes.conf (a former master as a replica).
    redis-cluster | redis-cluster:*) start_redis_cluster ;;
    *) usage ;;
  esac
}

usage() {
  echo "usage: $0 up|down|env|status, $0 up kafka, or $0 pause|resume postgres|mariadb|redis|redis-cluster:<port>|dynalite|kafka" >&2
  exit 2
}

main() {
  if (($# == 2)) && [[ $1 == up && $2 == kafka ]]; then
    cmd_up_kafka
    return
  fi
  if (($# == 2)) && [[ $1 == pause || $1 == resume ]]; then
    "cmd_$1" "$2"
    return
  fi
  if (($# != 1)); then
    usage
  fi
  case "$1" in
    up) cmd_up ;;
    down) cmd_down ;;
    env) print_env ;;
    status) print_status ;;
    *) usage ;;
  esac
}

main "$@"
