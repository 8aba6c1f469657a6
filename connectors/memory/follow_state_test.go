package memory

import (
	"testing"

	"github.com/streamsql/streamsql/connectors/internal/statecodec"
)

// TestFollowStateGolden: a follower's position of version 2 decodes to
// what it was written from, this build encodes it to the same bytes, and a
// snapshot scan's position (version 1) is refused.
func TestFollowStateGolden(t *testing.T) {
	p := followPos{seq: 7, batch: 2, row: 3, inLog: true, next: 9, part: 1, prow: 4}
	decode := func(b []byte) (any, error) { return decodeFollow("t", b) }
	statecodec.CheckGolden(t, "testdata/state/follow.v2.hex", encodeFollow(p), decode, p)
	enc := encodeFollow(p)
	statecodec.CheckRefused(t, "memory table t (followed)", func(b []byte) error { _, err := decodeFollow("t", b); return err },
		append(statecodec.Refusals(followVersion, enc[2:]),
			statecodec.Refusal{Name: "a snapshot scan's position", State: encodePos(3), Want: "version 1"},
			statecodec.Refusal{Name: "short", State: enc[:len(enc)-1], Want: "bad position"},
			statecodec.Refusal{Name: "trailing bytes", State: append(encodeFollow(p), 0), Want: "bad position"}))
}
