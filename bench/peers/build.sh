#!/usr/bin/env bash
# Builds the Java peers (pom.xml here: every peer is a class of this one
# module) and prints the class path of one of them, target/classes and
# its resolved jars, on one line:
#
#   CP=$(bench/peers/build.sh kstreams) && java -cp "$CP" io.streamsql.bench.KStreamsCount ...
#
# PEER is kstreams (KStreamsCount), flink (FlinkSqlCount: kafka-clients
# 4.2.0, the profile flink-kafka; see pom.xml) or nexmark (NexmarkSql).
# Offline first; when something is missing from ~/.m2 (the first build on
# a machine), again with Maven Central, saying so on stderr. Maven's
# output goes to stderr only when a build fails; target/resolved-PEER says
# which it was (offline or online).
set -euo pipefail
cd "$(dirname "$0")"
peer=${1:?usage: build.sh kstreams|flink|nexmark}
# Kafka Streams' RocksDB (org.rocksdb:rocksdbjni) and Flink's
# (com.ververica:frocksdbjni) hold the same org.rocksdb classes: each
# class path leaves out the other's.
case $peer in
  kstreams) profile=() exclude=frocksdbjni ;;
  nexmark) profile=() exclude=rocksdbjni,kafka-streams ;;
  flink) profile=(-P flink-kafka) exclude=rocksdbjni,kafka-streams ;;
  *) echo "build.sh: unknown peer $peer (kstreams, flink or nexmark)" >&2; exit 2 ;;
esac
command -v mvn >/dev/null || { echo "Maven (mvn) is needed to build bench/peers" >&2; exit 1; }
args=(-B -q "${profile[@]}" compile dependency:build-classpath
  "-Dmdep.outputFile=target/classpath-$peer.txt" -Dmdep.includeScope=runtime
  "-DexcludeArtifactIds=$exclude")
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if mvn -o "${args[@]}" >"$log" 2>&1; then
  echo offline >"target/resolved-$peer"
else
  echo "bench/peers: resolving with Maven from Maven Central" >&2
  if ! mvn "${args[@]}" >"$log" 2>&1; then
    cat "$log" >&2
    exit 1
  fi
  echo online >"target/resolved-$peer"
fi
printf '%s:%s\n' "$PWD/target/classes" "$(cat "target/classpath-$peer.txt")"
