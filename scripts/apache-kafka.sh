#!/usr/bin/env bash
# Runs a single-node Apache Kafka broker (KRaft: broker and controller in one
# JVM) on loopback, for tests and benchmarks.
#
#   scripts/apache-kafka.sh start PORT DIR [--partitions N] [--timeout SECONDS]
#       Starts the broker on 127.0.0.1:PORT (its controller listens on
#       PORT+1), with its log dir, configuration, log (server.log) and pid
#       file (broker.pid) under DIR, waits until it serves metadata and can
#       commit a transaction that a read_committed consumer then reads back,
#       and prints the bootstrap address (127.0.0.1:PORT) on stdout.
#       A DIR that already holds a formatted log dir is started as it is: a
#       restart on the same log dir keeps every topic, committed offset and
#       transaction. --partitions N: the partition count of auto-created
#       topics (default 4). --timeout: how long to wait for readiness
#       (default 180 s); past it the broker is stopped and the script fails,
#       printing the tail of server.log.
#   scripts/apache-kafka.sh stop DIR
#       Stops the broker of DIR (SIGTERM, then SIGKILL after 30 s).
#   scripts/apache-kafka.sh resolve
#       Only resolves the jars (what start does first).
#
# The broker's jars (org.apache.kafka:kafka_2.13, see apache-kafka/pom.xml)
# are resolved with Maven from Maven Central once, into
# ${STREAMSQL_CACHE:-~/.cache/streamsql}/apache-kafka-<version>, and reused
# by every later run; nothing is installed into the repository. A cold
# start (resolving the jars with an empty Maven cache) takes about a minute;
# a warm one about 10 s on two cores, most of it the JVM starting.
#
# Settings fit for tests, not production: one replica of everything,
# transaction.state.log.min.isr=1, 1 MiB log segments, no initial consumer
# group rebalance delay, auto-created topics, and the log dir formatted
# with eligible leader replicas off (eligible.leader.replicas.version=0;
# 4.4 turns them on for new clusters). With them on, this single node
# restarted after a SIGKILL leaves its topics' partitions leaderless for
# several seconds (the unclean shutdown drops it from their eligible
# replicas until an unclean recovery elects it), while its transaction
# coordinator, already loaded, completes the commits it had decided and
# skips the markers of the leaderless partitions ("Couldn't find leader
# endpoint ... likely deleted already and hence can be skipped"): each
# such transaction hangs, holding read_committed readers at its first
# offset for good. Without eligible replicas the node stays in the ISR
# and leads its partitions again as it registers (connectors/kafka/doc.go).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$here/apache-kafka/pom.xml")
cache=${STREAMSQL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/streamsql}/apache-kafka-$version

die() { echo "apache-kafka.sh: $*" >&2; exit 1; }

# resolve copies the broker's class path into $cache/lib once, and compiles
# the readiness check; concurrent callers wait on one lock.
resolve() {
	mkdir -p "$cache"
	exec 9>"$cache/.lock"
	flock 9
	if [[ ! -f $cache/lib/.complete ]]; then
		command -v mvn >/dev/null || die "Maven (mvn) is needed to resolve the broker's jars"
		rm -rf "$cache/lib" "$cache/classes"
		mvn -B -q -f "$here/apache-kafka/pom.xml" dependency:copy-dependencies \
			-DincludeScope=runtime -DoutputDirectory="$cache/lib" >&2 ||
			die "resolving org.apache.kafka:kafka_2.13:$version with Maven failed"
		touch "$cache/lib/.complete"
	fi
	if [[ ! -f $cache/classes/TxnCheck.class || $here/apache-kafka/TxnCheck.java -nt $cache/classes/TxnCheck.class ]]; then
		mkdir -p "$cache/classes"
		javac -nowarn -cp "$cache/lib/*" -d "$cache/classes" "$here/apache-kafka/TxnCheck.java" >&2 ||
			die "compiling the readiness check failed"
	fi
	flock -u 9
}

alive() { [[ -f $1/broker.pid ]] && kill -0 "$(cat "$1/broker.pid")" 2>/dev/null; }

start() {
	local port=$1 dir=$2 partitions=4 timeout=180
	shift 2
	while (($#)); do
		case $1 in
		--partitions) partitions=${2:?--partitions needs a count}; shift 2 ;;
		--timeout) timeout=${2:?--timeout needs seconds}; shift 2 ;;
		*) die "unknown option '$1' (known: --partitions N, --timeout SECONDS)" ;;
		esac
	done
	[[ $port =~ ^[0-9]+$ ]] && ((port > 0 && port < 65535)) || die "PORT must be a TCP port below 65535, got '$port'"
	[[ $partitions =~ ^[1-9][0-9]*$ ]] || die "--partitions must be a positive integer, got '$partitions'"
	[[ $timeout =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive number of seconds, got '$timeout'"
	resolve
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	alive "$dir" && die "a broker already runs for $dir (pid $(cat "$dir/broker.pid"))"
	cat >"$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$((port + 1))
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$((port + 1))
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$dir/logs
num.partitions=$partitions
auto.create.topics.enable=true
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
group.initial.rebalance.delay.ms=0
log.segment.bytes=1048576
log.retention.check.interval.ms=60000
PROPS
	local cp="$cache/lib/*"
	if [[ ! -f $dir/logs/meta.properties ]]; then
		local id
		id=$(java -cp "$cp" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1)
		java -cp "$cp" -Dlog4j2.configurationFile="$here/apache-kafka/log4j2.xml" -Dkafka.logs.dir="$dir" \
			kafka.tools.StorageTool format -t "$id" -c "$dir/server.properties" \
			--feature eligible.leader.replicas.version=0 >"$dir/format.log" 2>&1 ||
			{ cat "$dir/format.log" >&2; die "formatting the KRaft storage in $dir/logs failed"; }
	fi
	# setsid: the broker outlives this script and is not in its process group.
	setsid java -Xms256m -Xmx768m -XX:+UseG1GC -Djava.awt.headless=true \
		-Dlog4j2.configurationFile="$here/apache-kafka/log4j2.xml" -Dkafka.logs.dir="$dir" \
		-cp "$cp" kafka.Kafka "$dir/server.properties" >"$dir/stdout.log" 2>&1 </dev/null &
	echo $! >"$dir/broker.pid"
	local deadline=$((SECONDS + timeout))
	until java -cp "$cache/classes:$cp" -Dlog4j2.configurationFile="$here/apache-kafka/log4j2.xml" \
		-Dkafka.logs.dir="$dir/check" TxnCheck "127.0.0.1:$port" _streamsql_readiness >>"$dir/check.log" 2>&1; do
		if ! alive "$dir"; then
			tail -20 "$dir/stdout.log" "$dir/server.log" >&2 2>/dev/null || true
			die "the broker exited before it was ready (logs in $dir)"
		fi
		if ((SECONDS >= deadline)); then
			tail -20 "$dir/server.log" >&2 2>/dev/null || true
			stop "$dir"
			die "the broker was not ready within ${timeout} s (logs in $dir)"
		fi
		sleep 1
	done
	echo "127.0.0.1:$port"
}

stop() {
	local dir=$1
	[[ -f $dir/broker.pid ]] || return 0
	local pid
	pid=$(cat "$dir/broker.pid")
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 300); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$dir/broker.pid"
}

case ${1:-} in
start) (($# >= 3)) || die "usage: $0 start PORT DIR [--partitions N] [--timeout SECONDS]"; shift; start "$@" ;;
stop) (($# == 2)) || die "usage: $0 stop DIR"; stop "$2" ;;
resolve) resolve ;;
*) die "usage: $0 start PORT DIR [--partitions N] [--timeout SECONDS] | stop DIR | resolve" ;;
esac
