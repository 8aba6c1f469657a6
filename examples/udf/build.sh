#!/bin/sh
# build.sh OUT_DIR: builds every example function here into OUT_DIR/NAME.wasm
# with the standard Go toolchain (GOOS=wasip1 GOARCH=wasm, a reactor module:
# -buildmode=c-shared).
set -eu
if [ $# -ne 1 ]; then
	echo "usage: $0 OUT_DIR" >&2
	exit 2
fi
out=$1
mkdir -p "$out"
out=$(cd "$out" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
for dir in */; do
	name=${dir%/}
	[ -f "$name/main.go" ] || continue
	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o "$out/$name.wasm" "./$name"
done
