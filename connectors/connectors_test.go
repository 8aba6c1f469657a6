package connectors_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"

	"github.com/streamsql/streamsql/catalog"
	_ "github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/internal/conntest"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	"github.com/streamsql/streamsql/connectors/internal/rowfmt"
	memtable "github.com/streamsql/streamsql/connectors/memory"
	printsink "github.com/streamsql/streamsql/connectors/print"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// TestDataDriven runs the files under testdata/. Each file works in its own
// data directory (a fresh t.TempDir()); "$DIR" in inputs and options stands
// for it. Commands:
//
//	table name=T            input: the schema on the first line, then key=value
//	                        options (connector=... among them); CREATE TABLE
//	                        through a catalog, so the registry checks it
//	scan table=T [parallelism=P] [subtasks=i,j] [batch=N] [fields=a,b]
//	     [restore-after=K] [sort] [count]
//	                        reads every listed subtask to its end; with
//	                        restore-after, snapshots after K batches, closes,
//	                        restores a new instance and reads on
//	insert table=T [parallelism=P] [subtask=I]
//	                        input: rows (+I[1, a] or 1, a); open, write them
//	                        as one batch, finish, close; prints what print
//	                        sinks wrote
//	sink-open/sink-write/sink-precommit id=N/sink-commit id=N/sink-finish/sink-close table=T
//	                        drive one sink step by step
//	restart                 forget in-process memory tables (a new process)
//	drop table=T            DROP TABLE: the connector's Drop
//	file path=P [escaped]   input: the content of $DIR/P; with escaped,
//	                        Go's escapes in it (\xff) stand for their bytes
//	cat path=P              print $DIR/P
//	ls [path=P]             list the files under $DIR (or $DIR/P)
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		h := &harness{dir: t.TempDir(), sinks: map[string]exec.Sink{}, handles: map[string][]byte{}}
		var err error
		if h.cat, err = catalog.Open(""); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		defer printsink.SetOutput(&out, &prefixWriter{w: &out, prefix: "stderr: "})()
		h.printed = &out
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			s, err := h.run(d)
			if err != nil {
				s += "error: " + err.Error() + "\n"
			}
			s = strings.ReplaceAll(s, h.dir, "$DIR")
			if s == "" {
				return "ok\n"
			}
			return s
		})
	})
}

type prefixWriter struct {
	w      *bytes.Buffer
	prefix string
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l != "" {
			p.w.WriteString(p.prefix + l)
		}
	}
	return len(b), nil
}

type harness struct {
	dir     string
	cat     *catalog.Catalog
	sinks   map[string]exec.Sink
	handles map[string][]byte
	printed *bytes.Buffer
}

func (h *harness) arg(d *datadriven.TestData, key, def string) string {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			if len(a.Vals) == 0 {
				return "true"
			}
			return strings.Join(a.Vals, ",")
		}
	}
	return def
}

func (h *harness) intArg(d *datadriven.TestData, key string, def int) int {
	n, err := strconv.Atoi(h.arg(d, key, strconv.Itoa(def)))
	if err != nil {
		d.Fatalf(nil, "%s: %v", key, err)
	}
	return n
}

func (h *harness) input(d *datadriven.TestData) []string {
	in := strings.ReplaceAll(d.Input, "$DIR", h.dir)
	if in == "" {
		return nil
	}
	return strings.Split(in, "\n")
}

func (h *harness) spec(d *datadriven.TestData, sink bool) (exec.TableSpec, *catalog.Table, error) {
	name := h.arg(d, "table", "")
	tb, ok := h.cat.Table(name)
	if !ok {
		return exec.TableSpec{}, nil, fmt.Errorf("no table %q", name)
	}
	spec := exec.TableSpec{
		Table:       tb.Name,
		Schema:      tb.Columns,
		Options:     tb.Options,
		Parallelism: h.intArg(d, "parallelism", 1),
		Subtask:     h.intArg(d, "subtask", 0),
		DataDir:     h.dir,
		BatchSize:   h.intArg(d, "batch", 4),
		Mem:         memory.DefaultAllocator,
	}
	if f := h.arg(d, "fields", ""); f != "" && !sink {
		for _, n := range strings.Split(f, ",") {
			i := tb.Columns.Index(n)
			if i < 0 {
				return spec, tb, fmt.Errorf("no column %q", n)
			}
			spec.Fields = append(spec.Fields, i)
		}
	}
	return spec, tb, nil
}

func (h *harness) run(d *datadriven.TestData) (string, error) {
	ctx := context.Background()
	switch d.Cmd {
	case "table":
		lines := h.input(d)
		if len(lines) == 0 {
			return "", fmt.Errorf("table needs a schema")
		}
		schema, err := conntest.ParseSchema(lines[0])
		if err != nil {
			return "", err
		}
		opts, err := conntest.ParseOptions(lines[1:])
		if err != nil {
			return "", err
		}
		tb := &catalog.Table{Name: h.arg(d, "name", "t"), Columns: schema, Connector: opts["connector"], Options: opts}
		if len(opts) == 0 {
			tb.Options = nil
		}
		return "", h.cat.CreateTable(tb, false)

	case "rescale":
		return h.rescale(ctx, d)
	case "scan":
		return h.scan(ctx, d)

	case "insert":
		spec, tb, err := h.spec(d, true)
		if err != nil {
			return "", err
		}
		b, err := conntest.ParseBatch(tb.Columns, h.input(d))
		if err != nil {
			return "", err
		}
		defer b.Rec.Release()
		h.printed.Reset()
		snk, err := registry.Sink(tb.Connector, spec)
		if err != nil {
			return "", err
		}
		defer snk.Close()
		if err := snk.Open(ctx); err != nil {
			return "", err
		}
		if err := snk.Write(ctx, b); err != nil {
			return h.printed.String(), err
		}
		err = snk.Finish(ctx)
		return h.printed.String(), err

	case "sink-open", "sink-write", "sink-precommit", "sink-commit", "sink-finish", "sink-close":
		return h.sinkStep(ctx, d)

	case "restart":
		for k, s := range h.sinks {
			s.Close()
			delete(h.sinks, k)
		}
		memtable.Reset(h.dir)
		return "", nil

	case "drop":
		tb, ok := h.cat.Table(h.arg(d, "table", ""))
		if !ok {
			return "", fmt.Errorf("no table")
		}
		c, _ := catalog.LookupConnector(tb.Connector)
		if c.Drop != nil {
			if err := c.Drop(h.dir, tb); err != nil {
				return "", err
			}
		}
		return "", h.cat.DropTable(tb.Name, false)

	case "file":
		p := filepath.Join(h.dir, h.arg(d, "path", ""))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		content := d.Input
		if h.arg(d, "escaped", "") != "" {
			u, err := strconv.Unquote(`"` + strings.ReplaceAll(strings.ReplaceAll(content, `"`, `\"`), "\n", `\n`) + `"`)
			if err != nil {
				return "", err
			}
			content = u
		}
		if content != "" && h.arg(d, "no-final-newline", "") == "" {
			content += "\n"
		}
		return "", os.WriteFile(p, []byte(content), 0o644)

	case "cat":
		data, err := os.ReadFile(filepath.Join(h.dir, h.arg(d, "path", "")))
		return string(data), err

	case "ls":
		var out []string
		err := filepath.WalkDir(filepath.Join(h.dir, h.arg(d, "path", "")), func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(h.dir, p)
			out = append(out, rel)
			return nil
		})
		sort.Strings(out)
		if len(out) == 0 {
			return "(no files)\n", err
		}
		return strings.Join(out, "\n") + "\n", err
	}
	return "", fmt.Errorf("unknown command %q", d.Cmd)
}

func (h *harness) scan(ctx context.Context, d *datadriven.TestData) (string, error) {
	spec, tb, err := h.spec(d, false)
	if err != nil {
		return "", err
	}
	schema := spec.ProducedSchema()
	var subtasks []int
	if s := h.arg(d, "subtasks", ""); s != "" {
		for _, x := range strings.Split(s, ",") {
			n, _ := strconv.Atoi(x)
			subtasks = append(subtasks, n)
		}
	} else {
		for i := 0; i < spec.Parallelism; i++ {
			subtasks = append(subtasks, i)
		}
	}
	restoreAfter := h.intArg(d, "restore-after", -1)
	sorted, count := h.arg(d, "sort", "") != "", h.arg(d, "count", "") != ""
	var out strings.Builder
	var all []string
	for _, st := range subtasks {
		spec.Subtask = st
		src, err := registry.Source(tb.Connector, spec)
		if err != nil {
			return out.String(), err
		}
		var lines []string
		if restoreAfter >= 0 {
			lines, err = scanWithRestore(ctx, src, spec, tb.Connector, schema, restoreAfter)
		} else {
			if err = src.Open(ctx); err == nil {
				lines, _, err = conntest.Drain(ctx, src, schema)
			}
			src.Close()
		}
		if sorted {
			all = append(all, lines...)
		} else {
			if len(subtasks) > 1 {
				fmt.Fprintf(&out, "subtask %d:\n", st)
			}
			if count {
				fmt.Fprintf(&out, "%d rows\n", len(lines))
			} else {
				for _, l := range lines {
					out.WriteString(l + "\n")
				}
			}
		}
		if err != nil {
			return out.String(), err
		}
	}
	if sorted {
		sort.Strings(all)
		if count {
			fmt.Fprintf(&out, "%d rows\n", len(all))
		} else {
			for _, l := range all {
				out.WriteString(l + "\n")
			}
		}
	}
	return out.String(), nil
}

// rescale reads table with parallelism subtasks, each for after batches,
// snapshots them all, restores the snapshots at parallelism to
// (exec.Rescalable) and reads those subtasks to the end. It prints what
// each old subtask read, then what each new one read; every row must come
// out once.
func (h *harness) rescale(ctx context.Context, d *datadriven.TestData) (string, error) {
	spec, tb, err := h.spec(d, false)
	if err != nil {
		return "", err
	}
	schema := spec.ProducedSchema()
	after, to := h.intArg(d, "after", 1), h.intArg(d, "to", 1)
	var out strings.Builder
	var states [][]byte
	for st := 0; st < spec.Parallelism; st++ {
		spec.Subtask = st
		src, err := registry.Source(tb.Connector, spec)
		if err != nil {
			return out.String(), err
		}
		if err := src.Open(ctx); err != nil {
			src.Close()
			return out.String(), err
		}
		fmt.Fprintf(&out, "subtask %d of %d:\n", st, spec.Parallelism)
		for i := 0; i < after; i++ {
			b, err := conntest.Next(ctx, src)
			if err == io.EOF {
				break
			}
			if err != nil {
				src.Close()
				return out.String(), err
			}
			for _, l := range rowfmt.Lines(schema, b) {
				out.WriteString(l + "\n")
			}
			b.Rec.Release()
		}
		state, err := src.Snapshot()
		src.Close()
		if err != nil {
			return out.String(), err
		}
		states = append(states, state)
	}
	spec.Parallelism = to
	for st := 0; st < to; st++ {
		spec.Subtask = st
		src, err := conntest.Reopen(ctx, tb.Connector, spec, func(s exec.Source) error {
			r, ok := s.(exec.Rescalable)
			if !ok {
				return fmt.Errorf("the %s source cannot restore at another parallelism", tb.Connector)
			}
			return r.RestoreRescaled(states)
		})
		if err != nil {
			return out.String(), err
		}
		lines, _, err := conntest.Drain(ctx, src, schema)
		src.Close()
		fmt.Fprintf(&out, "subtask %d of %d, restored:\n", st, to)
		for _, l := range lines {
			out.WriteString(l + "\n")
		}
		if err != nil {
			return out.String(), err
		}
	}
	return out.String(), nil
}

func scanWithRestore(ctx context.Context, src exec.Source, spec exec.TableSpec, connector string, schema types.Schema, after int) ([]string, error) {
	if err := src.Open(ctx); err != nil {
		src.Close()
		return nil, err
	}
	var lines []string
	for i := 0; i < after; i++ {
		b, err := conntest.Next(ctx, src)
		if err != nil {
			break
		}
		lines = append(lines, rowfmt.Lines(schema, b)...)
		b.Rec.Release()
	}
	state, err := src.Snapshot()
	src.Close()
	if err != nil {
		return lines, err
	}
	lines = append(lines, fmt.Sprintf("-- restored after %d batches --", after))
	src2, err := conntest.Reopen(ctx, connector, spec, func(s exec.Source) error { return s.Restore(state) })
	if err != nil {
		return lines, err
	}
	defer src2.Close()
	rest, _, err := conntest.Drain(ctx, src2, schema)
	return append(lines, rest...), err
}

func (h *harness) sinkStep(ctx context.Context, d *datadriven.TestData) (string, error) {
	spec, tb, err := h.spec(d, true)
	if err != nil {
		return "", err
	}
	key := fmt.Sprintf("%s/%d", tb.Name, spec.Subtask)
	snk := h.sinks[key]
	if d.Cmd != "sink-open" && snk == nil {
		return "", fmt.Errorf("sink %s is not open", key)
	}
	h.printed.Reset()
	switch d.Cmd {
	case "sink-open":
		if snk, err = registry.Sink(tb.Connector, spec); err != nil {
			return "", err
		}
		h.sinks[key] = snk
		err = snk.Open(ctx)
	case "sink-write":
		b, perr := conntest.ParseBatch(tb.Columns, h.input(d))
		if perr != nil {
			return "", perr
		}
		err = snk.Write(ctx, b)
		b.Rec.Release()
	case "sink-precommit":
		var hd []byte
		hd, err = snk.PreCommit(ctx, int64(h.intArg(d, "id", 0)))
		h.handles[fmt.Sprintf("%s/%d", key, h.intArg(d, "id", 0))] = hd
	case "sink-commit":
		id := h.intArg(d, "id", 0)
		err = snk.Commit(ctx, int64(id), h.handles[fmt.Sprintf("%s/%d", key, id)])
	case "sink-finish":
		err = snk.Finish(ctx)
	case "sink-close":
		err = snk.Close()
		delete(h.sinks, key)
	}
	return h.printed.String(), err
}
