package layering

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/streamsql/streamsql/"

// row is one line of DESIGN.md's package table: a package (or a tree of
// them, "connectors/") and the packages of ours it may import.
type row struct {
	prefix string
	may    []string
	any    bool // "everything below"
}

var backticked = regexp.MustCompile("`([^`]+)`")

// table reads the package table of docs/DESIGN.md.
func table(t *testing.T, root string) []row {
	f, err := os.Open(filepath.Join(root, "docs", "DESIGN.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []row
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "| package |") {
			in = true
			continue
		}
		if !in || strings.HasPrefix(line, "|---") {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 3 {
			t.Fatalf("DESIGN.md: a row of the package table without 3 cells: %s", line)
		}
		may := cells[2]
		var r row
		r.any = strings.Contains(may, "everything below")
		for _, m := range backticked.FindAllStringSubmatch(may, -1) {
			r.may = append(r.may, strings.TrimSuffix(m[1], "/"))
		}
		// A row may name several packages: `tests/crash/`, `tests/kafka/`.
		for _, m := range backticked.FindAllStringSubmatch(cells[0], -1) {
			r.prefix = m[1]
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		t.Fatal("DESIGN.md: no package table")
	}
	return rows
}

type pkg struct {
	ImportPath                         string
	Imports, TestImports, XTestImports []string
	GoFiles                            []string
}

// TestImportsMatchDesign: every package's imports of ours are among those
// its row of the table allows (tests/ packages: their tests' imports),
// besides packages of its own tree.
func TestImportsMatchDesign(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	rows := table(t, root)
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	checked := 0
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(p.ImportPath, module)
		var r *row
		for i := range rows {
			pre := strings.TrimSuffix(rows[i].prefix, "/")
			if (rel == pre || strings.HasPrefix(rel, pre+"/")) && (r == nil || len(pre) > len(strings.TrimSuffix(r.prefix, "/"))) {
				r = &rows[i]
			}
		}
		if r == nil {
			t.Errorf("package %s has no row in DESIGN.md's package table", rel)
			continue
		}
		if r.any {
			continue
		}
		imports := p.Imports
		if strings.HasPrefix(rel, "tests/") {
			imports = append(slices.Clone(p.TestImports), p.XTestImports...)
		}
		tree := strings.TrimSuffix(r.prefix, "/")
		for _, imp := range imports {
			dep, ours := strings.CutPrefix(imp, module)
			if !ours || dep == tree || strings.HasPrefix(dep, tree+"/") {
				continue
			}
			if !slices.Contains(r.may, dep) {
				t.Errorf("%s imports %s, which DESIGN.md's row for %s does not allow (it says: %s)", rel, dep, r.prefix, strings.Join(r.may, ", "))
			}
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("checked only %d packages", checked)
	}
}
