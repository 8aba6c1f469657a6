package session

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRepoSetsOnlyKnownKeys reads the repository's SQL (examples, .slt
// suites, SQL in Go tests and commands) for SET and RESET of quoted keys:
// every one must be an option SET accepts. A key added anywhere must be
// added to options as well, or SET refuses it.
func TestRepoSetsOnlyKnownKeys(t *testing.T) {
	re := regexp.MustCompile(`(?i)\b(?:SET|RESET)\s+'([a-z0-9_.-]+)'\s*(=|;|'|"|\n|$)`)
	// Deliberately unknown keys: the refusals' own suite, and the parser's
	// and shell's placeholders.
	skip := map[string]bool{"tests/sqllogic/testdata/options.slt": true}
	placeholders := map[string]bool{"k": true, "key": true}
	seen := 0
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, "../"))
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && path != ".." {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(path)
		if skip[rel] || (ext != ".go" && ext != ".slt" && ext != ".sql" && ext != ".test") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			if placeholders[m[1]] {
				continue
			}
			seen++
			if _, err := optionKey(m[1]); err != nil {
				t.Errorf("%s: %v", rel, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 50 {
		t.Fatalf("found only %d SETs in the repository: is the pattern still right?", seen)
	}
}
