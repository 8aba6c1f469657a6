package filesystem

import (
	"testing"

	"github.com/streamsql/streamsql/connectors/internal/statecodec"
)

// TestStateGolden: the source's snapshot and the sink's commit handle of
// version 1 decode to what they were written from, and this build still
// encodes those values to the same bytes. When this fails, bump the
// encoding's version and keep reading the old one.
func TestStateGolden(t *testing.T) {
	pos := position{Index: 2, File: "b/part-0-10.csv", Offset: 4096, Line: 120, Skipped: 3,
		Resume: []filePos{{File: "c.csv", Offset: 10, Line: 1}, {File: "d.csv", Done: true}}}
	enc, err := statecodec.EncodeJSON(snapshotVersion, pos)
	if err != nil {
		t.Fatal(err)
	}
	statecodec.CheckGolden(t, "testdata/state/source.v1.hex", enc,
		func(b []byte) (any, error) { return decodePosition("t", b) }, pos)
	statecodec.CheckRefused(t, "filesystem table t (source)", func(b []byte) error { _, err := decodePosition("t", b); return err },
		append(statecodec.Refusals(snapshotVersion, enc[2:]),
			statecodec.Refusal{Name: "unknown field", State: append(enc[:2:2], `{"Index":1,"Partition":3}`...), Want: `unknown field "Partition"`},
			statecodec.Refusal{Name: "field of another type", State: append(enc[:2:2], `{"Offset":"10"}`...), Want: "position.Offset of type int64"}))

	h := handle{Files: []fileHandle{{Pending: ".part-0-3.csv.inprogress", Final: "part-0-3.csv"}, {Pending: ".part-0-4.csv.inprogress", Final: "part-0-4.csv"}}}
	enc, err = statecodec.EncodeJSON(handleVersion, h)
	if err != nil {
		t.Fatal(err)
	}
	statecodec.CheckGolden(t, "testdata/state/handle.v1.hex", enc,
		func(b []byte) (any, error) { return decodeHandle("t", b) }, h)
	statecodec.CheckRefused(t, "filesystem table t (sink)", func(b []byte) error { _, err := decodeHandle("t", b); return err },
		append(statecodec.Refusals(handleVersion, enc[2:]),
			statecodec.Refusal{Name: "unknown field", State: append(enc[:2:2], `{"files":[],"checkpoint":3}`...), Want: `unknown field "checkpoint"`}))
}
