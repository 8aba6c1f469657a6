#!/usr/bin/env bash
# Resident memory of a long-running 1M-key GROUP BY on Pebble (job.sql),
# sampled every 30 s: does it level off?
#
#   bench/rss/run.sh [STREAMSQL_BINARY] [SECONDS]   (defaults: ./streamsql, 1800)
#
# Prints "seconds rss_mib data_dir_mib" per sample; the data dir is a
# temporary one, removed at the end.
set -euo pipefail
bin=${1:-./streamsql}
secs=${2:-1800}
dir=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
"$bin" --data-dir "$dir/data" -f "$(dirname "$0")/job.sql" > "$dir/job.log" 2>&1 &
pid=$!
echo "seconds rss_mib data_dir_mib"
for ((t = 30; t <= secs; t += 30)); do
  sleep 30
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "the job's process ended early:" >&2; cat "$dir/job.log" >&2; exit 1
  fi
  rss=$(awk '/VmRSS/ { print int($2 / 1024) }' "/proc/$pid/status")
  echo "$t $rss $(du -sm "$dir/data" | cut -f1)"
done
