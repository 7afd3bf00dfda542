#!/usr/bin/env bash
# npm run test:citus: the memory service's isolation, retrieval and lifecycle tests on Citus.
#
# Builds the Citus extension when this machine's PostgreSQL lacks it (../shared/citus, about
# 4 minutes once), starts a coordinator and two workers as clusters of their own on free ports
# under a temp directory (the shared server on 5432 is never touched), runs the Citus suite
# against the coordinator, and stops them.
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."

# The Citus source and build script: ../shared/citus from the project, else CITUS_SHARED_DIR.
shared=${CITUS_SHARED_DIR:-}
for candidate in "$shared" ../shared/citus /work/shared/citus; do
  if [ -n "$candidate" ] && [ -f "$candidate/build-citus.sh" ]; then shared=$candidate; break; fi
done
[ -f "$shared/build-citus.sh" ] || { echo "no Citus build script (set CITUS_SHARED_DIR to the folder holding build-citus.sh)" >&2; exit 1; }
bash "$shared/build-citus.sh"
bash scripts/ensure-pgvector.sh

dir=$(mktemp -d /tmp/citus-test.XXXXXX)
trap 'bash scripts/citus-cluster.sh stop "$dir"' EXIT
bash scripts/citus-cluster.sh start "$dir"
set -a
# shellcheck disable=SC1091
. "$dir/env"
set +a

# Isolation (SQL, HTTP, property-based, policy mutation, Citus-only attacks), routing, retrieval
# (context assembly, search, prepared reads), lifecycle (game end, erasure, jobs, re-embedding),
# cloning and the audit ledger.
DATABASE_URL=$CITUS_COORDINATOR_URL CITUS_WORKER_URLS=$CITUS_WORKER_URLS npx vitest run \
  test/citus \
  test/memory/isolation.sql.test.ts test/memory/isolation.http.test.ts \
  test/memory/isolation.property.test.ts test/memory/isolation.mutation.test.ts \
  test/memory/compartmentalization.test.ts test/memory/encryption.test.ts \
  test/memory/context test/memory/prepared-reads.test.ts \
  test/memory/consolidation/pipeline.test.ts test/memory/consolidation/crash-safety.test.ts \
  test/memory/lifecycle test/memory/jobs test/memory/reembed.test.ts \
  test/memory/cloning test/memory/audit "$@"
