package session

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// describeJob returns DESCRIBE JOB 'id' as field -> value (a string, or
// nil for NULL).
func describeJob(t *testing.T, s *Session, id string) map[string]any {
	t.Helper()
	r := execAll(t, s, "DESCRIBE JOB '"+id+"'")[0]
	out := map[string]any{}
	for _, row := range r.Rows {
		out[row[0].(string)] = row[1]
	}
	return out
}

// TestShow runs testdata/show, one session (on a data dir of its own) for
// the file. Directives:
//
//	exec        the input's statements; each result (a message, a table
//	            as "col | col" lines, or text), or the error
//	roundtrip   for each table or view named in the input (one a line):
//	            its SHOW CREATE statement run on a fresh data dir, whose
//	            SHOW CREATE must be the same text, and run on this
//	            session, which must find the same definition
func TestShow(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	datadriven.RunTest(t, "testdata/show", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "exec":
			var b strings.Builder
			stmts, err := sql.Parse(d.Input)
			if err != nil {
				return err.Error() + "\n"
			}
			for _, st := range stmts {
				r, err := s.ExecuteStatement(context.Background(), st)
				if err != nil {
					b.WriteString("error: " + err.Error() + "\n")
					continue
				}
				writeResult(&b, r)
			}
			return b.String()
		case "roundtrip":
			var b strings.Builder
			for _, name := range strings.Split(strings.TrimSpace(d.Input), "\n") {
				fmt.Fprintf(&b, "%s: %s\n", name, roundTrip(t, s, name))
			}
			return b.String()
		}
		t.Fatalf("unknown directive %s", d.Cmd)
		return ""
	})
}

// roundTrip checks SHOW CREATE of table or view name (see TestShow) and
// says what it found.
func roundTrip(t *testing.T, s *Session, name string) string {
	kind := "TABLE"
	if _, ok := s.Catalog().View(name); ok {
		kind = "VIEW"
	}
	show := func(s *Session) (string, error) {
		rs, err := s.Execute(context.Background(), "SHOW CREATE "+kind+" "+quoteName(name))
		if err != nil {
			return "", err
		}
		return rs[0].Text, nil
	}
	text, err := show(s)
	if err != nil {
		return err.Error()
	}
	fresh, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if kind == "VIEW" {
		// A view needs the tables it reads.
		for _, tn := range s.Catalog().Tables() {
			tt, _ := s.Catalog().Table(tn)
			if _, err := fresh.Execute(context.Background(), CreateTableText(tt)); err != nil {
				return "recreating table " + tn + ": " + err.Error()
			}
		}
	}
	if _, err := fresh.Execute(context.Background(), text); err != nil {
		return "running it on a fresh data dir: " + err.Error() + "\n" + text
	}
	again, err := show(fresh)
	if err != nil {
		return err.Error()
	}
	if again != text {
		return fmt.Sprintf("differs on a fresh data dir:\n%s\nthen\n%s", text, again)
	}
	rs, err := s.Execute(context.Background(), text)
	if err != nil {
		return "running it again here: " + err.Error()
	}
	if !strings.Contains(rs[0].Message, "already exists with this definition") {
		return "running it again here: " + rs[0].Message
	}
	return "same definition"
}

// writeResult writes r as TestShow shows it.
func writeResult(b *strings.Builder, r *Result) {
	switch r.Kind {
	case ResultRows:
		var cols []string
		for _, c := range r.Columns {
			cols = append(cols, c.Name)
		}
		b.WriteString(strings.Join(cols, " | ") + "\n")
		for _, row := range r.Rows {
			cells := make([]string, len(row))
			for i, v := range row {
				cells[i] = "NULL"
				if v != nil {
					cells[i] = types.Format(r.Columns[i].Type, v)
				}
			}
			b.WriteString(strings.Join(cells, " | ") + "\n")
		}
	case ResultText:
		b.WriteString(r.Text)
	default:
		b.WriteString(r.Message + "\n")
	}
}

// TestDescribeJobUnknown: DESCRIBE JOB of an id the session does not know
// is refused, placed at the statement.
func TestDescribeJobUnknown(t *testing.T) {
	s, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = execErr(t, s, "DESCRIBE JOB 'nope'")
	if want := "line 1:1: no such job 'nope' (SHOW JOBS lists the job ids)"; err.Error() != want {
		t.Fatalf("DESCRIBE JOB 'nope': %v, want %s", err, want)
	}
}

// TestShowJobsCompact: SHOW JOBS has the columns that fit a terminal;
// DESCRIBE JOB (by id or name) every field of one job, the same values in
// the columns both show. An INSERT says where its job runs.
func TestShowJobsCompact(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	execAll(t, s, "CREATE TABLE src (id BIGINT)", "INSERT INTO src VALUES (1), (2), (3)", "CREATE TABLE dst (id BIGINT)")
	rs := execAll(t, s, "SET 'pipeline.name' = 'copy'", "INSERT INTO dst SELECT id FROM src")
	mustContainAll(t, "the INSERT's answer", rs[1].Message, "to this process (there is no cluster: the job runs here)", "Job ID: "+rs[1].JobID)
	if err := s.WaitJobs(context.Background()); err != nil {
		t.Fatal(err)
	}
	show := execAll(t, s, "SHOW JOBS")[0]
	var cols []string
	for _, c := range show.Columns {
		cols = append(cols, c.Name)
	}
	if want := "job id,job name,status,start time,duration,restarts,owner epoch,records in,records out"; strings.Join(cols, ",") != want {
		t.Fatalf("SHOW JOBS columns: %v, want %s", cols, want)
	}
	row := show.Rows[len(show.Rows)-1]
	for _, ref := range []string{rs[1].JobID, "copy"} {
		d := describeJob(t, s, ref)
		if len(d) != 18 {
			t.Errorf("DESCRIBE JOB '%s' has %d fields, want 18: %v", ref, len(d), d)
		}
		for i, c := range show.Columns {
			if row[i] == nil {
				if d[c.Name] != nil {
					t.Errorf("DESCRIBE JOB '%s' %s = %v, SHOW JOBS says NULL", ref, c.Name, d[c.Name])
				}
				continue
			}
			if want := types.Format(c.Type, row[i]); d[c.Name] != want {
				t.Errorf("DESCRIBE JOB '%s' %s = %v, SHOW JOBS says %s", ref, c.Name, d[c.Name], want)
			}
		}
		if d["records out"] != "3" || d["status"] != "FINISHED" || d["error"] != nil || d["owner epoch"] != nil {
			t.Errorf("DESCRIBE JOB '%s': %v", ref, d)
		}
	}
}
