#!/usr/bin/env bash
# A throwaway Citus cluster for the Citus test suites: a coordinator and two workers, each a
# private PostgreSQL cluster under DIR on its own port (127.0.0.1, trust), with a database
# `crm` that has the citus extension on every node and the workers registered.
#   scripts/citus-cluster.sh start DIR [BASE_PORT]   prints the coordinator's URL
#   scripts/citus-cluster.sh stop DIR
# Needs PostgreSQL's server binaries with the citus extension installed in them, and root
# (the servers run as the postgres user) or the postgres user itself.
set -euo pipefail
command=${1:?start|stop}
dir=${2:?DIR}
bin=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
as_postgres() { if [ "$(id -un)" = postgres ]; then "$@"; else runuser -u postgres -- "$@"; fi; }

if [ "$command" = stop ]; then
  for node in "$dir"/node-*; do
    [ -f "$node/postmaster.pid" ] && as_postgres "$bin/pg_ctl" -D "$node" -m immediate -w stop >/dev/null 2>&1 || true
  done
  rm -rf "$dir"
  exit 0
fi

# Below Linux's ephemeral range (32768 and up), where a test's own client sockets may hold a port.
base=${3:-$((20000 + RANDOM % 12000))}
mkdir -p "$dir"
chown postgres "$dir" 2>/dev/null || true
for i in 0 1 2; do
  node=$dir/node-$i
  port=$((base + i))
  mkdir -p "$node"
  chown postgres "$node" 2>/dev/null || true
  as_postgres "$bin/initdb" -D "$node" -U postgres -A trust >/dev/null
  cat >>"$node/postgresql.conf" <<CONF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$node'
shared_preload_libraries = 'citus'
max_connections = 300
fsync = off
synchronous_commit = off
CONF
  as_postgres "$bin/pg_ctl" -D "$node" -l "$node/log" -w start >/dev/null || { echo "citus-cluster: node $i (port $port) did not start:" >&2; cat "$node/log" >&2; exit 1; }
  psql -qX -h 127.0.0.1 -p "$port" -U postgres -c 'CREATE DATABASE crm' >/dev/null
  psql -qX -h 127.0.0.1 -p "$port" -U postgres -d crm -c 'CREATE EXTENSION citus' >/dev/null
done
psql -qX -h 127.0.0.1 -p "$base" -U postgres -d crm -c "SELECT citus_set_coordinator_host('127.0.0.1', $base)" >/dev/null
for i in 1 2; do
  psql -qX -h 127.0.0.1 -p "$base" -U postgres -d crm -c "SELECT citus_add_node('127.0.0.1', $((base + i)))" >/dev/null
done
echo "postgres://postgres@127.0.0.1:$base/crm"
