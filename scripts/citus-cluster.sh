#!/usr/bin/env bash
# A throwaway Citus cluster: a coordinator and two workers, each a PostgreSQL cluster of its own
# under one temp directory, on ports of their own (never the shared server on 5432).
#
#   citus-cluster.sh start DIR    initdb + start the three, register the workers; prints the env
#                                 (CITUS_COORDINATOR_URL, CITUS_WORKER_URLS) to DIR/env
#   citus-cluster.sh stop DIR     stop the three and remove DIR
#
# Each node loads citus (shared_preload_libraries) and has pgvector available. The coordinator
# sends SET LOCAL to the workers (citus.propagate_set_commands = 'local'): the memory service's
# scope is transaction-local settings, which its row-level security reads on every shard.
set -euo pipefail

cmd=${1:?usage: citus-cluster.sh start|stop DIR}
dir=${2:?usage: citus-cluster.sh start|stop DIR}
bin=$(pg_config --bindir)
# Three consecutive free ports, from CITUS_BASE_PORT if given.
free() { ! (ss -ltnH 2>/dev/null | awk '{print $4}' | grep -qE ":$1\$"); }
if [ -n "${CITUS_BASE_PORT:-}" ]; then
  BASE_PORT=$CITUS_BASE_PORT
else
  BASE_PORT=$((20000 + RANDOM % 20000))
  until free "$BASE_PORT" && free $((BASE_PORT + 1)) && free $((BASE_PORT + 2)); do BASE_PORT=$((BASE_PORT + 3)); done
fi
NODES=(coordinator worker1 worker2)

as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

port_of() { echo $((BASE_PORT + $1)); }

case "$cmd" in
start)
  [ -e "$dir/env" ] && { echo "a cluster already runs in $dir" >&2; exit 1; }
  mkdir -p "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
  for i in "${!NODES[@]}"; do
    node=${NODES[$i]}
    data=$dir/$node
    as_postgres "$bin/initdb" -D "$data" -A trust -U postgres --no-sync -E UTF8 >/dev/null
    cat >> "$data/postgresql.conf" <<EOF
port = $(port_of "$i")
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
shared_preload_libraries = 'citus'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 300
max_prepared_transactions = 300
citus.propagate_set_commands = 'local'
citus.shard_count = ${CITUS_SHARD_COUNT:-8}
EOF
    as_postgres "$bin/pg_ctl" -D "$data" -l "$dir/$node.log" -w start >/dev/null
  done
  coordinator=postgres://postgres@127.0.0.1:$(port_of 0)/postgres
  workers=()
  for i in 0 1 2; do
    psql -q -X -v ON_ERROR_STOP=1 "postgres://postgres@127.0.0.1:$(port_of "$i")/postgres" -c 'CREATE EXTENSION citus' -c 'CREATE EXTENSION vector'
  done
  psql -q -X -v ON_ERROR_STOP=1 "$coordinator" -c "SELECT citus_set_coordinator_host('127.0.0.1', $(port_of 0))" >/dev/null
  for i in 1 2; do
    psql -q -X -v ON_ERROR_STOP=1 "$coordinator" -c "SELECT citus_add_node('127.0.0.1', $(port_of "$i"))" >/dev/null
    workers+=("postgres://postgres@127.0.0.1:$(port_of "$i")/postgres")
  done
  {
    echo "CITUS_COORDINATOR_URL=$coordinator"
    echo "CITUS_WORKER_URLS=$(IFS=,; echo "${workers[*]}")"
  } > "$dir/env"
  cat "$dir/env"
  ;;
stop)
  for node in "${NODES[@]}"; do
    [ -d "$dir/$node" ] && as_postgres "$bin/pg_ctl" -D "$dir/$node" -m fast -w stop >/dev/null 2>&1 || true
  done
  rm -rf "$dir"
  ;;
*)
  echo "usage: citus-cluster.sh start|stop DIR" >&2
  exit 2
  ;;
esac
