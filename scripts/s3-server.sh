#!/usr/bin/env bash
# Runs an S3-compatible object server on loopback, for tests and for trying
# checkpoints on object storage (docs/DESIGN.md, "Checkpoints on object
# storage").
#
#   scripts/s3-server.sh start PORT DIR [--timeout SECONDS]
#       Starts the server on 127.0.0.1:PORT with its objects under
#       DIR/data, their metadata under DIR/meta, its log (server.log) and
#       pid file (server.pid) under DIR; waits until it answers, creates
#       the bucket "streamsql" (kept if DIR already has it: a restart on
#       the same DIR keeps every object), and prints what a client needs,
#       one NAME=value a line:
#           AWS_ACCESS_KEY_ID=...  AWS_SECRET_ACCESS_KEY=...
#           AWS_REGION=us-east-1   S3_ENDPOINT=http://127.0.0.1:PORT
#       so that `set -a; eval "$(scripts/s3-server.sh start 9000 /tmp/s3)";
#       set +a` sets up a shell. --timeout: how long to wait for it to
#       answer (default 60 s); past it the server is stopped and the script
#       fails, printing the tail of its log.
#   scripts/s3-server.sh stop DIR
#       Stops the server of DIR (SIGTERM, then SIGKILL after 10 s).
#   scripts/s3-server.sh resolve
#       Only installs the server (what start does first).
#
# The server is versitygw (github.com/versity/versitygw, Apache-2.0), an S3
# gateway in Go whose POSIX backend keeps each object as a file: a real
# server process speaking the S3 protocol over HTTP with signature v4,
# list-objects-v2, deletes and conditional writes (If-None-Match: *, which
# fencing a job's checkpoints will use), installed from the Go module proxy
# with `go install` at a pinned version, once, into
# ${STREAMSQL_CACHE:-~/.cache/streamsql}/versitygw-<version>; nothing is
# installed into the repository. We chose it over s3proxy (Maven Central:
# a JVM to start, and its filesystem backend through jclouds) and moto's
# server (PyPI: an in-memory mock of AWS rather than a store on disk,
# whose objects do not survive a restart) because it keeps objects on
# disk, starts in well under a second and needs only the Go toolchain the
# project builds with. A cold install (compiling it) takes a few minutes on
# two cores; later starts reuse the binary.
#
# Settings fit for tests, not production: fixed credentials (below), plain
# HTTP, object metadata in a sidecar directory (no extended attributes
# needed on DIR's filesystem).
set -euo pipefail

# shellcheck source=lib/pidfile.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib/pidfile.sh"

version=v1.8.0
cache=${STREAMSQL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/streamsql}/versitygw-$version
bin=$cache/bin/versitygw
access=streamsql
secret=streamsql-secret
region=us-east-1
bucket=streamsql

die() { echo "s3-server.sh: $*" >&2; exit 1; }

# resolve installs the server's binary into $cache/bin once; concurrent
# callers wait on one lock.
resolve() {
	mkdir -p "$cache"
	exec 9>"$cache/.lock"
	flock 9
	if [[ ! -x $bin ]]; then
		command -v go >/dev/null || die "Go is needed to install versitygw $version"
		GOBIN=$cache/bin GOFLAGS=-mod=mod go install "github.com/versity/versitygw/cmd/versitygw@$version" >&2 ||
			die "installing github.com/versity/versitygw/cmd/versitygw@$version with go install failed"
		[[ -x $bin ]] || die "go install did not leave $bin"
	fi
	flock -u 9
}

# alive PIDFILE: whether the process of PIDFILE runs.
alive() { [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# s3 HEAD|PUT PATH: one signed request without a body to the server;
# prints the HTTP status (000 when nothing answers).
s3() {
	local method=(-X PUT)
	[[ $1 == HEAD ]] && method=(-I)
	curl -s -o /dev/null -w '%{http_code}' --max-time 5 "${method[@]}" -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' \
		--aws-sigv4 "aws:amz:$region:s3" --user "$access:$secret" "http://127.0.0.1:$port$2" || true
}

start() {
	port=$1
	local dir=$2 timeout=60
	shift 2
	while (($#)); do
		case $1 in
		--timeout) timeout=${2:?--timeout needs seconds}; shift 2 ;;
		*) die "unknown option '$1' (known: --timeout SECONDS)" ;;
		esac
	done
	[[ $port =~ ^[0-9]+$ ]] && ((port > 0 && port < 65536)) || die "PORT must be a TCP port, got '$port'"
	[[ $timeout =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive number of seconds, got '$timeout'"
	command -v curl >/dev/null || die "curl is needed to check the server and create its bucket"
	resolve
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	alive "$dir/server.pid" && die "a server already runs for $dir (pid $(cat "$dir/server.pid"))"
	mkdir -p "$dir/data" "$dir/meta"
	# setsid: the process outlives this script and is not in its process group.
	ROOT_ACCESS_KEY_ID=$access ROOT_SECRET_ACCESS_KEY=$secret setsid "$bin" \
		--port "127.0.0.1:$port" --region "$region" --quiet \
		posix --sidecar "$dir/meta" "$dir/data" >"$dir/server.log" 2>&1 </dev/null &
	echo $! >"$dir/server.pid"
	local deadline=$((SECONDS + timeout)) code
	# The bucket's HEAD answers 200 once it exists, 404 before.
	until code=$(s3 HEAD "/$bucket") && [[ $code == 200 || $code == 404 ]]; do
		if ! alive "$dir/server.pid"; then
			tail -20 "$dir/server.log" >&2 || true
			rm -f "$dir/server.pid"
			die "the server exited before it answered (is port $port taken? log in $dir/server.log)"
		fi
		if ((SECONDS >= deadline)); then
			tail -20 "$dir/server.log" >&2 || true
			stop "$dir"
			die "the server did not answer within ${timeout} s (log in $dir/server.log)"
		fi
		sleep 0.1
	done
	if [[ $code == 404 ]]; then
		code=$(s3 PUT "/$bucket")
		[[ $code == 200 ]] || { stop "$dir"; die "creating the bucket '$bucket' failed: HTTP $code"; }
	fi
	echo "AWS_ACCESS_KEY_ID=$access"
	echo "AWS_SECRET_ACCESS_KEY=$secret"
	echo "AWS_REGION=$region"
	echo "S3_ENDPOINT=http://127.0.0.1:$port"
}

# stop DIR: stops its server (SIGTERM, then SIGKILL after 10 s).
stop() { stop_pidfile "$1"; }

case ${1:-} in
start) (($# >= 3)) || die "usage: $0 start PORT DIR [--timeout SECONDS]"; shift; start "$@" ;;
stop) (($# == 2)) || die "usage: $0 stop DIR"; stop "$2" ;;
resolve) resolve ;;
*) die "usage: $0 start PORT DIR [--timeout SECONDS] | stop DIR | resolve" ;;
esac
