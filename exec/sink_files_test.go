package exec

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/state"
)

// TestSinkFiles: the files a FileCheckpointingSink wrote into its
// directory of a checkpoint are described for the metadata with sizes and
// checksums that the restore's verification (state.VerifyCheckpoint)
// accepts, and refuses once a file changed; a sink that wrote nothing has
// no directory in the checkpoint.
func TestSinkFiles(t *testing.T) {
	root := t.TempDir()
	cp := &snapshotContext{id: 3, dir: root, rel: "sink-0"}
	st, err := sinkFiles(checkpoint.SubtaskState{Inline: []byte("h")}, cp)
	if err != nil || st.Dir != "" || len(st.Files) != 0 {
		t.Fatalf("no files written: got %+v, %v; want no directory", st, err)
	}
	dir := filepath.Join(root, "sink-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"rows-0-1.arrow": "first checkpoint's rows", "rows-0-3.arrow": "third"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if st, err = sinkFiles(checkpoint.SubtaskState{Inline: []byte("h")}, cp); err != nil {
		t.Fatal(err)
	}
	if st.Dir != "sink-0" || len(st.Files) != 2 || st.Size != int64(len("first checkpoint's rows")+len("third")) || string(st.Inline) != "h" {
		t.Fatalf("got %+v", st)
	}
	sums := make([]state.FileSum, len(st.Files))
	for i, f := range st.Files {
		sums[i] = state.FileSum(f)
	}
	if err := state.VerifyCheckpoint(dir, sums); err != nil {
		t.Fatalf("the restore's verification refuses what the checkpoint recorded: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rows-0-3.arrow"), []byte("thirD"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := state.VerifyCheckpoint(dir, sums); err == nil {
		t.Fatal("a changed file passes the verification")
	}
}
