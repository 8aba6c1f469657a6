#!/usr/bin/env bash
# The project's test command (README: "Run all tests"). It needs Go, Java 17
# and Maven (for the Apache Kafka broker), curl (for the S3 server's script), and installs kcat, chromium and PostgreSQL from
# Debian if missing; the conformance suites are read from
# ../shared/conformance.
set -euo pipefail
cd "$(dirname "$0")"
# kcat (librdkafka) is the independent Kafka client the Kafka tests check
# results with; install it from Debian when missing.
if ! command -v kcat >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq kcat >/dev/null
fi
# Chromium (headless) is the browser tests/server drives the web UI in;
# install it from Debian when missing.
if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium >/dev/null
fi
# PostgreSQL is the server the jdbc connector's tests write to (each test
# binary that needs one starts its own with scripts/postgres.sh, which runs
# Debian's initdb and pg_ctl); install it from Debian when missing.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
fi
scripts/postgres.sh resolve
# The Kafka tests run against kafka-dev and, with STREAMSQL_TEST_KAFKA=apache,
# against Apache Kafka 4.4 too (each test binary starts a broker of its own
# with scripts/apache-kafka.sh when first needed and stops it at exit). The
# broker needs Java 17 and Maven; its jars are resolved once from Maven
# Central into ~/.cache/streamsql.
for tool in java mvn; do
  command -v "$tool" >/dev/null 2>&1 || { echo "test.sh: $tool is needed for the Apache Kafka runs of the Kafka tests" >&2; exit 1; }
done
scripts/apache-kafka.sh resolve
# The tests of checkpoints on object storage run against an S3-compatible
# server (versitygw, scripts/s3-server.sh), installed once with go install
# into ~/.cache/streamsql; each test binary that needs it starts its own.
scripts/s3-server.sh resolve
# The avro-confluent tests run against a Confluent-compatible schema
# registry (Apicurio Registry, scripts/schema-registry.sh), built once with
# Maven from Maven Central into ~/.cache/streamsql; each test binary that
# needs it starts its own.
scripts/schema-registry.sh resolve
go vet ./...
# The crash and Kafka packages run many engine processes each: on a busy
# 2-core machine one package can take longer than go test's default
# 10-minute limit per package binary, so the limit is the whole run's.
STREAMSQL_TEST_KAFKA=apache go test -count=1 -timeout 40m ./...
# The race detector over the packages whose goroutines share state: the
# stores (a checkpoint written on its own goroutine while the subtask
# writes on), the checkpoint coordinator and the server.
go test -race -count=1 -timeout 20m ./state ./checkpoint ./server
# Short fuzzing of the parser and planner (coverage-guided, seeds in
# testdata), bounded by a count of inputs rather than a time: a time limit
# can end while a worker is busy, which Go's fuzzer reports as a failure
# ("context deadline exceeded") though no input failed.
go test -run '^$' -fuzz '^FuzzParse$' -fuzztime 100000x ./sql
go test -run '^$' -fuzz '^FuzzPlan$' -fuzztime 15000x ./session
# The examples end to end through the binary (the page-view one on a
# kafka-dev broker of its own, on a port that is free here).
go build -o ./streamsql ./cmd/streamsql
./streamsql --data-dir "$(mktemp -d)" -f examples/quickstart.sql > /dev/null
./streamsql --data-dir "$(mktemp -d)" -f examples/windows.sql > /dev/null
KAFKA_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 19092) \
  STREAMSQL=./streamsql examples/pageviews.sh > /dev/null
# The same on Apache Kafka (KAFKA=apache), on a free port whose next port
# (the controller's) is free too.
KAFKA=apache KAFKA_PORT=$(python3 -c '
import socket
for _ in range(50):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]
    t = socket.socket()
    try:
        t.bind(("127.0.0.1", p + 1)); print(p); break
    except OSError:
        pass
') STREAMSQL=./streamsql examples/pageviews.sh > /dev/null
echo "all tests passed"
