package filesystem_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/filesystem"
	"github.com/streamsql/streamsql/connectors/internal/conntest"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// Lines longer than the read buffer, CRLF line ends and a last line
// without a newline are read whole.
func TestLongLinesAndLineEnds(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", 1<<20)
	content := fmt.Sprintf("1,%s\r\n2,b\r\n3,c", long)
	if err := os.WriteFile(filepath.Join(dir, "a.csv"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	schema := types.Schema{{Name: "id", Type: types.IntType}, {Name: "s", Type: types.StringType}}
	src, err := registry.Source(filesystem.Name, exec.TableSpec{
		Table: "t", Schema: schema, Parallelism: 1, BatchSize: 2, Mem: memory.DefaultAllocator,
		Options: map[string]string{"path": dir, "format": "csv"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := src.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines, batches, err := conntest.Drain(context.Background(), src, schema)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"+I[1, " + long + "]", "+I[2, b]", "+I[3, c]"}
	if len(lines) != 3 || batches != 2 {
		t.Fatalf("got %d rows in %d batches", len(lines), batches)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("row %d: got %.40q, want %.40q", i, lines[i], want[i])
		}
	}
}
