package kafka

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

// clicks describes a generated input file of n clicks, click ids 1..n,
// spread over apps app ids ("app-0".."app-<apps-1>", unevenly: the app of
// a click is a hash of its id).
type clicks struct {
	n, apps int
	file    string
	// counts[a] is the number of clicks of app a.
	counts []int64
}

// mix is splitmix64: a well-spread hash of i.
func mix(i uint64) uint64 {
	i += 0x9e3779b97f4a7c15
	i = (i ^ (i >> 30)) * 0xbf58476d1ce4e5b9
	i = (i ^ (i >> 27)) * 0x94d049bb133111eb
	return i ^ (i >> 31)
}

// appOf is the app index of click id.
func appOf(id, apps int) int { return int(mix(uint64(id)) % uint64(apps)) }

// appName is the app_id string of app index a.
func appName(a int) string { return "app-" + strconv.Itoa(a) }

var baseTime = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// clickJSON appends the JSON line of click id (without a newline).
func clickJSON(dst []byte, id, apps int) []byte {
	a := appOf(id, apps)
	dst = append(dst, `{"click_id":`...)
	dst = strconv.AppendInt(dst, int64(id), 10)
	dst = append(dst, `,"app_id":"app-`...)
	dst = strconv.AppendInt(dst, int64(a), 10)
	dst = append(dst, `","user_id":`...)
	dst = strconv.AppendUint(dst, mix(uint64(id)<<1)%100000, 10)
	dst = append(dst, `,"ts":"`...)
	dst = baseTime.Add(time.Duration(id)*time.Millisecond).AppendFormat(dst, "2006-01-02 15:04:05.000")
	dst = append(dst, `"}`...)
	return dst
}

// writeClicks writes n clicks as "app_id:json" lines (for kcat -K:) into
// dir/clicks.txt.
func writeClicks(t *testing.T, dir string, n, apps int) *clicks {
	t.Helper()
	c := &clicks{n: n, apps: apps, file: filepath.Join(dir, "clicks.txt"), counts: make([]int64, apps)}
	f, err := os.Create(c.file)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var line []byte
	for id := 1; id <= n; id++ {
		a := appOf(id, apps)
		c.counts[a]++
		line = append(line[:0], "app-"...)
		line = strconv.AppendInt(line, int64(a), 10)
		line = append(line, ':')
		line = clickJSON(line, id, apps)
		line = append(line, '\n')
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return c
}

// writeLines writes lines (one record each, no keys) into dir/name.
func writeLines(t *testing.T, dir, name string, lines []string) string {
	t.Helper()
	for i, l := range lines {
		if strings.ContainsAny(l, "\n") || l == "" {
			t.Fatalf("line %d cannot be sent as one record: %q", i, l)
		}
	}
	return writeFile(t, dir, name, strings.Join(lines, "\n")+"\n")
}

// writeFile writes a file under dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// clickID reads the click_id member of a JSON object: a fast path for
// the engine's `"click_id":123`, encoding/json otherwise. ok is false when
// the member is absent or null.
func clickID(v []byte) (id int64, ok bool, err error) {
	const member = `"click_id":`
	if i := bytes.Index(v, []byte(member)); i >= 0 {
		rest := v[i+len(member):]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j > 0 && j < 19 && j < len(rest) && (rest[j] == ',' || rest[j] == '}') {
			n, err := strconv.ParseInt(string(rest[:j]), 10, 64)
			return n, err == nil, err
		}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil {
		return 0, false, fmt.Errorf("not a JSON object: %v", err)
	}
	raw, found := m["click_id"]
	if !found || string(raw) == "null" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("click_id %s is not an integer", raw)
	}
	return n, true, nil
}

// idCounts counts how often each click id 1..n occurs in topic's
// committed records (saturating at 255); an id outside 1..n or a record
// without one is an error.
func idCounts(t *testing.T, b *broker, topic string, n int) []uint8 {
	t.Helper()
	counts := make([]uint8, n+1)
	consumeCommitted(t, b, topic, func(r record) error {
		id, ok, err := clickID(r.value)
		switch {
		case err != nil:
			return err
		case !ok:
			return fmt.Errorf("no click_id")
		case id < 1 || id > int64(n):
			return fmt.Errorf("click_id %d outside 1..%d", id, n)
		}
		if counts[id] < 255 {
			counts[id]++
		}
		return nil
	})
	return counts
}

// idProblems lists the ids that are missing, and, unless dupsAllowed, the
// ids seen more than once (the first few of each).
func idProblems(counts []uint8, dupsAllowed bool) error {
	const show = 10
	var missing, dups []int
	nMissing, nDups := 0, 0
	for id := 1; id < len(counts); id++ {
		switch {
		case counts[id] == 0:
			if nMissing++; len(missing) < show {
				missing = append(missing, id)
			}
		case counts[id] > 1 && !dupsAllowed:
			if nDups++; len(dups) < show {
				dups = append(dups, id)
			}
		}
	}
	if nMissing == 0 && nDups == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d ids missing (first: %v), %d ids more than once (first: %v)", nMissing, len(counts)-1, missing, nDups, dups)
}

// dupCount is the number of ids seen more than once.
func dupCount(counts []uint8) int {
	n := 0
	for _, c := range counts[1:] {
		if c > 1 {
			n++
		}
	}
	return n
}

// upsertValue is one committed record of an upsert-kafka topic.
type upsertValue struct {
	partition int32
	offset    int64
	value     map[string]json.RawMessage // nil: a tombstone
}

// lastValues reads the committed records of an upsert-kafka topic and
// returns, per key (its JSON text), the last record, and the number of
// records read. Records of one key must all be in one partition.
func lastValues(t *testing.T, b *broker, topic string) (map[string]upsertValue, int) {
	t.Helper()
	last := map[string]upsertValue{}
	n := consumeCommitted(t, b, topic, func(r record) error {
		if r.key == nil {
			return fmt.Errorf("a record without a key")
		}
		k := string(r.key)
		if prev, ok := last[k]; ok && prev.partition != r.partition {
			return fmt.Errorf("key in partitions %d and %d", prev.partition, r.partition)
		}
		uv := upsertValue{partition: r.partition, offset: r.offset}
		if r.value != nil {
			if err := json.Unmarshal(r.value, &uv.value); err != nil {
				return fmt.Errorf("value is not a JSON object: %v", err)
			}
		}
		last[k] = uv
		return nil
	})
	return last, n
}

// checkCounts compares the last committed value per key of a pv topic
// (key {"app_id":...}, value {"app_id":...,"pv":N}) with the true counts.
func checkCounts(t *testing.T, b *broker, topic string, c *clicks) {
	t.Helper()
	last, n := lastValues(t, b, topic)
	var problems []string
	byApp := map[string]upsertValue{}
	for k, uv := range last {
		var key map[string]any
		if err := json.Unmarshal([]byte(k), &key); err != nil {
			problems = append(problems, fmt.Sprintf("key %s is not a JSON object: %v", k, err))
			continue
		}
		app, ok := key["app_id"].(string)
		if !ok || len(key) != 1 {
			problems = append(problems, fmt.Sprintf("key %s: want {\"app_id\": string}", k))
			continue
		}
		byApp[app] = uv
	}
	good := 0
	for a, want := range c.counts {
		if want == 0 {
			continue
		}
		app := appName(a)
		uv, ok := byApp[app]
		delete(byApp, app)
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s: no committed record, want pv %d", app, want))
			continue
		case uv.value == nil:
			problems = append(problems, fmt.Sprintf("%s: the last record (partition %d offset %d) is a tombstone, want pv %d", app, uv.partition, uv.offset, want))
			continue
		}
		got := string(uv.value["pv"])
		if got != strconv.FormatInt(want, 10) {
			problems = append(problems, fmt.Sprintf("%s: last committed pv %s (partition %d offset %d), want %d", app, got, uv.partition, uv.offset, want))
			continue
		}
		if v := string(uv.value["app_id"]); v != "" && v != strconv.Quote(app) {
			problems = append(problems, fmt.Sprintf("%s: the value's app_id is %s", app, v))
			continue
		}
		good++
	}
	for app := range byApp {
		problems = append(problems, fmt.Sprintf("%s: a key that is not in the input", app))
	}
	if total := len(problems); total > 0 {
		t.Errorf("%s: %d problems (%d of %d keys right; %d committed records read):\n  %s", topic, total, good, len(c.counts), n, testenv.Problems(problems, 15))
		return
	}
	t.Logf("%s: the last committed pv of each of the %d app ids equals its true count (%d committed records)", topic, good, n)
}
