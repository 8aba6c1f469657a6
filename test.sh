#!/usr/bin/env bash
# The project's test command (README: "Run all tests"). It needs only Go;
# the conformance suites are read from ../shared/conformance when present.
set -euo pipefail
cd "$(dirname "$0")"
go vet ./...
go test -count=1 ./...
# Short fuzzing of the parser and planner (coverage-guided, seeds in testdata).
go test -run '^$' -fuzz '^FuzzParse$' -fuzztime 15s ./sql
go test -run '^$' -fuzz '^FuzzPlan$' -fuzztime 15s ./session
# The example job end to end through the binary.
go build -o ./streamsql ./cmd/streamsql
./streamsql --data-dir "$(mktemp -d)" -f examples/quickstart.sql > /dev/null
echo "all tests passed"
