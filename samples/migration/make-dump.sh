#!/usr/bin/env bash
# Makes social.pg.sql, the sample PostgreSQL dump of the migration walk-through
# (README, "Three jobs"), with the real tools: a throwaway PostgreSQL 15
# cluster under a temporary directory, the social graph of samples/social,
# and pg_dump's plain format. Needs the Debian package postgresql-15; run as
# root (the cluster runs as the postgres user).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
PGBIN=/usr/lib/postgresql/15/bin
tmp=$(mktemp -d)
chown postgres "$tmp"
trap 'su postgres -c "$PGBIN/pg_ctl -D $tmp/db -m fast stop" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
su postgres -c "$PGBIN/initdb -D $tmp/db -E UTF8 --locale=C.UTF-8 -A trust" >/dev/null
su postgres -c "$PGBIN/pg_ctl -D $tmp/db -l $tmp/log -w -o \"-c listen_addresses='' -k $tmp\" start" >/dev/null
psql() { su postgres -c "$PGBIN/../bin/psql -q -h $tmp -d postgres -v ON_ERROR_STOP=1 $*"; }
psql <<'SQL'
CREATE TABLE users (id text PRIMARY KEY, name text NOT NULL, joined date);
CREATE TABLE follows (follower_id text REFERENCES users, followee_id text REFERENCES users,
                      created_at timestamp with time zone NOT NULL,
                      PRIMARY KEY (follower_id, followee_id));
INSERT INTO users VALUES ('alice', 'Alice Liddell', '2024-01-05'), ('bob', 'Bob O''Neil', '2024-02-11'),
  ('carol', 'Carol Ng', NULL), ('dave', 'Dave "D" Smith', '2024-03-30'), ('erin', 'Erin 絵里', '2024-04-01');
INSERT INTO follows VALUES
  ('alice', 'bob',   '2024-06-20 16:13:20+00'),
  ('alice', 'carol', '2024-06-20 16:15:00+00'),
  ('dave',  'bob',   '2024-06-20 16:16:40+00'),
  ('erin',  'bob',   '2024-06-21 09:00:00+02'),
  ('bob',   'alice', '2024-06-22 12:00:00+00');
SQL
su postgres -c "$PGBIN/pg_dump -h $tmp -d postgres --no-owner" > "$here/social.pg.sql"
echo "wrote $here/social.pg.sql"
