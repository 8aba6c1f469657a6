package kafka

import (
	"testing"

	"github.com/streamsql/streamsql/connectors/internal/statecodec"
)

// TestStateGolden: the source's snapshot (with upsert state) and the
// sink's commit handles (exactly-once, with transactions; at-least-once,
// the topic id only) of version 1 decode to what they were written from,
// and this build still encodes those values to the same bytes. When this
// fails, bump the encoding's version and keep reading the old one.
func TestStateGolden(t *testing.T) {
	end := int64(100)
	snap := snapshot{
		Partitions: []snapPart{
			{Topic: "in", Partition: 0, Next: 42, End: &end},
			{Topic: "in", Partition: 1, Next: 7, Upsert: encodeUpsert(map[string][]byte{"k1": []byte("v1"), "k2": nil})},
		},
		Skipped: 2, Tombstones: 1, TopicIDs: map[string]string{"in": "AAECAwQFBgcICQoLDA0ODw"},
	}
	enc, err := statecodec.EncodeJSON(snapshotVersion, snap)
	if err != nil {
		t.Fatal(err)
	}
	const srcOwner = "kafka table t (source)"
	statecodec.CheckGolden(t, "testdata/state/source.v1.hex", enc,
		func(b []byte) (any, error) { return decodeSnapshot(srcOwner, b) }, snap)
	statecodec.CheckRefused(t, srcOwner, func(b []byte) error { _, err := decodeSnapshot(srcOwner, b); return err },
		append(statecodec.Refusals(snapshotVersion, enc[2:]),
			statecodec.Refusal{Name: "unknown field", State: append(enc[:2:2], `{"partitions":[{"topic":"in","partition":0,"next":1,"leader_epoch":3}]}`...), Want: `unknown field "leader_epoch"`},
			statecodec.Refusal{Name: "field of another type", State: append(enc[:2:2], `{"partitions":[{"topic":"in","partition":"0","next":1}]}`...), Want: "partition of type int32"}))

	const sinkOwner = "kafka table t (sink)"
	for _, c := range []struct {
		file string
		h    handle
	}{
		{"testdata/state/handle-exactly-once.v1.hex", handle{Prefix: "job-op3", Subtask: 1, Parallelism: 2, Next: 1718000000124,
			Txns:    []ref{{ID: "job-op3-1-1718000000122", Seq: 1718000000122, ProducerID: 4711, Epoch: 3}, {ID: "job-op3-1-1718000000123", Seq: 1718000000123, ProducerID: 4712}},
			TopicID: "AAECAwQFBgcICQoLDA0ODw"}},
		{"testdata/state/handle-at-least-once.v1.hex", handle{Subtask: 0, TopicID: "AAECAwQFBgcICQoLDA0ODw"}},
	} {
		enc, err := encodeHandle(c.h)
		if err != nil {
			t.Fatal(err)
		}
		statecodec.CheckGolden(t, c.file, enc, func(b []byte) (any, error) { return decodeHandle(sinkOwner, b) }, c.h)
		statecodec.CheckRefused(t, sinkOwner, func(b []byte) error { _, err := decodeHandle(sinkOwner, b); return err },
			append(statecodec.Refusals(handleVersion, enc[2:]),
				statecodec.Refusal{Name: "unknown field", State: append(enc[:2:2], `{"subtask":0,"txn_timeout":60000}`...), Want: `unknown field "txn_timeout"`}))
	}
}
