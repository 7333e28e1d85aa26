#!/bin/sh
# Creates the cluster on first start (POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB), then runs the server in
# the foreground as the postgres user; extra arguments go to postgres (e.g. -c max_connections=200).
set -eu
user="${POSTGRES_USER:-postgres}"
db="${POSTGRES_DB:-$user}"
mkdir -p "$PGDATA" /run/postgresql
chown postgres:postgres "$PGDATA" /run/postgresql
chmod 700 "$PGDATA"
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -n "${POSTGRES_PASSWORD:-}" ]; then
    printf '%s' "$POSTGRES_PASSWORD" >/tmp/pwfile
    chown postgres /tmp/pwfile
    as_postgres initdb -D "$PGDATA" -U "$user" --pwfile=/tmp/pwfile -A scram-sha-256 -E UTF8 --locale C >/dev/null
    rm -f /tmp/pwfile
    remote=scram-sha-256
  else
    as_postgres initdb -D "$PGDATA" -U "$user" -A trust -E UTF8 --locale C >/dev/null
    remote=trust
  fi
  printf 'host all all 0.0.0.0/0 %s\nhost all all ::/0 %s\n' "$remote" "$remote" >>"$PGDATA/pg_hba.conf"
  if [ "$db" != postgres ]; then
    echo "CREATE DATABASE \"$db\"" | as_postgres postgres --single -D "$PGDATA" -j postgres >/dev/null
  fi
  echo "postgres-entrypoint: initialised $PGDATA (user $user, database $db)"
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups postgres -D "$PGDATA" -c listen_addresses='*' "$@"
