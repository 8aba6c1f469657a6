package nexmark

import (
	"testing"

	"github.com/streamsql/streamsql/connectors/internal/statecodec"
)

// TestSnapshotGolden: the snapshot of version 1 decodes to its splits, and
// this build still encodes those splits to the same bytes. When this
// fails, bump snapshotVersion and keep reading the old one.
func TestSnapshotGolden(t *testing.T) {
	want := []split{{next: 3000, step: 3, paceFrom: -1}, {next: 2998, step: 3, paceFrom: -1}, {next: 2, step: 3, paceFrom: -1}}
	decode := func(b []byte) (any, error) { return decodeSplits("nx", b) }
	statecodec.CheckGolden(t, "testdata/state/snapshot.v1.hex", encodeSplits(want), decode, want)

	body := encodeSplits(want)[2:]
	statecodec.CheckRefused(t, "nexmark table nx", func(b []byte) error { _, err := decodeSplits("nx", b); return err },
		append(statecodec.Refusals(snapshotVersion, body),
			statecodec.Refusal{Name: "truncated", State: encodeSplits(want)[:6], Want: "truncated"},
			statecodec.Refusal{Name: "trailing bytes", State: append(encodeSplits(want), 1), Want: "1 bytes after the splits"},
			statecodec.Refusal{Name: "step 0", State: encodeSplits([]split{{next: 1}}), Want: "step 0"},
		))
}
