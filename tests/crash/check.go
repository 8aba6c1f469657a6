package crash

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// A row is one row of an all-BIGINT table; only the first n of its values
// are used, n being the number of columns the reader was given.
type row [3]int64

// partFile is a committed part file of a filesystem sink,
// part-<subtask>-<k><ext>.
type partFile struct {
	name       string
	subtask, k int64
}

// committedParts lists the committed part files of a filesystem sink
// directory in the order a reader replays them: by subtask, then by part
// number (compared as numbers, so part-0-9 comes before part-0-10). Hidden
// files (in progress or pending: names starting with '.') and names
// starting with '_' are not committed and are skipped; any other name that
// is not a part file with extension ext is an error. A directory that does
// not exist has no part files.
func committedParts(dir, ext string) ([]partFile, error) {
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []partFile
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		p, ok := parsePartName(name, ext)
		if !ok {
			return nil, fmt.Errorf("%s: unexpected file %s in a sink directory", dir, name)
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].subtask != out[j].subtask {
			return out[i].subtask < out[j].subtask
		}
		return out[i].k < out[j].k
	})
	return out, nil
}

// parsePartName parses "part-<subtask>-<k><ext>".
func parsePartName(name, ext string) (partFile, bool) {
	rest, ok := strings.CutPrefix(name, "part-")
	if !ok {
		return partFile{}, false
	}
	rest, ok = strings.CutSuffix(rest, ext)
	if !ok {
		return partFile{}, false
	}
	a, b, ok := strings.Cut(rest, "-")
	if !ok {
		return partFile{}, false
	}
	s, err1 := strconv.ParseInt(a, 10, 64)
	k, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || s < 0 || k < 0 {
		return partFile{}, false
	}
	return partFile{name: name, subtask: s, k: k}, true
}

// change is one record of a debezium-json changelog: op 'c' (or 'r') adds
// after, 'd' removes before, 'u' does both.
type change struct {
	op            byte
	before, after *row
}

// forEachChange calls fn with every record of the committed debezium-json
// part files in dir, in replay order; an error of fn is returned with
// where the record was ("file:line: ..."). cols
// are the columns of the table in order (at most 3, all BIGINT, never
// NULL).
func forEachChange(dir string, cols []string, fn func(ch change) error) error {
	parts, err := committedParts(dir, ".json")
	if err != nil {
		return err
	}
	p := lineParser{cols: cols}
	for _, part := range parts {
		f, err := os.Open(filepath.Join(dir, part.name))
		if err != nil {
			return err
		}
		r := bufio.NewReaderSize(f, 1<<20)
		for line := 1; ; line++ {
			b, err := r.ReadSlice('\n')
			if err == io.EOF && len(b) == 0 {
				break
			}
			if err != nil && err != io.EOF {
				f.Close()
				return fmt.Errorf("%s:%d: %w", part.name, line, err)
			}
			if len(bytes.TrimSpace(b)) == 0 {
				continue
			}
			ch, perr := p.parse(b)
			if perr != nil {
				f.Close()
				return fmt.Errorf("%s:%d: %v: %q", part.name, line, perr, bytes.TrimSpace(b))
			}
			if err := fn(ch); err != nil {
				f.Close()
				return fmt.Errorf("%s:%d: %w", part.name, line, err)
			}
		}
		f.Close()
	}
	return nil
}

// lineParser decodes one debezium-json record. The records the engine
// writes, {"before":...,"after":...,"op":"c"} with the columns in table
// order, take a fast path without allocation; anything else goes through
// encoding/json.
type lineParser struct {
	cols []string
	rows [2]row
}

func (p *lineParser) parse(b []byte) (change, error) {
	if ch, ok := p.fast(bytes.TrimSpace(b)); ok {
		return ch, nil
	}
	return p.slow(b)
}

// fast parses exactly {"before":V,"after":V,"op":"x"}, V being null or
// {"c1":int,"c2":int,...} with the columns in table order.
func (p *lineParser) fast(b []byte) (change, bool) {
	var ch change
	var ok bool
	if b, ok = bytes.CutPrefix(b, []byte(`{"before":`)); !ok {
		return ch, false
	}
	if ch.before, b, ok = p.value(b, &p.rows[0]); !ok {
		return ch, false
	}
	if b, ok = bytes.CutPrefix(b, []byte(`,"after":`)); !ok {
		return ch, false
	}
	if ch.after, b, ok = p.value(b, &p.rows[1]); !ok {
		return ch, false
	}
	if b, ok = bytes.CutPrefix(b, []byte(`,"op":"`)); !ok || len(b) != 3 || b[1] != '"' || b[2] != '}' {
		return ch, false
	}
	ch.op = b[0]
	return ch, validOp(ch)
}

// value parses null or a row object at the start of b into dst.
func (p *lineParser) value(b []byte, dst *row) (*row, []byte, bool) {
	if rest, ok := bytes.CutPrefix(b, []byte("null")); ok {
		return nil, rest, true
	}
	*dst = row{}
	for i, c := range p.cols {
		sep := byte(',')
		if i == 0 {
			sep = '{'
		}
		if len(b) < len(c)+4 || b[0] != sep || b[1] != '"' || string(b[2:2+len(c)]) != c || b[2+len(c)] != '"' || b[3+len(c)] != ':' {
			return nil, b, false
		}
		b = b[4+len(c):]
		v, n, ok := parseInt(b)
		if !ok {
			return nil, b, false
		}
		dst[i] = v
		b = b[n:]
	}
	if len(b) == 0 || b[0] != '}' {
		return nil, b, false
	}
	return dst, b[1:], true
}

// parseInt parses the decimal integer at the start of b and returns it
// and its length.
func parseInt(b []byte) (int64, int, bool) {
	neg := len(b) > 0 && b[0] == '-'
	n := 0
	if neg {
		n = 1
	}
	start := n
	var v uint64
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		if n-start >= 18 {
			return 0, 0, false // leave long numbers to encoding/json
		}
		v = v*10 + uint64(b[n]-'0')
		n++
	}
	if n == start {
		return 0, 0, false
	}
	if neg {
		return -int64(v), n, true
	}
	return int64(v), n, true
}

// slow decodes a record of any field order with encoding/json.
func (p *lineParser) slow(b []byte) (change, error) {
	var rec struct {
		Before map[string]*int64 `json:"before"`
		After  map[string]*int64 `json:"after"`
		Op     string            `json:"op"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return change{}, err
	}
	var ch change
	if len(rec.Op) != 1 {
		return ch, fmt.Errorf("bad op %q", rec.Op)
	}
	ch.op = rec.Op[0]
	conv := func(m map[string]*int64, dst *row) (*row, error) {
		if m == nil {
			return nil, nil
		}
		if len(m) != len(p.cols) {
			return nil, fmt.Errorf("want columns %v", p.cols)
		}
		for i, c := range p.cols {
			v := m[c]
			if v == nil {
				return nil, fmt.Errorf("column %s missing or NULL", c)
			}
			dst[i] = *v
		}
		return dst, nil
	}
	var err error
	if ch.before, err = conv(rec.Before, &p.rows[0]); err != nil {
		return ch, err
	}
	if ch.after, err = conv(rec.After, &p.rows[1]); err != nil {
		return ch, err
	}
	if !validOp(ch) {
		return ch, fmt.Errorf("op %q with before/after that do not fit it", rec.Op)
	}
	return ch, nil
}

// validOp says whether the op has the rows it needs.
func validOp(ch change) bool {
	switch ch.op {
	case 'c', 'r':
		return ch.after != nil && ch.before == nil
	case 'd':
		return ch.before != nil && ch.after == nil
	case 'u':
		return ch.before != nil && ch.after != nil
	}
	return false
}

// replayMultiset replays the committed changelog in dir as a multiset of
// rows: a create adds its after row, a delete removes its before row. A
// removal of a row that is not in the multiset is an error naming the
// file and line.
func replayMultiset(dir string, cols []string) (map[row]int, error) {
	set := map[row]int{}
	err := forEachChange(dir, cols, func(ch change) error {
		if ch.before != nil {
			if set[*ch.before] == 0 {
				return fmt.Errorf("retraction of %s, which is not in the table", fmtRow(*ch.before, cols))
			}
			if set[*ch.before]--; set[*ch.before] == 0 {
				delete(set, *ch.before)
			}
		}
		if ch.after != nil {
			set[*ch.after]++
		}
		return nil
	})
	return set, err
}

// keyed is a changelog read as an upsert stream keyed by its first column.
type keyed struct {
	// first is the first record seen for each key.
	first map[int64]change
	// last is the row of the last create for each key (a key whose last
	// record is a delete is absent).
	last map[int64]row
}

// replayKeyed reads the committed changelog in dir keyed by its first
// column (copying rows: the parser reuses its buffers).
func replayKeyed(dir string, cols []string) (keyed, error) {
	kd := keyed{first: map[int64]change{}, last: map[int64]row{}}
	err := forEachChange(dir, cols, func(ch change) error {
		r := ch.after
		if r == nil {
			r = ch.before
		}
		k := r[0]
		if _, ok := kd.first[k]; !ok {
			c := change{op: ch.op}
			if ch.before != nil {
				b := *ch.before
				c.before = &b
			}
			if ch.after != nil {
				a := *ch.after
				c.after = &a
			}
			kd.first[k] = c
		}
		if ch.after != nil {
			kd.last[k] = *ch.after
		} else {
			delete(kd.last, k)
		}
		return nil
	})
	return kd, err
}

// fmtRow prints a row as (col=v, ...).
func fmtRow(r row, cols []string) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%d", c, r[i])
	}
	b.WriteByte(')')
	return b.String()
}

// expectedAgg is agg_out's final content for ids 1..n: for every k in
// 0..999 with at least one id, (k, count, sum) of the ids with id % 1000 = k.
func expectedAgg(n int64) map[row]int {
	var cnt, sum [1000]int64
	for id := int64(1); id <= n; id++ {
		cnt[id%1000]++
		sum[id%1000] += id
	}
	want := map[row]int{}
	for k := range cnt {
		if cnt[k] > 0 {
			want[row{int64(k), cnt[k], sum[k]}] = 1
		}
	}
	return want
}

// diffMultiset describes how got differs from want (at most max lines),
// or returns "" when they are equal.
func diffMultiset(got, want map[row]int, cols []string, max int) string {
	var lines []string
	for r, n := range want {
		if got[r] != n {
			lines = append(lines, fmt.Sprintf("%s: want %d, got %d", fmtRow(r, cols), n, got[r]))
		}
	}
	for r, n := range got {
		if _, ok := want[r]; !ok {
			lines = append(lines, fmt.Sprintf("%s: want 0, got %d", fmtRow(r, cols), n))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	sort.Strings(lines)
	total := len(lines)
	if total > max {
		lines = append(lines[:max], "...")
	}
	return fmt.Sprintf("%d rows differ:\n  %s", total, strings.Join(lines, "\n  "))
}

// checkAgg replays agg_out's committed changelog in dir and compares it
// with the aggregate of ids 1..n.
func checkAgg(dir string, n int64) error {
	cols := []string{"k", "c", "s"}
	got, err := replayMultiset(dir, cols)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if d := diffMultiset(got, expectedAgg(n), cols, 10); d != "" {
		return fmt.Errorf("%s: final content is not the aggregate of ids 1..%d: %s", dir, n, d)
	}
	return nil
}

// countIDs counts how often each id in 1..n occurs in the committed csv
// part files in dir (saturating at 255). An id outside 1..n or a line that
// is not a number is an error naming the file and line.
func countIDs(dir string, n int64) ([]uint8, error) {
	parts, err := committedParts(dir, ".csv")
	if err != nil {
		return nil, err
	}
	counts := make([]uint8, n+1)
	for _, part := range parts {
		data, err := os.ReadFile(filepath.Join(dir, part.name))
		if err != nil {
			return nil, err
		}
		line := 0
		for len(data) > 0 {
			line++
			var l []byte
			l, data, _ = bytes.Cut(data, []byte("\n"))
			l = bytes.TrimSuffix(l, []byte("\r"))
			if len(l) == 0 {
				continue
			}
			var id int64
			for _, c := range l {
				if c < '0' || c > '9' || id > n {
					return nil, fmt.Errorf("%s:%d: not an id in 1..%d: %q", part.name, line, n, l)
				}
				id = id*10 + int64(c-'0')
			}
			if id < 1 || id > n {
				return nil, fmt.Errorf("%s:%d: not an id in 1..%d: %q", part.name, line, n, l)
			}
			if counts[id] < 255 {
				counts[id]++
			}
		}
	}
	return counts, nil
}

// idProblems lists the ids that are missing, and, unless dupsAllowed, the
// ids seen more than once (the first few of each).
func idProblems(counts []uint8, dupsAllowed bool) error {
	const show = 10
	var missing, dups []int64
	nMissing, nDups := 0, 0
	for id := 1; id < len(counts); id++ {
		switch {
		case counts[id] == 0:
			if nMissing++; len(missing) < show {
				missing = append(missing, int64(id))
			}
		case counts[id] > 1 && !dupsAllowed:
			if nDups++; len(dups) < show {
				dups = append(dups, int64(id))
			}
		}
	}
	if nMissing == 0 && nDups == 0 {
		return nil
	}
	return fmt.Errorf("%d ids missing (first: %v), %d ids more than once (first: %v)", nMissing, missing, nDups, dups)
}

// checkIDs checks that the committed csv files in dir hold every id in
// 1..n exactly once (at least once if dupsAllowed).
func checkIDs(dir string, n int64, dupsAllowed bool) error {
	counts, err := countIDs(dir, n)
	if err != nil {
		return err
	}
	if err := idProblems(counts, dupsAllowed); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	return nil
}

// checkAggFinal reads agg_out's committed changelog in dir as an upsert
// stream keyed by k and checks that the last row of every key is the
// aggregate of ids 1..n. Unlike checkAgg it accepts changes that were
// committed twice, as long as the final values are right.
func checkAggFinal(dir string, n int64) error {
	cols := []string{"k", "c", "s"}
	kd, err := replayKeyed(dir, cols)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	got := map[row]int{}
	for _, r := range kd.last {
		got[r]++
	}
	if d := diffMultiset(got, expectedAgg(n), cols, 10); d != "" {
		return fmt.Errorf("%s: the last rows of the keys are not the aggregate of ids 1..%d: %s", dir, n, d)
	}
	return nil
}
