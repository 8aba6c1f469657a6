package kafka

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Bad records of each kind the json format must reject. The click ids of
// the bad records are above any good id, so one reaching the output is
// noticed.
var (
	invalidJSON = []string{
		`not json at all`,
		`{"click_id":900001,"app_id":"app-1","user_id":1`,
		`[900002,"app-1",1,"2024-01-01 00:00:00"]`,
		`{"click_id":900003,"app_id":"app-1","user_id":1,"ts":"2024-01-01 00:00:00"}}`,
	}
	wrongTypes = []string{
		`{"click_id":"nine hundred thousand","app_id":"app-1","user_id":1,"ts":"2024-01-01 00:00:00"}`,
		`{"click_id":900011,"app_id":"app-1","user_id":{"id":1},"ts":"2024-01-01 00:00:00"}`,
		`{"click_id":900012,"app_id":"app-1","user_id":1,"ts":"not a time"}`,
	}
)

// missingFields is a record without app_id and ts. As in Flink, the json
// format reads a missing member as NULL unless 'json.fail-on-missing-field'
// is set (which cannot be combined with 'json.ignore-parse-errors').
func missingFields(id int) string {
	return fmt.Sprintf(`{"click_id":%d,"user_id":1}`, id)
}

// goodLines are the JSON lines of click ids from..to.
func goodLines(from, to int) []string {
	var out []string
	for id := from; id <= to; id++ {
		out = append(out, string(clickJSON(nil, id, apps)))
	}
	return out
}

// failJob is a job file copying the topic into a blackhole table with no
// checkpoints and no restarts: a bad record fails it.
func failJob(b *broker, topic string, extra ...string) string {
	return sourceDDL(b, topic, topic, extra...) +
		"CREATE TABLE sink (\n  " + clickColumns + "\n) WITH ('connector' = 'blackhole');\n" +
		"SET 'restart-strategy.type' = 'none';\n" +
		"INSERT INTO sink SELECT * FROM clicks;\n"
}

// TestBadRecords checks what the kafka source does with records its json
// format cannot read: by default the job fails with an error naming the
// topic, partition and offset of the record; with 'json.ignore-parse-errors'
// the records are skipped, counted (DESCRIBE JOB), and every good record is
// processed. Tombstones (messages without a value) are skipped and
// counted on their own.
func TestBadRecords(t *testing.T) {
	forEachProtocol(t, 2, nil, func(t *testing.T, b *broker) {
		const before, after = 500, 499 // good records around the bad one
		for _, c := range []struct {
			name  string
			bad   string
			extra []string
		}{
			{"invalid-json", invalidJSON[1], nil},
			{"not-an-object", invalidJSON[2], nil},
			{"wrong-type", wrongTypes[0], nil},
			{"bad-timestamp", wrongTypes[2], nil},
			{"missing-field", missingFields(900020), []string{"'json.fail-on-missing-field' = 'true'"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				dir := t.TempDir()
				topic := "bad-" + c.name
				lines := append(goodLines(1, before), c.bad)
				lines = append(lines, goodLines(before+1, before+after)...)
				// Partition 1 of the topic, so the offset of the bad record
				// is `before` there.
				produceFile(t, b, topic, writeLines(t, dir, "in.txt", lines), false, 1)
				file := writeFile(t, dir, "job.sql", failJob(b, topic, c.extra...))
				p := startEngine(t, filepath.Join(dir, "data"), file, nil)
				err := p.Wait()
				out := p.Output()
				if code := exitCode(err); code != 1 {
					t.Fatalf("want the job to fail (exit status 1) on the bad record %s, got %v; output:\n%s", c.bad, err, out)
				}
				if problem := namesRecord(out, topic, 1, before); problem != "" {
					t.Errorf("the error should name topic %s, partition 1, offset %d: %s; output:\n%s", topic, before, problem, out)
				} else {
					t.Logf("failed as expected: %s", strings.TrimSpace(out))
				}
			})
		}
		t.Run("ignore-parse-errors", func(t *testing.T) {
			testSkipBadRecords(t, b)
		})
	})
}

// namesRecord says what is missing in an error output that should name
// the topic, partition and offset of a record ("" when nothing is).
func namesRecord(out, topic string, partition int, offset int64) string {
	var missing []string
	if !strings.Contains(out, topic) {
		missing = append(missing, "the topic")
	}
	if !regexp.MustCompile(`(?i)(partition\D{0,3}` + strconv.Itoa(partition) + `\b|` + regexp.QuoteMeta(topic) + `\[` + strconv.Itoa(partition) + `\]|` + regexp.QuoteMeta(topic) + `-` + strconv.Itoa(partition) + `\b)`).MatchString(out) {
		missing = append(missing, "the partition")
	}
	if !regexp.MustCompile(`(?i)offset\D{0,3}` + strconv.FormatInt(offset, 10) + `\b`).MatchString(out) {
		missing = append(missing, "the offset")
	}
	return strings.Join(missing, ", ")
}

// testSkipBadRecords mixes bad records of every kind into a topic of good
// ones and copies it with 'json.ignore-parse-errors' = 'true'.
func testSkipBadRecords(t *testing.T, b *broker) {
	const good = 20000
	const missingFrom = 800001 // click ids of the records with missing fields
	dir := t.TempDir()
	var lines []string
	var bad []string
	bad = append(bad, invalidJSON...)
	bad = append(bad, wrongTypes...)
	nMissing := 0
	for id := 1; id <= good; id++ {
		lines = append(lines, appName(appOf(id, apps))+":"+string(clickJSON(nil, id, apps)))
		if id%1000 == 0 { // every kind of bad record, keyed over both partitions
			for i, l := range bad {
				lines = append(lines, fmt.Sprintf("bad-%d-%d:%s", id, i, l))
			}
			lines = append(lines, fmt.Sprintf("missing-%d:%s", id, missingFields(missingFrom+nMissing)))
			nMissing++
		}
	}
	skipped := int64(good / 1000 * len(bad))
	produceFile(t, b, "mixed", writeLines(t, dir, "in.txt", lines), true, -1)
	const tombstones = 7
	produceTombstones(t, b, "mixed", dir, tombstones)
	job := sourceDDL(b, "mixed", "mixed", "'json.ignore-parse-errors' = 'true'") +
		"CREATE TABLE out (\n  " + clickColumns + "\n) WITH (\n" +
		"  'connector' = 'kafka',\n  'topic' = 'mixed_out',\n" +
		"  'properties.bootstrap.servers' = '" + b.addr + "',\n" +
		"  'format' = 'json',\n  'sink.delivery-guarantee' = 'at-least-once'\n);\n" +
		"SET 'pipeline.name' = 'skip';\n" +
		"SET 'table.dml-sync' = 'true';\n" +
		"INSERT INTO out SELECT * FROM clicks;\n" +
		"DESCRIBE JOB 'skip';\n"
	file := writeFile(t, dir, "job.sql", job)
	p := startEngine(t, filepath.Join(dir, "data"), file, nil)
	if err := p.Wait(); err != nil {
		t.Fatalf("with 'json.ignore-parse-errors' = 'true' the job should skip the bad records and finish, got %v; output:\n%s", err, p.Output())
	}
	out := p.Output()
	t.Logf("output:\n%s", out)
	row, err := describeJobFields(out)
	if err != nil {
		t.Fatalf("DESCRIBE JOB: %v; output:\n%s", err, out)
	}
	if got := row["skipped"]; got != strconv.FormatInt(skipped, 10) {
		t.Errorf("DESCRIBE JOB skipped = %q, want %d (%d invalid JSON and %d wrongly typed records); row: %v", got, skipped,
			good/1000*len(invalidJSON), good/1000*len(wrongTypes), row)
	}
	if got := row["tombstones"]; got != strconv.Itoa(tombstones) {
		t.Errorf("DESCRIBE JOB tombstones = %q, want %d (messages without a value, skipped); row: %v", got, tombstones, row)
	}
	if got := row["status"]; got != "FINISHED" {
		t.Errorf("DESCRIBE JOB status = %q, want FINISHED", got)
	}
	// Every good record once (no failure: no duplicates either); the
	// records with missing fields pass with NULLs, as in Flink.
	counts := make([]uint8, good+1)
	missingSeen := map[int64]int{}
	consumeCommitted(t, b, "mixed_out", func(r record) error {
		id, ok, err := clickID(r.value)
		switch {
		case err != nil:
			return err
		case !ok:
			return fmt.Errorf("no click_id")
		case id >= missingFrom && id < missingFrom+int64(nMissing):
			if !strings.Contains(string(r.value), `"app_id":null`) {
				return fmt.Errorf("a record with missing fields should have app_id NULL")
			}
			missingSeen[id]++
			return nil
		case id < 1 || id > good:
			return fmt.Errorf("click_id %d is not a good record's: a bad record reached the output", id)
		}
		if counts[id] < 255 {
			counts[id]++
		}
		return nil
	})
	if err := idProblems(counts, false); err != nil {
		t.Errorf("good records in the output: %v", err)
	}
	if len(missingSeen) != nMissing {
		t.Errorf("%d of the %d records with missing fields are in the output; want all (with NULLs)", len(missingSeen), nMissing)
	}
}

// describeJobFields reads the boxed DESCRIBE JOB table of an output (a
// field and its value a row) into field -> value.
func describeJobFields(out string) (map[string]string, error) {
	var fields map[string]string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		if len(cells) != 2 {
			continue
		}
		k, v := strings.TrimSpace(cells[0]), strings.TrimSpace(cells[1])
		if k == "field" && v == "value" {
			fields = map[string]string{}
			continue
		}
		if fields != nil {
			fields[k] = v
		}
	}
	if fields == nil {
		return nil, fmt.Errorf("no DESCRIBE JOB table")
	}
	if _, ok := fields["skipped"]; !ok {
		return nil, fmt.Errorf("no 'skipped' field in %v", fields)
	}
	return fields, nil
}
