#!/usr/bin/env bash
# Runs a single-node Apache Kafka broker (KRaft: broker and controller in one
# JVM) on loopback, for tests and benchmarks.
#
#   scripts/apache-kafka.sh start PORT DIR [--partitions N] [--timeout SECONDS] [--separate-controller]
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
#       printing the tail of server.log. --separate-controller: the KRaft
#       controller runs in a JVM of its own (its files under DIR/controller,
#       its pid in controller.pid) and broker.pid is the broker's alone, so
#       that the broker can be killed while its controller stays up, as in
#       a cluster with dedicated controllers; a start on such a DIR starts
#       whichever of the two is not running. The controller fences a broker
#       it has not heard from for 2 s (broker.session.timeout.ms; the
#       broker heartbeats every 500 ms). By default one JVM is broker and
#       controller (a combined node).
#   scripts/apache-kafka.sh stop DIR
#       Stops the broker of DIR (SIGTERM, then SIGKILL after 30 s), then its
#       controller if it runs apart.
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
# group rebalance delay, auto-created topics, and log dirs formatted with
# eligible leader replicas off (eligible.leader.replicas.version=0; 4.4
# turns them on for new clusters), so that the single replica of a
# partition of a broker killed uncleanly leads it again as soon as the
# broker is unfenced, without waiting for an unclean recovery. A combined
# node killed and started again can hang a decided commit by itself; a
# test that kills the broker runs it with --separate-controller
# (connectors/kafka/doc.go).
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

# alive PIDFILE: whether the process of PIDFILE runs.
alive() { [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# format CONFIG LOGDIR CLUSTER_ID: formats a KRaft log dir once.
format() {
	[[ -f $2/meta.properties ]] && return 0
	java -cp "$cache/lib/*" -Dlog4j2.configurationFile="$here/apache-kafka/log4j2.xml" -Dkafka.logs.dir="$(dirname "$1")" \
		kafka.tools.StorageTool format -t "$3" -c "$1" \
		--feature eligible.leader.replicas.version=0 >"$(dirname "$1")/format.log" 2>&1 ||
		{ cat "$(dirname "$1")/format.log" >&2; die "formatting the KRaft storage in $2 failed"; }
}

# launch DIR PIDFILE CONFIG HEAP: starts a Kafka JVM with its logs in DIR.
launch() {
	# setsid: the process outlives this script and is not in its process group.
	setsid java -Xms128m -Xmx"$4" -XX:+UseG1GC -Djava.awt.headless=true \
		-Dlog4j2.configurationFile="$here/apache-kafka/log4j2.xml" -Dkafka.logs.dir="$1" \
		-cp "$cache/lib/*" kafka.Kafka "$3" >"$1/stdout.log" 2>&1 </dev/null &
	echo $! >"$2"
}

start() {
	local port=$1 dir=$2 partitions=4 timeout=180 separate=
	shift 2
	while (($#)); do
		case $1 in
		--partitions) partitions=${2:?--partitions needs a count}; shift 2 ;;
		--timeout) timeout=${2:?--timeout needs seconds}; shift 2 ;;
		--separate-controller) separate=1; shift ;;
		*) die "unknown option '$1' (known: --partitions N, --timeout SECONDS, --separate-controller)" ;;
		esac
	done
	[[ $port =~ ^[0-9]+$ ]] && ((port > 0 && port < 65535)) || die "PORT must be a TCP port below 65535, got '$port'"
	[[ $partitions =~ ^[1-9][0-9]*$ ]] || die "--partitions must be a positive integer, got '$partitions'"
	[[ $timeout =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive number of seconds, got '$timeout'"
	resolve
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	alive "$dir/broker.pid" && die "a broker already runs for $dir (pid $(cat "$dir/broker.pid"))"
	if [[ -z $separate && -d $dir/controller ]]; then
		die "$dir was first started with --separate-controller: start it with that option again"
	fi
	local common="controller.quorum.voters=1@127.0.0.1:$((port + 1))
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
	local broker="log.dirs=$dir/logs
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
log.retention.check.interval.ms=60000"
	if [[ -z $separate ]]; then
		cat >"$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
$common
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$((port + 1))
advertised.listeners=PLAINTEXT://127.0.0.1:$port
inter.broker.listener.name=PLAINTEXT
$broker
PROPS
	else
		mkdir -p "$dir/controller"
		cat >"$dir/controller/server.properties" <<PROPS
process.roles=controller
node.id=1
$common
listeners=CONTROLLER://127.0.0.1:$((port + 1))
log.dirs=$dir/controller/logs
broker.session.timeout.ms=2000
PROPS
		cat >"$dir/server.properties" <<PROPS
process.roles=broker
node.id=2
$common
broker.heartbeat.interval.ms=500
listeners=PLAINTEXT://127.0.0.1:$port
advertised.listeners=PLAINTEXT://127.0.0.1:$port
inter.broker.listener.name=PLAINTEXT
$broker
PROPS
	fi
	local id=
	if [[ ! -f $dir/logs/meta.properties ]]; then
		id=$(java -cp "$cache/lib/*" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1)
		format "$dir/server.properties" "$dir/logs" "$id"
	fi
	if [[ -n $separate ]]; then
		if [[ ! -f $dir/controller/logs/meta.properties ]]; then
			[[ -n $id ]] || die "$dir/logs is formatted but its controller's log dir is not"
			format "$dir/controller/server.properties" "$dir/controller/logs" "$id"
		fi
		alive "$dir/controller.pid" || launch "$dir/controller" "$dir/controller.pid" "$dir/controller/server.properties" 256m
	fi
	launch "$dir" "$dir/broker.pid" "$dir/server.properties" 768m
	local deadline=$((SECONDS + timeout))
	until java -cp "$cache/classes:$cache/lib/*" -Dlog4j2.configurationFile="$here/apache-kafka/log4j2.xml" \
		-Dkafka.logs.dir="$dir/check" TxnCheck "127.0.0.1:$port" _streamsql_readiness >>"$dir/check.log" 2>&1; do
		if ! alive "$dir/broker.pid" || { [[ -n $separate ]] && ! alive "$dir/controller.pid"; }; then
			tail -20 "$dir/stdout.log" "$dir/server.log" "$dir/controller/server.log" >&2 2>/dev/null || true
			stop "$dir"
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

# halt PIDFILE: stops its process (SIGTERM, then SIGKILL after 30 s).
halt() {
	[[ -f $1 ]] || return 0
	local pid
	pid=$(cat "$1")
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 300); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$1"
}

stop() {
	halt "$1/broker.pid"
	halt "$1/controller.pid"
}

case ${1:-} in
start) (($# >= 3)) || die "usage: $0 start PORT DIR [--partitions N] [--timeout SECONDS] [--separate-controller]"; shift; start "$@" ;;
stop) (($# == 2)) || die "usage: $0 stop DIR"; stop "$2" ;;
resolve) resolve ;;
*) die "usage: $0 start PORT DIR [--partitions N] [--timeout SECONDS] [--separate-controller] | stop DIR | resolve" ;;
esac
