package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeRaw writes a _metadata file of the given JSON body with a valid
// checksum line, as a build writing that version would.
func writeRaw(t *testing.T, dir, body string) {
	t.Helper()
	sum := sha256.Sum256([]byte(body))
	data := body + "\nsha256 " + hex.EncodeToString(sum[:]) + "\n"
	if err := os.WriteFile(filepath.Join(dir, MetadataFile), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMetadataVersions checks that the current version keeps every state
// file's size and checksum, that version 1 (which had none) is still read,
// and that a version from a newer build is refused with an error that says
// which versions this one reads.
func TestMetadataVersions(t *testing.T) {
	dir := t.TempDir()
	files := []FileSum{{Name: "000004.sst", Size: 1234, CRC32C: 0xdeadbeef}, {Name: "MANIFEST-000001", Size: 99, CRC32C: 7}}
	md := &Metadata{Job: "j", ID: 7, MaxParallelism: 128, Operators: []*OperatorState{
		{ID: "op", Name: "GroupAggregate", Parallelism: 1, Subtasks: []SubtaskState{{Dir: "op-0", Size: 1333, Files: files}}}}}
	if err := WriteMetadata(dir, md); err != nil {
		t.Fatal(err)
	}
	got, err := ReadMetadata(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != metadataVersion || !got.HasFileSums() || !reflect.DeepEqual(got.Operator("op").Subtasks[0].Files, files) {
		t.Fatalf("read back version %d, files %+v; want version %d with %+v", got.Version, got.Operator("op").Subtasks[0].Files, metadataVersion, files)
	}

	writeRaw(t, dir, `{"Version": 1, "Job": "j", "ID": 3, "MaxParallelism": 128,
  "Operators": [{"ID": "op", "Name": "GroupAggregate", "Parallelism": 1, "Subtasks": [{"Subtask": 0, "Dir": "op-0", "Size": 10}]}]}`)
	got, err = ReadMetadata(dir)
	if err != nil {
		t.Fatalf("version 1 metadata: %v", err)
	}
	if got.HasFileSums() || got.Operator("op").Subtasks[0].Dir != "op-0" {
		t.Fatalf("version 1 metadata read as %+v (file sums: %v)", got.Operator("op").Subtasks[0], got.HasFileSums())
	}

	writeRaw(t, dir, `{"Version": 5, "Job": "j", "ID": 4}`)
	_, err = ReadMetadata(dir)
	if !errors.Is(err, ErrUnsupportedVersion) || !strings.Contains(err.Error(), "version 5") || !strings.Contains(err.Error(), "versions 1 to 4") {
		t.Fatalf("version 4 metadata: %v; want ErrUnsupportedVersion saying which versions are read", err)
	}
}
