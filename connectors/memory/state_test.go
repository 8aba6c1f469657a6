package memory

import (
	"testing"

	"github.com/streamsql/streamsql/connectors/internal/statecodec"
)

// TestStateGolden: the source's snapshot and the sink's commit handle of
// version 1 decode to what they were written from, and this build still
// encodes those values to the same bytes. When this fails, bump the
// encoding's version and keep reading the old one.
func TestStateGolden(t *testing.T) {
	statecodec.CheckGolden(t, "testdata/state/source.v1.hex", encodePos(1234),
		func(b []byte) (any, error) { return decodePos("t", b) }, 1234)
	body := encodePos(1234)[2:]
	statecodec.CheckRefused(t, "memory table t", func(b []byte) error { _, err := decodePos("t", b); return err },
		append(statecodec.Refusals(snapshotVersion, body),
			statecodec.Refusal{Name: "empty position", State: encodePos(0)[:2], Want: "bad batch position"},
			statecodec.Refusal{Name: "trailing bytes", State: append(encodePos(3), 0), Want: "1 bytes after the position"}))

	want := handle{File: "0-7-18d2f3a4b5c6.arrow"}
	enc, err := encodeHandle(want)
	if err != nil {
		t.Fatal(err)
	}
	statecodec.CheckGolden(t, "testdata/state/handle.v1.hex", enc,
		func(b []byte) (any, error) { return decodeHandle("t", b) }, want)
	statecodec.CheckRefused(t, "memory table t (sink)", func(b []byte) error { _, err := decodeHandle("t", b); return err },
		append(statecodec.Refusals(handleVersion, enc[2:]),
			statecodec.Refusal{Name: "unknown field", State: append(enc[:2:2], `{"File":"x","Rows":3}`...), Want: `unknown field "Rows"`},
			statecodec.Refusal{Name: "field of another type", State: append(enc[:2:2], `{"File":3}`...), Want: "handle.File of type string"},
			statecodec.Refusal{Name: "trailing bytes", State: append(enc[:2:2], `{"File":"x"} {}`...), Want: "trailing bytes"}))
}
