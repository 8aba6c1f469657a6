package jdbc_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"

	"github.com/streamsql/streamsql/connectors/internal/arrowutil"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	exe "github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/internal/testenv"
	"github.com/streamsql/streamsql/types"
)

// benchRows are the rows of one benchmark iteration, in batches of
// benchBatch, a checkpoint every benchPerCheckpoint rows.
const (
	benchRows          = 200_000
	benchBatch         = 1024
	benchPerCheckpoint = 20_000
)

var benchSchema = types.Schema{
	{Name: "id", Type: types.BigIntType}, {Name: "app", Type: types.StringType},
	{Name: "n", Type: types.BigIntType}, {Name: "ts", Type: types.TimestampOf(3)},
}

const benchDDL = "(id bigint PRIMARY KEY, app text, n bigint, ts timestamp)"

// benchBatches are the rows: id i, app-(i mod 1000), i*7, a timestamp.
func benchBatches(base int) []exe.Batch {
	var out []exe.Batch
	for from := 0; from < benchRows; from += benchBatch {
		var rows [][]types.Value
		for i := from; i < min(from+benchBatch, benchRows); i++ {
			id := int64(base + i)
			rows = append(rows, []types.Value{id, "app-" + strconv.Itoa(i%1000), id * 7, int64(1_700_000_000_000_000 + id*1000)})
		}
		out = append(out, exe.Batch{Rec: arrowutil.FromRows(memory.DefaultAllocator, benchSchema, rows)})
	}
	return out
}

// cpu is CPU time: this process's, and the server's (the postmaster,
// its children, and those of them that exited, from /proc).
type cpu struct{ client, server time.Duration }

func cpuNow(b *testing.B, pg *testenv.Postgres) cpu {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	c := cpu{client: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
	pidb, err := os.ReadFile(filepath.Join(pg.Dir, "data", "postmaster.pid"))
	if err != nil {
		b.Fatal(err)
	}
	post, _ := strconv.Atoi(strings.SplitN(string(pidb), "\n", 2)[0])
	ents, _ := os.ReadDir("/proc")
	tick := 100 // USER_HZ
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+2:]))
		ppid, _ := strconv.Atoi(f[1])
		if pid != post && ppid != post {
			continue
		}
		n := 0
		fields := []int{11, 12} // utime, stime
		if pid == post {
			fields = append(fields, 13, 14) // and its exited children's: backends gone since
		}
		for _, i := range fields {
			v, _ := strconv.Atoi(f[i])
			n += v
		}
		c.server += time.Duration(n) * time.Second / time.Duration(tick)
	}
	return c
}

// report puts rows/s and rows per CPU second (the client's and the
// server's together) on b.
func report(b *testing.B, pg *testenv.Postgres, start time.Time, c0 cpu) {
	c1 := cpuNow(b, pg)
	rows := float64(benchRows) * float64(b.N)
	wall := time.Since(start).Seconds()
	cl, sv := (c1.client - c0.client).Seconds(), (c1.server - c0.server).Seconds()
	b.ReportMetric(rows/wall, "rows/s")
	b.ReportMetric(rows/(cl+sv), "rows/cpu-s")
	b.ReportMetric(cl/wall, "client-cores")
	b.ReportMetric(sv/wall, "server-cores")
}

// BenchmarkSink writes benchRows rows through the sink into a table with
// a primary key (upserts of new keys), at least once and exactly once, a
// checkpoint every benchPerCheckpoint rows; "copy" is the floor: psql's
// \copy of the same rows from a CSV file into a table of the same
// columns. Run:
//
//	go test ./connectors/jdbc -run '^$' -bench Sink -benchtime 5x
func BenchmarkSink(b *testing.B) {
	pg := testenv.PG(b)
	ctx := context.Background()
	for _, g := range []string{"at-least-once", "exactly-once"} {
		b.Run(g, func(b *testing.B) {
			table := "bench_" + strings.ReplaceAll(g, "-", "_")
			pg.MustPsql(b, "DROP TABLE IF EXISTS "+table+"; CREATE TABLE "+table+" "+benchDDL)
			spec := exe.TableSpec{Table: table, Schema: benchSchema, PrimaryKey: []string{"id"}, Parallelism: 1,
				Mem: memory.DefaultAllocator, Job: "bench", OperatorID: "sink", Options: map[string]string{
					"connector": "jdbc", "url": pg.JDBCURL(), "table-name": table, "username": pg.Var("PGUSER"),
					"password": pg.Var("PGPASSWORD"), "sink.delivery-guarantee": g, "sink.buffer-flush.max-rows": "5000"}}
			var batches [][]exe.Batch
			for i := 0; i < b.N; i++ {
				batches = append(batches, benchBatches(i*benchRows))
			}
			s, err := registry.Sink("jdbc", spec)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if err := s.Open(ctx); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start, c0 := time.Now(), cpuNow(b, pg)
			cp := int64(0)
			for i := 0; i < b.N; i++ {
				written := 0
				for _, bt := range batches[i] {
					if err := s.Write(ctx, bt); err != nil {
						b.Fatal(err)
					}
					if written += bt.Len(); written >= benchPerCheckpoint {
						written = 0
						cp++
						h, err := s.PreCommit(ctx, cp)
						if err != nil {
							b.Fatal(err)
						}
						if err := s.Commit(ctx, cp, h); err != nil {
							b.Fatal(err)
						}
					}
				}
				if err := s.Finish(ctx); err != nil {
					b.Fatal(err)
				}
			}
			report(b, pg, start, c0)
			b.StopTimer()
			if got := strings.TrimSpace(pg.MustPsql(b, "SELECT count(*) FROM "+table)); got != strconv.Itoa(b.N*benchRows) {
				b.Fatalf("%s rows in %s, want %d", got, table, b.N*benchRows)
			}
		})
	}
	b.Run("psql-copy", func(b *testing.B) {
		pg.MustPsql(b, "DROP TABLE IF EXISTS bench_copy; CREATE TABLE bench_copy "+benchDDL)
		var files []string
		for i := 0; i < b.N; i++ {
			p := filepath.Join(b.TempDir(), "rows.csv")
			f, err := os.Create(p)
			if err != nil {
				b.Fatal(err)
			}
			w := bufio.NewWriter(f)
			for j := 0; j < benchRows; j++ {
				id := int64(i*benchRows + j)
				ts := time.UnixMicro(1_700_000_000_000_000 + id*1000).UTC().Format("2006-01-02 15:04:05.000")
				fmt.Fprintf(w, "%d,app-%d,%d,%s\n", id, j%1000, id*7, ts)
			}
			w.Flush()
			f.Close()
			files = append(files, p)
		}
		b.ResetTimer()
		start, c0 := time.Now(), cpuNow(b, pg)
		var psqlCPU time.Duration
		for i := 0; i < b.N; i++ {
			cmd := exec.Command("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", `\copy bench_copy FROM '`+files[i]+`' CSV`)
			cmd.Env = append(os.Environ(), pg.Env...)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("psql \\copy: %v\n%s", err, out)
			}
			psqlCPU += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
		c0.client -= psqlCPU // psql's CPU counts as the client's
		report(b, pg, start, c0)
	})
}

// BenchmarkStatements compares ways to upsert benchRows new rows in
// statements of 5,000 rows each, with pgx: the sink's one statement per
// 5,000 rows with a column array each (unnest), multi-row VALUES lists
// (5,000 rows of 4 parameters), and COPY into a temporary table merged
// with INSERT ... SELECT ... ON CONFLICT.
func BenchmarkStatements(b *testing.B) {
	pg := testenv.PG(b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, "postgres://"+pg.Var("PGUSER")+":"+pg.Var("PGPASSWORD")+"@127.0.0.1:"+pg.Var("PGPORT")+"/"+pg.Var("PGDATABASE"))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	const chunk = 5000
	type row struct {
		id, n int64
		app   string
		ts    time.Time
	}
	rows := func(base int) []row {
		out := make([]row, benchRows)
		for i := range out {
			id := int64(base + i)
			out[i] = row{id, id * 7, "app-" + strconv.Itoa(i%1000), time.UnixMicro(1_700_000_000_000_000 + id*1000).UTC()}
		}
		return out
	}
	const upsert = " ON CONFLICT (id) DO UPDATE SET app = EXCLUDED.app, n = EXCLUDED.n, ts = EXCLUDED.ts"
	for _, m := range []struct {
		name  string
		write func(rs []row) error
	}{
		{"unnest", func(rs []row) error {
			ids, ns, apps, tss := make([]int64, len(rs)), make([]int64, len(rs)), make([]string, len(rs)), make([]time.Time, len(rs))
			for i, r := range rs {
				ids[i], ns[i], apps[i], tss[i] = r.id, r.n, r.app, r.ts
			}
			_, err := conn.Exec(ctx, "INSERT INTO bench_stmt (id, app, n, ts) SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::timestamp[])"+upsert,
				ids, apps, ns, tss)
			return err
		}},
		{"values", func(rs []row) error {
			var sb strings.Builder
			sb.WriteString("INSERT INTO bench_stmt (id, app, n, ts) VALUES ")
			args := make([]any, 0, 4*len(rs))
			for i, r := range rs {
				if i > 0 {
					sb.WriteString(", ")
				}
				fmt.Fprintf(&sb, "($%d, $%d, $%d, $%d)", 4*i+1, 4*i+2, 4*i+3, 4*i+4)
				args = append(args, r.id, r.app, r.n, r.ts)
			}
			_, err := conn.Exec(ctx, sb.String()+upsert, args...)
			return err
		}},
		{"copy-merge", func(rs []row) error {
			if _, err := conn.Exec(ctx, "CREATE TEMP TABLE IF NOT EXISTS stage (id bigint, app text, n bigint, ts timestamp); TRUNCATE stage"); err != nil {
				return err
			}
			src := make([][]any, len(rs))
			for i, r := range rs {
				src[i] = []any{r.id, r.app, r.n, r.ts}
			}
			if _, err := conn.CopyFrom(ctx, pgx.Identifier{"stage"}, []string{"id", "app", "n", "ts"}, pgx.CopyFromRows(src)); err != nil {
				return err
			}
			_, err := conn.Exec(ctx, "INSERT INTO bench_stmt SELECT * FROM stage"+upsert)
			return err
		}},
	} {
		b.Run(m.name, func(b *testing.B) {
			pg.MustPsql(b, "DROP TABLE IF EXISTS bench_stmt; CREATE TABLE bench_stmt "+benchDDL)
			var all [][]row
			for i := 0; i < b.N; i++ {
				all = append(all, rows(i*benchRows))
			}
			b.ResetTimer()
			start, c0 := time.Now(), cpuNow(b, pg)
			for i := 0; i < b.N; i++ {
				for from := 0; from < benchRows; from += chunk {
					if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
						b.Fatal(err)
					}
					if err := m.write(all[i][from:min(from+chunk, benchRows)]); err != nil {
						b.Fatal(err)
					}
					if _, err := conn.Exec(ctx, "COMMIT"); err != nil {
						b.Fatal(err)
					}
				}
			}
			report(b, pg, start, c0)
		})
	}
}
