#!/usr/bin/env bash
# npm run test:citus: the API suites on Citus (vitest.citus.config.ts). With CITUS_URL (a
# coordinator's database, its workers registered) they run there; otherwise on a throwaway
# coordinator and two workers started here (scripts/citus-cluster.sh), when this machine's
# PostgreSQL has the citus extension. Without it they cannot run, and this says so.
set -euo pipefail
cd "$(dirname "$0")/.."
run() { TEST_CITUS_URL="$1" npx vitest run --config vitest.citus.config.ts; }

if [ -n "${CITUS_URL:-}" ]; then
  run "$CITUS_URL"
  exit
fi
if ! ls /usr/lib/postgresql/*/lib/citus.so >/dev/null 2>&1; then
  echo "test:citus: Citus is not installed on this machine (no citus.so under /usr/lib/postgresql/*/lib)," >&2
  echo "test:citus: so the Citus suites did NOT run. Install Citus, or set CITUS_URL to a coordinator's database." >&2
  exit 0
fi
cluster=$(mktemp -d)
trap 'scripts/citus-cluster.sh stop "$cluster"' EXIT
# On a line of its own: a cluster that fails to start stops the script here (set -e), rather
# than running the suites with no Citus URL.
url=$(scripts/citus-cluster.sh start "$cluster")
run "$url"
