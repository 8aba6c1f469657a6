#!/usr/bin/env bash
# Runs a Confluent-compatible schema registry on loopback, for the tests of
# the avro-confluent format and for trying it.
#
#   scripts/schema-registry.sh start PORT DIR [--timeout SECONDS]
#       Starts the registry on 127.0.0.1:PORT with its log (server.log) and
#       pid file (server.pid) under DIR, waits until its Confluent API
#       answers, and prints the URL a client ('avro-confluent.url') uses:
#           SCHEMA_REGISTRY_URL=http://127.0.0.1:PORT/apis/ccompat/v7
#       Schemas are kept in memory: a restart starts empty. --timeout: how
#       long to wait for it to answer (default 120 s); past it the registry
#       is stopped and the script fails, printing the tail of its log.
#   scripts/schema-registry.sh stop DIR
#       Stops the registry of DIR (SIGTERM, then SIGKILL after 10 s).
#   scripts/schema-registry.sh resolve
#       Only builds the registry (what start does first).
#
# The registry is Apicurio Registry 2.4.2.Final (Apache-2.0) with its
# in-memory (H2) storage, which serves Confluent's schema registry API
# under /apis/ccompat/v7 (and v6): register a schema under a subject, look
# a schema up by id, compatibility checks. It is built from Maven Central
# (io.apicurio:apicurio-registry-app, see schema-registry/pom.xml) with
# Maven once, into ${STREAMSQL_CACHE:-~/.cache/streamsql}/apicurio-registry-<version>,
# and reused by every later run; nothing is installed into the repository.
# We chose it over Karapace (not on PyPI, and it needs a Kafka broker) and
# Confluent's own registry (not on Maven Central). A cold build takes about
# a minute; a start about 10 s on two cores, most of it the JVM starting.
#
# Settings fit for tests, not production: no authentication, plain HTTP,
# nothing kept on disk.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/pidfile.sh
source "$here/lib/pidfile.sh"
version=$(sed -n 's:.*<apicurio.version>\(.*\)</apicurio.version>.*:\1:p' "$here/schema-registry/pom.xml")
cache=${STREAMSQL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/streamsql}/apicurio-registry-$version
api=/apis/ccompat/v7

die() { echo "schema-registry.sh: $*" >&2; exit 1; }

# resolve builds the registry into $cache/app once; concurrent callers wait
# on one lock.
resolve() {
	mkdir -p "$cache"
	exec 9>"$cache/.lock"
	flock 9
	if [[ ! -f $cache/app/.complete || $here/schema-registry/pom.xml -nt $cache/app/.complete ||
		$here/schema-registry/src/main/java/streamsql/registry/ConfigProperties.java -nt $cache/app/.complete ]]; then
		command -v mvn >/dev/null || die "Maven (mvn) is needed to build the registry"
		command -v java >/dev/null || die "Java 17 is needed to build and run the registry"
		rm -rf "$cache/build" "$cache/app"
		mkdir -p "$cache/build"
		cp -r "$here/schema-registry/pom.xml" "$here/schema-registry/src" "$cache/build/"
		mvn -B -q -f "$cache/build/pom.xml" package >"$cache/build.log" 2>&1 ||
			{ tail -30 "$cache/build.log" >&2; die "building Apicurio Registry $version with Maven failed (log in $cache/build.log)"; }
		mkdir -p "$cache/app"
		mv "$cache/build/target/registry-1-runner.jar" "$cache/build/target/lib" "$cache/app/"
		rm -rf "$cache/build"
		touch "$cache/app/.complete"
	fi
	flock -u 9
}

# alive PIDFILE: whether the process of PIDFILE runs.
alive() { [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

start() {
	local port=$1 dir=$2 timeout=120
	shift 2
	while (($#)); do
		case $1 in
		--timeout) timeout=${2:?--timeout needs seconds}; shift 2 ;;
		*) die "unknown option '$1' (known: --timeout SECONDS)" ;;
		esac
	done
	[[ $port =~ ^[0-9]+$ ]] && ((port > 0 && port < 65536)) || die "PORT must be a TCP port, got '$port'"
	[[ $timeout =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive number of seconds, got '$timeout'"
	command -v curl >/dev/null || die "curl is needed to check the registry"
	resolve
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	alive "$dir/server.pid" && die "a registry already runs for $dir (pid $(cat "$dir/server.pid"))"
	# setsid: the process outlives this script and is not in its process group.
	setsid java -Xms64m -Xmx384m -XX:+UseSerialGC -Djava.awt.headless=true \
		-Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$port" \
		-jar "$cache/app/registry-1-runner.jar" >"$dir/server.log" 2>&1 </dev/null &
	echo $! >"$dir/server.pid"
	local deadline=$((SECONDS + timeout))
	until [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$port$api/subjects" || true) == 200 ]]; do
		if ! alive "$dir/server.pid"; then
			tail -20 "$dir/server.log" >&2 || true
			rm -f "$dir/server.pid"
			die "the registry exited before it answered (is port $port taken? log in $dir/server.log)"
		fi
		if ((SECONDS >= deadline)); then
			tail -20 "$dir/server.log" >&2 || true
			stop "$dir"
			die "the registry did not answer within ${timeout} s (log in $dir/server.log)"
		fi
		sleep 0.2
	done
	echo "SCHEMA_REGISTRY_URL=http://127.0.0.1:$port$api"
}

# stop DIR: stops its registry (SIGTERM, then SIGKILL after 10 s).
stop() { stop_pidfile "$1"; }

case ${1:-} in
start) (($# >= 3)) || die "usage: $0 start PORT DIR [--timeout SECONDS]"; shift; start "$@" ;;
stop) (($# == 2)) || die "usage: $0 stop DIR"; stop "$2" ;;
resolve) resolve ;;
*) die "usage: $0 start PORT DIR [--timeout SECONDS] | stop DIR | resolve" ;;
esac
