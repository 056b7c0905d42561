#!/bin/sh
# make-big-dumps.sh - builds large follows dumps with the real database tools,
# for edgeload's scale checks (docs/bench-log/2026-12-02-sql-dumps.md, "SQL dumps: 1,000,000-row
# loads").
#
#   scripts/make-big-dumps.sh ROWS OUTDIR [mariadb] [postgres] [sqlite]
#
# Makes the table follows(follower_id, followee_id, created_at) of ROWS
# distinct rows in each named dialect (all three when none is named) and
# writes OUTDIR/follows-ROWS.<dialect>.sql.zst, compressed with `zstd -q`:
#
#   mariadb   throwaway mariadbd under a temp dir (socket only, as
#             tests/fixtures/sql/make_fixtures.sh), filled from the Sequence
#             engine, dumped with `mariadb-dump` (default extended INSERTs)
#   postgres  throwaway PostgreSQL 15 cluster (initdb/pg_ctl, socket only),
#             filled with generate_series, dumped with `pg_dump` (plain COPY)
#   sqlite    sqlite3 database filled by a recursive CTE, dumped with `.dump`
#
# The data is deterministic and the same in every dialect: for i in
# 0..ROWS-1, follower_id = 'u' || (i mod 50000), followee_id =
# 'u' || ((i * 7919) mod 1000003), created_at = 1700000000 + i seconds (UTC).
# 1000003 is prime and 7919 is not a multiple of it, so the followee ids --
# and with them the (follower_id, followee_id) pairs -- are all distinct as
# long as ROWS <= 1000003.
#
# Run as root (PostgreSQL runs as the postgres user). The databases are
# removed on exit; only the compressed dumps stay.
set -eu

usage() { echo "usage: $0 ROWS OUTDIR [mariadb] [postgres] [sqlite]" >&2; exit 2; }
[ $# -ge 2 ] || usage
ROWS=$1
OUTDIR=$2
shift 2
case "$ROWS" in ''|*[!0-9]*) usage ;; esac
[ "$ROWS" -ge 1 ] && [ "$ROWS" -le 1000003 ] || { echo "$0: ROWS must be 1..1000003" >&2; exit 2; }
DIALECTS=${*:-mariadb postgres sqlite}
for d in $DIALECTS; do
    case "$d" in mariadb|postgres|sqlite) ;; *) usage ;; esac
done
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
LAST=$((ROWS - 1))

TMP=$(mktemp -d /tmp/elbig.XXXXXX)
chmod 755 "$TMP"
PGBIN=/usr/lib/postgresql/15/bin
export TZ=UTC PGTZ=UTC LC_ALL=C.UTF-8

cleanup() {
    [ -f "$TMP/my.pid" ] && kill "$(cat "$TMP/my.pid")" 2>/dev/null || true
    [ -d "$TMP/pg" ] && su postgres -c "$PGBIN/pg_ctl -D $TMP/pg -m fast stop" >/dev/null 2>&1 || true
    sleep 1
    rm -rf "$TMP"
}
trap cleanup EXIT

count_check() { # dialect got
    [ "$2" -eq "$ROWS" ] || { echo "$0: $1 holds $2 rows, not $ROWS" >&2; exit 1; }
}

make_mariadb() {
    mariadb-install-db --user=root --datadir="$TMP/my" --auth-root-authentication-method=normal \
        >"$TMP/my-install.log" 2>&1
    mariadbd --user=root --datadir="$TMP/my" --socket="$TMP/my.sock" --skip-networking \
        --pid-file="$TMP/my.pid" --log-error="$TMP/my.err" --character-set-server=utf8mb4 \
        --collation-server=utf8mb4_bin --innodb-buffer-pool-size=256M &
    for _ in $(seq 1 120); do [ -S "$TMP/my.sock" ] && break; sleep 0.5; done
    MY="mariadb -S $TMP/my.sock -uroot --default-character-set=utf8mb4"
    $MY <<EOF
CREATE DATABASE big CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
USE big;
SET time_zone = '+00:00';
CREATE TABLE follows (
  follower_id VARCHAR(32) NOT NULL,
  followee_id VARCHAR(32) NOT NULL,
  created_at DATETIME NOT NULL,
  PRIMARY KEY (follower_id, followee_id)
) ENGINE=InnoDB;
INSERT INTO follows
  SELECT CONCAT('u', seq MOD 50000), CONCAT('u', (seq * 7919) MOD 1000003),
         FROM_UNIXTIME(1700000000 + seq)
  FROM seq_0_to_$LAST;
EOF
    count_check mariadb "$($MY -N -B big -e 'SELECT COUNT(*) FROM follows')"
    mariadb-dump -S "$TMP/my.sock" -uroot --default-character-set=utf8mb4 big \
        | zstd -q -f -o "$OUTDIR/follows-$ROWS.mariadb.sql.zst"
    kill "$(cat "$TMP/my.pid")"
    rm -f "$TMP/my.pid"
}

make_postgres() {
    chown postgres "$TMP"
    su postgres -c "$PGBIN/initdb -D $TMP/pg -E UTF8 --locale=C.UTF-8 -A trust" >"$TMP/pg-init.log" 2>&1
    su postgres -c "$PGBIN/pg_ctl -D $TMP/pg -l $TMP/pg.log -w -o \"-c listen_addresses='' -k $TMP\" start" >/dev/null
    PSQL="psql -X -q -v ON_ERROR_STOP=1 -h $TMP -U postgres"
    $PSQL -d postgres -c "CREATE DATABASE big"
    $PSQL -d big <<EOF
CREATE TABLE follows (follower_id text NOT NULL, followee_id text NOT NULL,
  created_at timestamptz NOT NULL, PRIMARY KEY (follower_id, followee_id));
INSERT INTO follows
  SELECT 'u' || (i % 50000), 'u' || ((i * 7919) % 1000003), to_timestamp(1700000000 + i)
  FROM generate_series(0::bigint, $LAST::bigint) AS i;
EOF
    count_check postgres "$($PSQL -d big -A -t -c 'SELECT count(*) FROM follows')"
    pg_dump -h "$TMP" -U postgres big | zstd -q -f -o "$OUTDIR/follows-$ROWS.postgres.sql.zst"
    su postgres -c "$PGBIN/pg_ctl -D $TMP/pg -m fast stop" >/dev/null
    rm -rf "$TMP/pg"
}

make_sqlite() {
    DB="$TMP/big.db"
    sqlite3 "$DB" <<EOF
CREATE TABLE follows (follower_id TEXT NOT NULL, followee_id TEXT NOT NULL,
  created_at TEXT NOT NULL, PRIMARY KEY (follower_id, followee_id));
INSERT INTO follows
  WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < $LAST)
  SELECT 'u' || (i % 50000), 'u' || ((i * 7919) % 1000003),
         datetime(1700000000 + i, 'unixepoch')
  FROM c;
EOF
    count_check sqlite "$(sqlite3 "$DB" 'SELECT count(*) FROM follows')"
    sqlite3 "$DB" .dump | zstd -q -f -o "$OUTDIR/follows-$ROWS.sqlite.sql.zst"
    rm -f "$DB"
}

for d in $DIALECTS; do
    "make_$d"
    echo "$OUTDIR/follows-$ROWS.$d.sql.zst"
done
