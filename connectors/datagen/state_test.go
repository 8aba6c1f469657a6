package datagen

import (
	"testing"

	"github.com/streamsql/streamsql/connectors/internal/statecodec"
)

// TestSnapshotGolden: the snapshot of version 1 decodes to its splits, and
// this build still encodes those splits to the same bytes. When this
// fails, bump snapshotVersion and keep reading the old one.
func TestSnapshotGolden(t *testing.T) {
	want := []split{{origin: 0, step: 3, done: 1000}, {origin: 1, step: 3, done: 999}, {origin: 2, step: 3, done: 0}}
	decode := func(b []byte) (any, error) { return decodeSplits("gen", b) }
	statecodec.CheckGolden(t, "testdata/state/snapshot.v1.hex", encodeSplits(want), decode, want)

	body := encodeSplits(want)[2:]
	statecodec.CheckRefused(t, "datagen table gen", func(b []byte) error { _, err := decodeSplits("gen", b); return err },
		append(statecodec.Refusals(snapshotVersion, body),
			statecodec.Refusal{Name: "truncated", State: encodeSplits(want)[:8], Want: "truncated"},
			statecodec.Refusal{Name: "trailing bytes", State: append(encodeSplits(want), 1), Want: "1 bytes after the splits"},
			statecodec.Refusal{Name: "step 0", State: encodeSplits([]split{{origin: 1}}), Want: "step 0"},
			// The format before versions: a first byte 2, then the splits.
			statecodec.Refusal{Name: "unversioned", State: append([]byte{2}, body...), Want: "without a format header"},
		))
}
