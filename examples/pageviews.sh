#!/usr/bin/env bash
# The page-view quickstart end to end with nothing installed: starts a
# local Kafka broker (`streamsql kafka-dev`, in memory) in the background,
# runs examples/pageviews.sql against it, shows the committed counts of the
# pv topic and stops the broker.
#
#   examples/pageviews.sh                  # broker on 127.0.0.1:9092
#   KAFKA_PORT=19092 examples/pageviews.sh # another port
#   KAFKA=apache examples/pageviews.sh     # Apache Kafka instead
#
# KAFKA=apache runs the same on a real Apache Kafka broker, started with
# scripts/apache-kafka.sh on KAFKA_PORT (its controller on KAFKA_PORT+1,
# both must be free) with a log dir in a temporary directory, and stopped
# at the end; it needs Java 17 and Maven (the broker's jars are resolved
# once from Maven Central, see scripts/apache-kafka.sh). The broker creates
# the example's two topics, clicks and pv, with 2 partitions each when the
# job's sink first writes to them (as kafka-dev is told with --topic). The
# default, KAFKA=kafka-dev, needs nothing but Go.
#
# STREAMSQL names the binary; without it, ./streamsql is built first (when
# Go is installed). The script fails unless the counts read back add up to
# the 1,000,000 clicks the example generates.
set -euo pipefail
cd "$(dirname "$0")/.."

port=${KAFKA_PORT:-9092}
kafka=${KAFKA:-kafka-dev}
case $kafka in
kafka-dev | apache) ;;
*) echo "KAFKA must be kafka-dev or apache, got '$kafka'" >&2; exit 2 ;;
esac
bin=${STREAMSQL:-./streamsql}
if [ -z "${STREAMSQL:-}" ] && command -v go >/dev/null 2>&1; then
  echo "building $bin ..."
  go build -o "$bin" ./cmd/streamsql
fi

work=$(mktemp -d)
broker_pid=""
apache_dir=""
cleanup() {
  if [ -n "$broker_pid" ]; then
    kill "$broker_pid" 2>/dev/null || true
    wait "$broker_pid" 2>/dev/null || true
  fi
  if [ -n "$apache_dir" ]; then
    scripts/apache-kafka.sh stop "$apache_dir" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

if [ "$kafka" = apache ]; then
  # Apache Kafka; the topics it auto-creates get 2 partitions.
  apache_dir=$work/apache-kafka
  echo "starting Apache Kafka on 127.0.0.1:$port (scripts/apache-kafka.sh) ..."
  scripts/apache-kafka.sh start "$port" "$apache_dir" --partitions 2 >/dev/null
  echo "Apache Kafka: serving on 127.0.0.1:$port"
else
  # The broker, with the two topics of the example.
  "$bin" kafka-dev --port "$port" --partitions 2 --topic clicks --topic pv >"$work/kafka-dev.log" 2>&1 &
  broker_pid=$!
  for _ in $(seq 100); do
    grep -qs "serving Kafka" "$work/kafka-dev.log" && break
    if ! kill -0 "$broker_pid" 2>/dev/null; then
      echo "kafka-dev did not start:" >&2
      cat "$work/kafka-dev.log" >&2
      broker_pid=""
      exit 1
    fi
    sleep 0.1
  done
  grep -qs "serving Kafka" "$work/kafka-dev.log" || { echo "kafka-dev not ready after 10s" >&2; exit 1; }
  cat "$work/kafka-dev.log"
fi

# The job file, pointed at the broker's port.
sql=examples/pageviews.sql
if [ "$port" != 9092 ]; then
  sed "s/127\.0\.0\.1:9092/127.0.0.1:$port/g" "$sql" >"$work/pageviews.sql"
  sql=$work/pageviews.sql
fi
"$bin" --data-dir "$work/data" -f "$sql"

# The same counts as an independent Kafka client sees them: the last
# committed record of each key of pv. They must add up to every click.
clicks=1000000 # the example's 'number-of-rows'
if command -v kcat >/dev/null 2>&1; then
  echo
  echo "kcat -C -b 127.0.0.1:$port -t pv -e -X isolation.level=read_committed (the last record per key):"
  kcat -C -b "127.0.0.1:$port" -t pv -e -q -X isolation.level=read_committed -f '%k\t%s\n' |
    awk -F'\t' '{ last[$1] = $2 } END { for (k in last) print k "\t" last[k] }' | sort -V >"$work/pv.txt"
  cat "$work/pv.txt"
  total=$(sed -n 's/.*"pv":\([0-9]*\).*/\1/p' "$work/pv.txt" | awk '{ s += $1 } END { print s + 0 }')
  echo "$(wc -l <"$work/pv.txt") apps, $total clicks"
  if [ "$total" != "$clicks" ]; then
    echo "the committed counts add up to $total clicks, not $clicks" >&2
    exit 1
  fi
fi
