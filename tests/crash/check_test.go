package crash

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The checkers must catch what they are there to catch: these tests feed
// them small hand-written sink directories.

func writeParts(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func create(k, c, s int64) string {
	return fmt.Sprintf(`{"before":null,"after":{"k":%d,"c":%d,"s":%d},"op":"c"}`+"\n", k, c, s)
}

func remove(k, c, s int64) string {
	return fmt.Sprintf(`{"before":{"k":%d,"c":%d,"s":%d},"after":null,"op":"d"}`+"\n", k, c, s)
}

// firstRows is the changelog of ids 1..n for n <= 1000: one create per id.
func firstRows(n int64) string {
	var b strings.Builder
	for id := int64(1); id <= n; id++ {
		b.WriteString(create(id%1000, 1, id))
	}
	return b.String()
}

func TestCommittedPartsOrder(t *testing.T) {
	dir := writeParts(t, map[string]string{
		"part-0-10.json": "", "part-0-9.json": "", "part-1-0.json": "", "part-0-0.json": "",
		".part-0-11.json.inprogress": "", "_SUCCESS": "",
	})
	parts, err := committedParts(dir, ".json")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range parts {
		names = append(names, p.name)
	}
	if got, want := strings.Join(names, " "), "part-0-0.json part-0-9.json part-0-10.json part-1-0.json"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if _, err := committedParts(writeParts(t, map[string]string{"part-0-x.json": ""}), ".json"); err == nil {
		t.Error("a file that is not a part file was accepted")
	}
}

func TestCheckAgg(t *testing.T) {
	// ids 1..3: k = id itself; id 1001 would fold into k = 1.
	good := create(1, 1, 1) + create(2, 1, 2) + create(3, 1, 3)
	if err := checkAgg(writeParts(t, map[string]string{"part-0-0.json": good}), 3); err != nil {
		t.Errorf("exact changelog rejected: %v", err)
	}
	// The update of k=1 split over two files, in part-number order.
	split := map[string]string{
		"part-0-9.json":  firstRows(1000),
		"part-0-10.json": remove(1, 1, 1) + create(1, 2, 1002),
	}
	if err := checkAgg(writeParts(t, split), 1001); err != nil {
		t.Errorf("changelog over two files rejected: %v", err)
	}
	for name, c := range map[string]struct {
		files map[string]string
		want  string
	}{
		"duplicate":        {map[string]string{"part-0-0.json": good + create(3, 1, 3)}, "(k=3, c=1, s=3): want 1, got 2"},
		"missing":          {map[string]string{"part-0-0.json": create(1, 1, 1) + create(2, 1, 2)}, "(k=3, c=1, s=3): want 1, got 0"},
		"retraction first": {map[string]string{"part-0-0.json": remove(1, 1, 1) + good}, "part-0-0.json:1: retraction of (k=1, c=1, s=1)"},
		"replayed update": {map[string]string{"part-0-0.json": good + remove(1, 1, 1) + create(1, 2, 1002) + remove(1, 1, 1)},
			"part-0-0.json:6: retraction of (k=1, c=1, s=1), which is not in the table"},
		"bad line": {map[string]string{"part-0-0.json": good + "{oops\n"}, "part-0-0.json:4:"},
	} {
		err := checkAgg(writeParts(t, c.files), 3)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", name, err, c.want)
		}
	}
}

func TestParserFieldOrder(t *testing.T) {
	// Other field orders go through encoding/json.
	line := `{"op":"c","after":{"s":5,"c":1,"k":5},"before":null}` + "\n"
	if err := checkAgg(writeParts(t, map[string]string{"part-0-0.json": line}), 0); err == nil || !strings.Contains(err.Error(), "(k=5, c=1, s=5): want 0, got 1") {
		t.Errorf("got %v", err)
	}
}

func TestCheckAggFinal(t *testing.T) {
	// A replayed update: wrong as a changelog, right as final values.
	replayed := firstRows(1000) + remove(1, 1, 1) + create(1, 2, 1002) + remove(1, 1, 1) + create(1, 2, 1002)
	dir := writeParts(t, map[string]string{"part-0-0.json": replayed})
	if err := checkAggFinal(dir, 1001); err != nil {
		t.Errorf("final values rejected: %v", err)
	}
	if err := checkAgg(dir, 1001); err == nil {
		t.Error("a replayed update passed the exact check")
	}
	if err := checkAggFinal(dir, 1002); err == nil {
		t.Error("wrong final values accepted")
	}
}

func TestCheckIDs(t *testing.T) {
	ok := map[string]string{"part-0-0.csv": "1\n2\n", "part-1-0.csv": "3\n", ".part-1-1.csv.inprogress": "3\n"}
	if err := checkIDs(writeParts(t, ok), 3, false); err != nil {
		t.Errorf("exact ids rejected: %v", err)
	}
	for name, c := range map[string]struct {
		files       map[string]string
		dupsAllowed bool
		want        string
	}{
		"missing":      {map[string]string{"part-0-0.csv": "1\n3\n"}, true, "1 ids missing (first: [2])"},
		"duplicate":    {map[string]string{"part-0-0.csv": "1\n2\n3\n", "part-0-1.csv": "2\n"}, false, "1 ids more than once (first: [2])"},
		"out of range": {map[string]string{"part-0-0.csv": "1\n2\n4\n"}, false, "part-0-0.csv:3: not an id"},
	} {
		err := checkIDs(writeParts(t, c.files), 3, c.dupsAllowed)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", name, err, c.want)
		}
	}
	if err := checkIDs(writeParts(t, map[string]string{"part-0-0.csv": "1\n2\n3\n2\n"}), 3, true); err != nil {
		t.Errorf("a duplicate was rejected with duplicates allowed: %v", err)
	}
}
