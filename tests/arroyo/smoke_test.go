package arroyo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/sql"
)

// floor lists the smoke queries whose output must match the golden output
// exactly: it only grows, so a regression fails the build. The other
// queries of the suite run too and report how they fare.
var floor = []string{
	"grouped_aggregates",
	"session_window",
	"sliding_window_end",
	"updating_inner_join",
}

func TestSmoke(t *testing.T) {
	root := filepath.Join(testenv.ConformanceDir(t), "arroyo-smoke")
	queries, err := filepath.Glob(filepath.Join(root, "queries", "*.sql"))
	if err != nil || len(queries) == 0 {
		t.Fatalf("no smoke queries under %s: %v", root, err)
	}
	for _, name := range floor {
		if !slices.Contains(queries, filepath.Join(root, "queries", name+".sql")) {
			t.Errorf("smoke query %s is missing from %s", name, root)
		}
	}
	for _, q := range queries {
		name := strings.TrimSuffix(filepath.Base(q), ".sql")
		t.Run(name, func(t *testing.T) {
			diffs, err := runSmoke(t, root, name)
			if err == nil && len(diffs) == 0 {
				return
			}
			report := t.Logf
			if slices.Contains(floor, name) {
				report = t.Errorf
			}
			if err != nil {
				report("%s: %v", name, err)
				return
			}
			report("%s: the output differs from the golden output:\n%s", name, strings.Join(diffs, "\n"))
		})
	}
}

// runSmoke runs queries/<name>.sql on a fresh session and compares its
// sink's rows with golden_outputs/<name>.json.
func runSmoke(t *testing.T, root, name string) ([]string, error) {
	text, err := os.ReadFile(filepath.Join(root, "queries", name+".sql"))
	if err != nil {
		return nil, err
	}
	out := filepath.Join(t.TempDir(), "out")
	script := strings.ReplaceAll(string(text), "$input_dir", filepath.Join(root, "inputs"))
	script = strings.ReplaceAll(script, "$output_path", out)
	stmts, err := sql.Parse(script)
	if err != nil {
		return nil, err
	}
	s, err := session.Open(t.TempDir())
	if err != nil {
		return nil, err
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := s.Execute(ctx, "SET 'table.dml-sync' = 'true'"); err != nil {
		return nil, err
	}
	for _, st := range stmts {
		if ct, ok := st.(*sql.CreateTable); ok {
			mapSingleFile(ct)
		}
		if _, err := s.ExecuteStatement(ctx, st); err != nil {
			return nil, err
		}
	}
	if err := s.WaitJobs(ctx); err != nil {
		return nil, err
	}
	got, err := readRows(out)
	if err != nil {
		return nil, err
	}
	want, err := readRows(filepath.Join(root, "golden_outputs", name+".json"))
	if err != nil {
		return nil, err
	}
	return compareRows(got, want), nil
}

// mapSingleFile makes a table of Arroyo's 'single_file' connector a
// 'filesystem' table: same path and format (Arroyo's 'debezium_json' is
// 'debezium-json'), without 'type'.
func mapSingleFile(ct *sql.CreateTable) {
	single := false
	for _, o := range ct.Options {
		if o.Key == "connector" && o.Value == "single_file" {
			single = true
		}
	}
	if !single {
		return
	}
	var opts []sql.Option
	for _, o := range ct.Options {
		switch o.Key {
		case "connector":
			o.Value = "filesystem"
		case "format":
			if o.Value == "debezium_json" {
				o.Value = "debezium-json"
			}
		case "type":
			continue
		}
		opts = append(opts, o)
	}
	ct.Options = opts
}

// readRows reads the JSON rows of a file, or of every part file of a
// directory (a filesystem sink's output), normalized by normalizeRow.
func readRows(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	files := []string{path}
	if st.IsDir() {
		if files, err = filepath.Glob(filepath.Join(path, "part-*")); err != nil {
			return nil, err
		}
	}
	var rows []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			r, err := normalizeRow(line)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", f, n, err)
			}
			rows = append(rows, r)
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// normalizeRow returns a JSON object's canonical text: keys in order (as
// Arroyo's check does), numbers as written, and strings that are
// timestamps as RFC 3339 instants in UTC.
func normalizeRow(line string) (string, error) {
	d := json.NewDecoder(strings.NewReader(line))
	d.UseNumber()
	var row map[string]any
	if err := d.Decode(&row); err != nil {
		return "", err
	}
	if row == nil {
		return "", fmt.Errorf("not a JSON object: %s", line)
	}
	for k, v := range row {
		if s, ok := v.(string); ok {
			if ts, ok := parseTimestamp(s); ok {
				row[k] = ts.UTC().Format(time.RFC3339Nano)
			}
		}
	}
	b, err := json.Marshal(row) // sorts the keys
	return string(b), err
}

// timestampLayouts are the timestamp texts of Arroyo's JSON and of the
// engine's (SQL form), with or without a zone.
var timestampLayouts = []string{
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
}

func parseTimestamp(s string) (time.Time, bool) {
	for _, l := range timestampLayouts {
		if ts, err := time.Parse(l, s); err == nil {
			return ts, true
		}
	}
	return time.Time{}, false
}

// compareRows compares two multisets of normalized rows and describes each
// row missing from got or extra in it; nil when they are equal.
func compareRows(got, want []string) []string {
	count := map[string]int{}
	for _, r := range want {
		count[r]++
	}
	for _, r := range got {
		count[r]--
	}
	var diffs []string
	for r, n := range count {
		for ; n > 0; n-- {
			diffs = append(diffs, "missing: "+r)
		}
		for ; n < 0; n++ {
			diffs = append(diffs, "extra:   "+r)
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		diffs = append(diffs, fmt.Sprintf("(%d rows, want %d)", len(got), len(want)))
	}
	return diffs
}

// TestCompareRows checks the comparison itself: key order and timestamp
// text do not matter; a missing, extra, duplicated or changed row does.
func TestCompareRows(t *testing.T) {
	norm := func(lines ...string) []string {
		var out []string
		for _, l := range lines {
			r, err := normalizeRow(l)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	want := norm(`{"end":"2023-10-09T17:13:41","rows":1,"start":"2023-10-09T17:13:21","user_id":5}`,
		`{"end":"2023-10-09T17:13:40.200","rows":1,"start":"2023-10-09T17:13:20.200","user_id":1}`)
	same := norm(`{"user_id":1,"start":"2023-10-09 17:13:20.200","end":"2023-10-09 17:13:40.2","rows":1}`,
		`{"start":"2023-10-09 17:13:21.000","end":"2023-10-09 17:13:41","rows":1,"user_id":5}`)
	if d := compareRows(same, want); d != nil {
		t.Errorf("equal rows reported different: %v", d)
	}
	for name, got := range map[string][]string{
		"missing": same[:1],
		"extra":   append(slices.Clone(same), same[0]),
		"changed": norm(`{"user_id":1,"start":"2023-10-09 17:13:20.200","end":"2023-10-09 17:13:40.2","rows":2}`,
			`{"start":"2023-10-09 17:13:21.000","end":"2023-10-09 17:13:41","rows":1,"user_id":5}`),
		"later": norm(`{"user_id":1,"start":"2023-10-09 17:13:20.201","end":"2023-10-09 17:13:40.2","rows":1}`,
			`{"start":"2023-10-09 17:13:21.000","end":"2023-10-09 17:13:41","rows":1,"user_id":5}`),
	} {
		if d := compareRows(got, want); d == nil {
			t.Errorf("%s: rows reported equal", name)
		}
	}
}
