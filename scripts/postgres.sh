#!/usr/bin/env bash
# Runs a PostgreSQL server on loopback, for tests and for trying the jdbc
# connector (docs/DIALECT.md, "PostgreSQL").
#
#   scripts/postgres.sh start PORT DIR [--timeout SECONDS]
#       Starts a server on 127.0.0.1:PORT (and a Unix socket in DIR) with
#       its cluster under DIR/data, its log in DIR/server.log; the first
#       start on DIR creates the cluster (initdb) with the user and the
#       database "streamsql" (password "streamsql"); a later start on the
#       same DIR keeps every table. Waits until the server accepts a
#       query and prints what a client needs, one NAME=value a line:
#           PGHOST=127.0.0.1  PGPORT=PORT  PGUSER=streamsql
#           PGPASSWORD=streamsql  PGDATABASE=streamsql
#           JDBC_URL=jdbc:postgresql://127.0.0.1:PORT/streamsql
#       so that `set -a; eval "$(scripts/postgres.sh start 5433 /tmp/pg)";
#       set +a` sets up a shell for psql. --timeout: how long to wait for
#       it (default 60 s); past it the server is stopped and the script
#       fails, printing the tail of its log.
#   scripts/postgres.sh stop DIR
#       Stops the server of DIR (fast shutdown, then SIGKILL after 30 s).
#   scripts/postgres.sh resolve
#       Only finds (and installs, when missing) PostgreSQL: what start does
#       first.
#
# PostgreSQL comes from Debian's packages (postgresql: 15 on bookworm),
# installed with apt-get when no /usr/lib/postgresql/*/bin/initdb is there;
# the newest version installed is used. The server never runs as root: run
# by root, the script runs initdb and the server as Debian's user postgres
# and gives DIR to it (every directory above DIR must let it through).
#
# Settings: wal_level=logical (logical replication), max_prepared_transactions
# (two-phase commit: the exactly-once jdbc sink) and max_connections both 64,
# listening on 127.0.0.1 only, password authentication (scram-sha-256) over
# TCP and trust over the Unix socket in DIR. Fit for tests, not production.
set -euo pipefail

user=streamsql
password=streamsql
database=streamsql

die() { echo "postgres.sh: $*" >&2; exit 1; }

# bindir prints the bin directory of the newest PostgreSQL installed.
bindir() {
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	[[ -n $d && -x $d/initdb && -x $d/pg_ctl ]] && echo "$d"
}

# resolve installs PostgreSQL from Debian's packages when it is missing;
# concurrent callers wait on one lock.
resolve() {
	bindir >/dev/null && return 0
	local cache=${STREAMSQL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/streamsql}
	mkdir -p "$cache"
	exec 9>"$cache/.postgres.lock"
	flock 9
	if ! bindir >/dev/null; then
		local sudo=""
		[[ $(id -u) -ne 0 ]] && sudo=sudo
		command -v apt-get >/dev/null || die "PostgreSQL is not installed and there is no apt-get to install it"
		{ $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql; } >&2 ||
			die "installing PostgreSQL with apt-get failed"
		bindir >/dev/null || die "apt-get installed postgresql but no /usr/lib/postgresql/*/bin/initdb is there"
	fi
	flock -u 9
}

# as CMD...: runs CMD as the server's user (postgres when we are root).
as() {
	if [[ $(id -u) -eq 0 ]]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

start() {
	local port=$1 dir=$2 timeout=60
	shift 2
	while (($#)); do
		case $1 in
		--timeout) timeout=${2:?--timeout needs seconds}; shift 2 ;;
		*) die "unknown option '$1' (known: --timeout SECONDS)" ;;
		esac
	done
	[[ $port =~ ^[0-9]+$ ]] && ((port > 0 && port < 65536)) || die "PORT must be a TCP port, got '$port'"
	[[ $timeout =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive number of seconds, got '$timeout'"
	resolve
	local bin
	bin=$(bindir)
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	if [[ $(id -u) -eq 0 ]]; then
		getent passwd postgres >/dev/null || die "run as root, the server needs the user postgres (Debian's package creates it)"
		chown postgres: "$dir"
		chmod 700 "$dir"
		as test -x "$dir" || die "the user postgres cannot enter $dir: a directory above it does not let it through"
	fi
	if [[ -f $dir/data/postmaster.pid ]] && as "$bin/pg_ctl" status -D "$dir/data" >/dev/null 2>&1; then
		die "a server already runs for $dir"
	fi
	if [[ ! -f $dir/data/PG_VERSION ]]; then
		rm -rf "$dir/data"
		as bash -c 'umask 077; printf "%s\n" "$1" >"$2"' pw "$password" "$dir/pwfile"
		as "$bin/initdb" -D "$dir/data" -U "$user" --pwfile="$dir/pwfile" -E UTF8 --no-locale \
			--auth-local=trust --auth-host=scram-sha-256 >"$dir/initdb.log" 2>&1 ||
			{ tail -20 "$dir/initdb.log" >&2; die "initdb failed (log in $dir/initdb.log)"; }
		rm -f "$dir/pwfile"
		as bash -c 'cat >>"$1"' conf "$dir/data/postgresql.conf" <<-EOF
			# scripts/postgres.sh
			listen_addresses = '127.0.0.1'
			unix_socket_directories = '$dir'
			wal_level = logical
			max_prepared_transactions = 64
			max_connections = 64
			max_wal_senders = 10
			max_replication_slots = 10
		EOF
	fi
	as "$bin/pg_ctl" start -D "$dir/data" -l "$dir/server.log" -w -t "$timeout" -o "-p $port" >/dev/null 2>&1 || {
		tail -20 "$dir/server.log" >&2 || true
		stop "$dir"
		die "the server did not start on port $port within ${timeout} s (is the port taken? log in $dir/server.log)"
	}
	if [[ $(as "$bin/psql" -h "$dir" -p "$port" -U "$user" -d postgres -Atqc \
		"SELECT 1 FROM pg_database WHERE datname = '$database'") != 1 ]]; then
		as "$bin/psql" -h "$dir" -p "$port" -U "$user" -d postgres -qc "CREATE DATABASE $database" >/dev/null ||
			{ stop "$dir"; die "creating the database $database failed"; }
	fi
	echo "PGHOST=127.0.0.1"
	echo "PGPORT=$port"
	echo "PGUSER=$user"
	echo "PGPASSWORD=$password"
	echo "PGDATABASE=$database"
	echo "JDBC_URL=jdbc:postgresql://127.0.0.1:$port/$database"
}

# stop DIR: stops its server (fast shutdown: clients are disconnected,
# prepared transactions kept), then SIGKILL after 30 s.
stop() {
	local dir=$1 bin pid
	[[ -f $dir/data/postmaster.pid ]] || return 0
	bin=$(bindir) || return 0
	pid=$(head -1 "$dir/data/postmaster.pid")
	as "$bin/pg_ctl" stop -D "$dir/data" -m fast -w -t 30 >/dev/null 2>&1 || true
	if [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$dir/data/postmaster.pid"
}

case ${1:-} in
start) (($# >= 3)) || die "usage: $0 start PORT DIR [--timeout SECONDS]"; shift; start "$@" ;;
stop) (($# == 2)) || die "usage: $0 stop DIR"; stop "$2" ;;
resolve) resolve ;;
*) die "usage: $0 start PORT DIR [--timeout SECONDS] | stop DIR | resolve" ;;
esac
