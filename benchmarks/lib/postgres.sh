# A PostgreSQL 15 server of a benchmark's own, in a temporary folder, run as the postgres user (initdb refuses
# root); sourced by the benchmarks that need one. `pg_setup WORK` installs postgresql-15 when it is missing, makes
# the cluster in WORK/pg and starts it on a free port (`$pgport`, 127.0.0.1 only); `pg_start [-c settings]` starts
# it again, `pg_stop MODE` stops it (fast or immediate), `pg_cleanup` (for the script's EXIT trap) stops it if it
# runs, and `database NAME` creates a database and prints its URL.
PG=/usr/lib/postgresql/15/bin

as_postgres() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

pg_setup() {
  pg_work=$1
  if [ ! -x "$PG/postgres" ]; then
    if [ "$(id -u)" -eq 0 ]; then apt-get install -y -qq postgresql-15 >/dev/null
    else sudo apt-get install -y -qq postgresql-15 >/dev/null; fi
  fi
  pgport=$(free_port)
  mkdir -p "$pg_work/pg" "$pg_work/pg-socket"
  [ "$(id -u)" -ne 0 ] || chown postgres "$pg_work/pg" "$pg_work/pg-socket"
  as_postgres "$PG/initdb" -D "$pg_work/pg" -U pipeline --auth=trust -E UTF8 --locale=C --no-sync >/dev/null
  pg_start
}

pg_start() {
  as_postgres "$PG/pg_ctl" -D "$pg_work/pg" -l "$pg_work/pg/server.log" -w \
    -o "-p $pgport -k $pg_work/pg-socket -c listen_addresses=127.0.0.1 $*" start >/dev/null
}

pg_stop() { as_postgres "$PG/pg_ctl" -D "$pg_work/pg" -m "$1" stop >/dev/null; }

pg_cleanup() {
  if [ -n "${pg_work:-}" ] && [ -f "$pg_work/pg/postmaster.pid" ]; then
    as_postgres "$PG/pg_ctl" -D "$pg_work/pg" -m immediate stop >/dev/null 2>&1 || true
  fi
}

database() {  # a failed createdb fails the caller's $(database NAME) too
  "$PG/createdb" -h 127.0.0.1 -p "$pgport" -U pipeline "$1" || exit 1
  echo "postgres://pipeline@127.0.0.1:$pgport/$1?sslmode=disable"
}
