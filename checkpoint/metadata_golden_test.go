package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// goldenMetadata is the value the golden _metadata files under
// testdata/metadata encode (version 1 without the file sums).
func goldenMetadata(version int) *Metadata {
	m := &Metadata{Version: version, Job: "orders_per_user", ID: 12, Triggered: time.Date(2026, 12, 1, 10, 30, 0, 0, time.UTC),
		Duration: 250 * time.Millisecond, MaxParallelism: 128, Operators: []*OperatorState{
			{ID: "3f9a1c", Name: "GroupAggregate", Parallelism: 2, Subtasks: []SubtaskState{
				{Subtask: 0, Dir: "3f9a1c-0", Size: 4096, IncrementalSize: 1024,
					Files: []FileSum{{Name: "000005.sst", Size: 4000, CRC32C: 0xdeadbeef}, {Name: "MANIFEST-000001", Size: 96, CRC32C: 7}}},
				{Subtask: 1},
			}},
			{ID: "a1b2c3", Name: "TableSourceScan", Parallelism: 1, Subtasks: []SubtaskState{{Subtask: 0, Inline: []byte{0xa7, 1, 2, 3}}}},
		}}
	if version == 1 {
		m.Operators[0].Subtasks[0].Files = nil
	}
	if version >= 3 {
		m.Owner = 4
	}
	if version >= 4 {
		m.Format, m.Backend = FormatNative, "pebble"
	}
	return m
}

// TestMetadataGolden: the golden _metadata of every version this build
// reads still decodes to the value it was written from, and the current
// version still encodes to its golden bytes. When this fails, the format
// changed: bump metadataVersion, keep reading the old one (its golden file
// stays and must still decode), and add the new version's golden file.
func TestMetadataGolden(t *testing.T) {
	for v := minMetadataVersion; v <= metadataVersion; v++ {
		dir := filepath.Join("testdata", "metadata", fmt.Sprintf("v%d", v))
		got, err := ReadMetadata(dir)
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		want := goldenMetadata(v)
		want.Dir = dir
		if !reflect.DeepEqual(got, want) {
			t.Errorf("version %d: golden _metadata decodes to\n%+v\nwant\n%+v", v, got, want)
		}
	}
	data, err := os.ReadFile(filepath.Join("testdata", "metadata", fmt.Sprintf("v%d", metadataVersion), MetadataFile))
	if err != nil {
		t.Fatal(err)
	}
	enc, err := encodeMetadata(goldenMetadata(metadataVersion))
	if err != nil {
		t.Fatal(err)
	}
	if string(enc) != string(data) {
		t.Errorf("version %d encodes differently from its golden file (bump metadataVersion and keep reading the old one):\n%s\nwant\n%s", metadataVersion, enc, data)
	}
}

// TestMetadataIncompatible: metadata of an unknown version, with a field
// this build does not know, or with a field of another type, is refused
// with ErrIncompatibleState saying what differs; it is never read with the
// field dropped or zero.
func TestMetadataIncompatible(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		body, want  string
		unsupported bool
	}{
		{`{"Version": 5, "Job": "j", "ID": 4, "Future": true}`, "version 5 (this streamsql reads versions 1 to 4", true},
		{`{"Version": 0, "Job": "j", "ID": 4}`, "version 0", true},
		{`{"Version": 2, "Job": "j", "ID": 4, "Watermarks": [1, 2]}`, `unknown field "Watermarks"`, false},
		{`{"Version": 2, "Job": "j", "ID": 4, "Operators": [{"ID": "op", "Subtasks": [{"Subtask": 0, "Epoch": 3}]}]}`, `unknown field "Epoch"`, false},
		{`{"Version": 2, "Job": "j", "ID": "four"}`, "Metadata.ID", false},
	} {
		writeRaw(t, dir, c.body)
		_, err := ReadMetadata(dir)
		if !errors.Is(err, ErrIncompatibleState) || !strings.Contains(err.Error(), c.want) || errors.Is(err, ErrUnsupportedVersion) != c.unsupported {
			t.Errorf("%s: got %v, want ErrIncompatibleState saying %q (ErrUnsupportedVersion: %v)", c.body, err, c.want, c.unsupported)
		}
	}
}
