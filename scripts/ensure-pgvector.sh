#!/usr/bin/env bash
# Make sure the pgvector extension ("vector") is available to the native
# PostgreSQL server on 127.0.0.1:5432.
#
# pgvector is not packaged for Debian bookworm, so when it is missing we build
# it from Debian trixie's source package (see shared/POSTGRES.md, "Two
# backends, one schema"). The trixie deb-src list lives only in a temp dir and
# is passed to apt-get by option: no system apt configuration is touched.
#
# Exits 0 at once when the extension is already available.
set -euo pipefail

PGHOST_ADDR=${PGHOST_ADDR:-127.0.0.1}
PGPORT_NUM=${PGPORT_NUM:-5432}
PGUSER_NAME=${PGUSER_NAME:-postgres}
# pgvector's Makefile defaults to -march=native; Debian builds it with
# OPTFLAGS="" so the binary runs on any x86_64 CPU. Override if wanted.
PGVECTOR_OPTFLAGS=${PGVECTOR_OPTFLAGS-}

log() { printf '[ensure-pgvector] %s\n' "$*"; }
die() { printf '[ensure-pgvector] ERROR: %s\n' "$*" >&2; exit 1; }

pg_sql() {
  psql -h "$PGHOST_ADDR" -p "$PGPORT_NUM" -U "$PGUSER_NAME" -d postgres -X -tAc "$1"
}

vector_available() {
  [ "$(pg_sql "select 1 from pg_available_extensions where name='vector'" 2>/dev/null || true)" = "1" ]
}

if ! pg_isready -q -h "$PGHOST_ADDR" -p "$PGPORT_NUM"; then
  die "PostgreSQL is not accepting connections on $PGHOST_ADDR:$PGPORT_NUM; start it first"
fi

if vector_available; then
  log "pgvector already available; nothing to do"
  exit 0
fi

start=$SECONDS
log "pgvector not available; building it from Debian trixie's source package"

# --- which PostgreSQL major version / pg_config -----------------------------
major=$(pg_sql "show server_version_num" 2>/dev/null | awk '{ printf "%d", $1 / 10000 }' || true)
if [ -z "$major" ] || [ "$major" = 0 ] || [ ! -d "/usr/lib/postgresql/$major" ]; then
  major=$(find /usr/lib/postgresql -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null | sort -n | tail -n 1 || true)
fi
major=${major:-15}
PG_CONFIG=/usr/lib/postgresql/$major/bin/pg_config
log "PostgreSQL major version: $major (pg_config: $PG_CONFIG)"

# --- build dependencies ------------------------------------------------------
export DEBIAN_FRONTEND=noninteractive
deps=("postgresql-server-dev-$major" dpkg-dev)
log "installing build dependencies: ${deps[*]}"
if ! apt-get install -y -q "${deps[@]}"; then
  log "apt-get install failed; running apt-get update and retrying"
  apt-get update -q
  apt-get install -y -q "${deps[@]}"
fi
[ -x "$PG_CONFIG" ] || die "$PG_CONFIG not found after installing postgresql-server-dev-$major"

# --- temporary apt configuration for trixie deb-src -------------------------
work=$(mktemp -d /tmp/ensure-pgvector.XXXXXX)
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
# apt downloads as the unprivileged _apt user: let it reach the temp dirs.
chmod 0755 "$work"
mkdir -p "$work/lists/partial" "$work/src"
chown -R _apt:root "$work/lists" "$work/src" 2>/dev/null || true

uris=$(sed -n 's/^[Uu][Rr][Ii][Ss]:[[:space:]]*//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1 | awk '{ print $1 }' || true)
[ -n "$uris" ] || die "could not read a URIs: line from /etc/apt/sources.list.d/debian.sources"
log "mirror (from the machine's debian.sources): $uris"

cat > "$work/trixie-src.sources" <<SOURCES
Types: deb-src
URIs: $uris
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES

apt_opts=(
  -q
  -oDir::Etc::SourceList="$work/trixie-src.sources"
  -oDir::Etc::SourceParts=/dev/null
  -oDir::State::Lists="$work/lists"
  # keep apt's binary caches out of /var/cache/apt
  -oDir::Cache::pkgcache=
  -oDir::Cache::srcpkgcache=
)

log "fetching trixie source index"
apt-get "${apt_opts[@]}" update
log "downloading pgvector source package"
(cd "$work/src" && apt-get "${apt_opts[@]}" source --download-only pgvector)

orig=$(find "$work/src" -maxdepth 1 -name 'pgvector_*.orig.tar.*' | head -n 1)
[ -n "$orig" ] || die "no pgvector .orig tarball was downloaded"
log "building $(basename "$orig")"
mkdir -p "$work/build"
tar -xf "$orig" -C "$work/build"
srcdir=$(find "$work/build" -mindepth 1 -maxdepth 1 -type d | head -n 1)
if [ -z "$srcdir" ] || [ ! -f "$srcdir/Makefile" ]; then
  die "unexpected layout in $(basename "$orig")"
fi

make -C "$srcdir" -j"$(nproc)" PG_CONFIG="$PG_CONFIG" OPTFLAGS="$PGVECTOR_OPTFLAGS"
make -C "$srcdir" install PG_CONFIG="$PG_CONFIG" OPTFLAGS="$PGVECTOR_OPTFLAGS"

cleanup
trap - EXIT

if vector_available; then
  log "pgvector installed ($(( SECONDS - start )) s)"
else
  die "pgvector was built and installed into $("$PG_CONFIG" --sharedir)/extension but PostgreSQL still does not list 'vector' in pg_available_extensions"
fi
