package session

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRepoSetsOnlyKnownKeys reads the repository's SQL (examples, .slt
// suites, SQL in Go tests and commands) for SET and RESET of quoted keys:
// every one must be an option SET accepts, and every literal value one the
// option takes (unless the suite expects the statement to fail). A key
// added anywhere must be defined as well, or SET refuses it.
func TestRepoSetsOnlyKnownKeys(t *testing.T) {
	re := regexp.MustCompile(`(?i)\b(?:SET|RESET)\s+'([a-z0-9_.-]+)'\s*(=|;|'|"|\n|$)`)
	valueRe := regexp.MustCompile(`(?i)\bSET\s+'([a-z0-9_.-]+)'\s*=\s*'([^'\n]*)'`)
	values := 0
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
		text := string(data)
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			if placeholders[m[1]] {
				continue
			}
			seen++
			if _, err := optionKey(m[1]); err != nil {
				t.Errorf("%s: %v", rel, err)
			}
		}
		// The values too, where they are literal: a SET that a suite
		// expects to fail says so in the line before ("statement error").
		for _, m := range valueRe.FindAllStringSubmatchIndex(text, -1) {
			key, value := text[m[2]:m[3]], text[m[4]:m[5]]
			if placeholders[key] || strings.ContainsAny(value, "%`\"+${") {
				continue
			}
			before := strings.TrimRight(text[:m[0]], " \t\n")
			if nl := strings.LastIndexByte(before, '\n'); strings.HasPrefix(strings.TrimSpace(before[nl+1:]), "statement error") {
				continue
			}
			values++
			if _, err := checkOption(key, value); err != nil {
				t.Errorf("%s: %v", rel, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d SETs, %d with literal values", seen, values)
	if seen < 50 || values < 50 {
		t.Fatalf("found only %d SETs (%d with literal values) in the repository: is the pattern still right?", seen, values)
	}
}

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/OPTIONS.md from the options' definitions")

// TestOptionsDoc: docs/OPTIONS.md is what the options' definitions say.
func TestOptionsDoc(t *testing.T) {
	const path = "../docs/OPTIONS.md"
	want := OptionsMarkdown()
	if *updateDocs {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s is not what the options' definitions say: run go test ./session -run TestOptionsDoc -update-docs", path)
	}
}

// TestEveryOptionHasABadValueCase: testdata/option_values gives a bad
// value of every option whose values are constrained, so each option's
// message is shown there.
func TestEveryOptionHasABadValueCase(t *testing.T) {
	data, err := os.ReadFile("testdata/option_values")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	defs := append(OptionDefs(), tableDefs()...)
	for _, d := range defs {
		if d.Allowed() == "any text" {
			continue
		}
		if !strings.Contains(text, "'"+d.Key()+"' = '") {
			t.Errorf("testdata/option_values gives no bad value of '%s'", d.Key())
		}
	}
}

// TestOptionKeysUnique: no key is defined twice (by two scopes, say), and
// no alias or refused key is also an option.
func TestOptionKeysUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range append(OptionDefs(), tableDefs()...) {
		if seen[d.Key()] {
			t.Errorf("option '%s' is defined twice", d.Key())
		}
		seen[d.Key()] = true
	}
	for k := range aliases {
		if seen[k] {
			t.Errorf("'%s' is an option and an alias", k)
		}
	}
	for k := range refused {
		if seen[k] {
			t.Errorf("'%s' is an option and refused", k)
		}
	}
}
