package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/connectors/internal/conntest"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	"github.com/streamsql/streamsql/connectors/internal/rowfmt"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// RunDataDriven runs the datadriven files under dir. Each file gets a
// fresh catalog; "$ADDR" in inputs stands for the broker's address.
// Commands:
//
//	cluster [partitions=N] [topics=a,b] [protocol=classic]
//	                      start a broker (each file starts one first)
//	restart-cluster       stop the broker and start an empty one on the
//	                      same port (kafka-dev keeps its data in memory)
//	delete-topic topic=T
//	produce topic=T [partition=P] [txn=commit|abort|open] [ts=MS] [escaped]
//	                      input: messages, "value" or "key|value"
//	                      ('<nil>' for none); with ts, message i has the
//	                      timestamp MS+i; with escaped, Go's escapes in
//	                      a message (\xff, \n) stand for their bytes
//	add-partitions topic=T count=N
//	create-topic topic=T [partitions=N]
//	consume topic=T [uncommitted] [values]
//	                      the messages a read_committed (read_uncommitted)
//	                      reader sees: partition/offset key|value (key|value)
//	table name=T          input: the schema, then key=value options;
//	                      CREATE TABLE through a catalog
//	scan table=T [parallelism=P] [subtasks=i,j] [batch=N] [fields=a,b|none]
//	     [sort|sort-each] [restore-after=K] [idle=N]
//	                      reads each subtask to its end (io.EOF, or N
//	                      polls in a row without data: default 3); with
//	                      restore-after, snapshots after K batches, closes
//	                      and restores a new instance; sort prints the rows
//	                      of all subtasks sorted, without the end marks;
//	                      sort-each sorts each subtask's rows (a subtask
//	                      reading several partitions interleaves them as
//	                      their fetches come)
//	source-open name=S table=T [subtask=I] [parallelism=P] [batch=N]
//	     [fields=a,b] [restore=STATE] [restore-rescaled=STATE0,STATE1...]
//	                      restore-rescaled passes the snapshots of every old
//	                      subtask (exec.Rescalable)
//	source-next name=S [batches=N] [idle=N] [rows=N] [sort]
//	                      with rows, reads until N rows came, however
//	                      long (the test's deadline bounds it)
//	source-snapshot name=S as=STATE
//	source-waiting name=S what the source waits for (exec.Waiter), or
//	                      "nothing"
//	source-notify name=S id=N
//	source-close name=S
//	group-offsets group=G the offsets committed to a consumer group
//	sink-open name=S table=T [subtask=I] [parallelism=P] [interval=D]
//	sink-write name=S     input: rows (+I[1, a], -D[2, b] or 1, a)
//	sink-precommit name=S id=N
//	sink-commit name=S id=N [from=S2]
//	                      commits the handle S2 (default S) pre-committed
//	                      for checkpoint N
//	sink-finish / sink-close / sink-crash name=S
//	                      sink-crash closes the clients without ending any
//	                      transaction, as a killed process
//	insert table=T        input: rows; open, write, finish, close
//	ongoing               the transactional ids with an open transaction
//
// With STREAMSQL_TEST_KAFKA=apache the files run again in subtest
// "apache", against the shared Apache Kafka broker: "cluster" empties it
// and creates the topics, and a topic a table names or a message is
// produced to is created with the cluster's partition count (kfake's
// default for auto-created topics). A file that holds the line
// "# kafka-dev only: <why>" (restart-cluster, which empties kfake) is not
// run there, and the run says so with the reason.
func RunDataDriven(t *testing.T, dir string) {
	runDataDriven(t, dir)
	if ApacheWanted(t) {
		RunApache(t, func(t *testing.T) { runDataDriven(t, dir) })
	}
}

// kafkaDevOnly is the line that marks a file as kafka-dev only.
var kafkaDevOnly = regexp.MustCompile(`(?m)^# kafka-dev only: (.*)$`)

func runDataDriven(t *testing.T, dir string) {
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
		if strings.HasSuffix(path, ".hex") {
			return // a golden state encoding (statecodec.CheckGolden), not a test file
		}
		if onApache(t) {
			if b, err := os.ReadFile(path); err != nil {
				t.Fatal(err)
			} else if m := kafkaDevOnly.FindSubmatch(b); m != nil {
				t.Logf("%s runs on kafka-dev only, not on Apache Kafka: %s", path, m[1])
				return
			}
		}
		h := &harness{t: t, sinks: map[string]exec.Sink{}, schemas: map[string]types.Schema{}, handles: map[string][]byte{}, topics: map[string]string{}, ends: map[string]map[int32]int64{},
			sources: map[string]*openSource{}, states: map[string][]byte{}}
		var err error
		if h.cat, err = catalog.Open(""); err != nil {
			t.Fatal(err)
		}
		defer h.closeAll()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			s, err := h.run(d)
			if err != nil {
				s += "error: " + err.Error() + "\n"
			}
			if h.addr != "" {
				s = strings.ReplaceAll(s, h.addr, "$ADDR")
			}
			s = scrub(s)
			if s == "" {
				return "ok\n"
			}
			return s
		})
	})
}

type openSource struct {
	src  exec.Source
	spec exec.TableSpec
}

type harness struct {
	t       *testing.T
	addr    string
	broker  *Broker
	cat     *catalog.Catalog
	sinks   map[string]exec.Sink
	schemas map[string]types.Schema
	handles map[string][]byte
	topics  map[string]string          // a sink's topic
	ends    map[string]map[int32]int64 // a precommitted transaction's end offsets
	sources map[string]*openSource
	states  map[string][]byte
}

func (h *harness) closeAll() {
	for _, s := range h.sinks {
		s.Close()
	}
	for _, s := range h.sources {
		s.src.Close()
	}
}

func arg(d *datadriven.TestData, key, def string) string {
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

func intArg(d *datadriven.TestData, key string, def int) int {
	n, err := strconv.Atoi(arg(d, key, strconv.Itoa(def)))
	if err != nil {
		d.Fatalf(nil, "%s: %v", key, err)
	}
	return n
}

func (h *harness) input(d *datadriven.TestData) []string {
	in := strings.ReplaceAll(d.Input, "$ADDR", h.addr)
	if in == "" {
		return nil
	}
	return strings.Split(in, "\n")
}

func (h *harness) spec(d *datadriven.TestData, sink bool) (exec.TableSpec, *catalog.Table, error) {
	name := arg(d, "table", "")
	tb, ok := h.cat.Table(name)
	if !ok {
		return exec.TableSpec{}, nil, fmt.Errorf("no table %q", name)
	}
	interval, err := checkpoint.ParseDuration(arg(d, "interval", "1s"))
	if err != nil {
		return exec.TableSpec{}, nil, err
	}
	spec := exec.TableSpec{
		Table: tb.Name, Schema: tb.Columns, Options: tb.Options,
		Parallelism: intArg(d, "parallelism", 1), Subtask: intArg(d, "subtask", 0),
		BatchSize: intArg(d, "batch", 4), Mem: memory.DefaultAllocator,
		Job: arg(d, "job", "job"), OperatorID: "op-" + tb.Name, CheckpointInterval: interval, ExactlyOnce: true,
	}
	if f := arg(d, "fields", ""); f == "none" {
		spec.Fields = []int{}
	} else if f != "" && !sink {
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
	case "cluster":
		var opts []kfake.Opt
		if arg(d, "protocol", "") == "classic" {
			opts = append(opts, kfake.MaxVersions(kversion.V3_9_0()))
		}
		var topics []string
		if s := arg(d, "topics", ""); s != "" {
			topics = strings.Split(s, ",")
		}
		h.broker = StartBroker(h.t, int32(intArg(d, "partitions", 1)), topics, opts...)
		h.addr = h.broker.Addr
		return "", nil

	case "restart-cluster":
		h.broker.Restart()
		return "", nil

	case "delete-topic":
		resp, err := kadm.NewClient(Client(h.t, h.addr)).DeleteTopics(ctx, arg(d, "topic", ""))
		if err == nil {
			err = resp.Error()
		}
		if err == nil {
			err = WaitTopics(h.addr, false, arg(d, "topic", ""))
		}
		return "", err

	case "produce":
		if h.broker != nil {
			h.broker.EnsureTopic(arg(d, "topic", ""))
		}
		msgs := h.input(d)
		if arg(d, "escaped", "") != "" {
			for i, m := range msgs {
				u, err := strconv.Unquote(`"` + strings.ReplaceAll(m, `"`, `\"`) + `"`)
				if err != nil {
					return "", fmt.Errorf("message %d: %v", i, err)
				}
				msgs[i] = u
			}
		}
		return "", produceAt(h.addr, arg(d, "topic", ""), int32(intArg(d, "partition", -1)), arg(d, "txn", ""),
			int64(intArg(d, "ts", 0)), msgs...)

	case "add-partitions":
		resp, err := kadm.NewClient(Client(h.t, h.addr)).CreatePartitions(ctx, intArg(d, "count", 1), arg(d, "topic", ""))
		if err == nil {
			err = resp.Error()
		}
		return "", err

	case "create-topic":
		resp, err := kadm.NewClient(Client(h.t, h.addr)).CreateTopics(ctx, int32(intArg(d, "partitions", 1)), 1, nil, arg(d, "topic", ""))
		if err == nil {
			err = resp.Error()
		}
		if err == nil {
			err = WaitTopics(h.addr, true, arg(d, "topic", ""))
		}
		return "", err

	case "consume":
		lines, err := read(h.addr, arg(d, "topic", ""), arg(d, "uncommitted", "") == "")
		if arg(d, "values", "") != "" {
			lines = Values(lines)
		}
		return joinLines(lines), err

	case "ongoing":
		return joinLines(Ongoing(h.t, h.addr)), nil

	case "table":
		lines := h.input(d)
		if len(lines) == 0 {
			return "", fmt.Errorf("table needs a schema")
		}
		schema, err := conntest.ParseSchema(lines[0])
		if err != nil {
			return "", err
		}
		var pk []string
		if i := strings.Index(lines[0], "PRIMARY KEY"); i >= 0 {
			return "", fmt.Errorf("give the primary key as pk=a,b")
		}
		if s := arg(d, "pk", ""); s != "" {
			pk = strings.Split(s, ",")
		}
		opts, err := conntest.ParseOptions(lines[1:])
		if err != nil {
			return "", err
		}
		tb := &catalog.Table{Name: arg(d, "name", "t"), Columns: schema, PrimaryKey: pk, Connector: opts["connector"], Options: opts}
		if h.broker != nil {
			h.broker.EnsureTopic(opts["topic"])
		}
		return "", h.cat.CreateTable(tb, false)

	case "scan":
		return h.scan(ctx, d)

	case "source-open":
		spec, tb, err := h.spec(d, false)
		if err != nil {
			return "", err
		}
		src, err := registry.Source(tb.Connector, spec)
		if err != nil {
			return "", err
		}
		if st := arg(d, "restore", ""); st != "" {
			if err := src.Restore(h.states[st]); err != nil {
				return "", err
			}
		}
		if sts := arg(d, "restore-rescaled", ""); sts != "" {
			var states [][]byte
			for _, st := range strings.Split(sts, ",") {
				states = append(states, h.states[st])
			}
			r, ok := src.(exec.Rescalable)
			if !ok {
				return "", fmt.Errorf("source cannot be rescaled")
			}
			if err := r.RestoreRescaled(states); err != nil {
				return "", err
			}
		}
		h.sources[arg(d, "name", "")] = &openSource{src: src, spec: spec}
		return "", src.Open(ctx)

	case "source-next", "source-snapshot", "source-notify", "source-waiting", "source-close":
		name := arg(d, "name", "")
		s := h.sources[name]
		if s == nil {
			return "", fmt.Errorf("source %s is not open", name)
		}
		switch d.Cmd {
		case "source-next":
			idle := intArg(d, "idle", 3)
			if n := intArg(d, "rows", 0); n > 0 {
				lines, err := drainRows(ctx, s.src, s.spec, n)
				sort.Strings(lines)
				return joinLines(lines), err
			}
			lines, err := drain(ctx, s.src, s.spec, intArg(d, "batches", 1<<30), idle)
			if arg(d, "sort", "") != "" {
				sort.Strings(lines)
			}
			return joinLines(lines), err
		case "source-snapshot":
			st, err := s.src.Snapshot()
			h.states[arg(d, "as", "")] = st
			return "", err
		case "source-notify":
			// The kafka source commits to its consumer group in the
			// background: wait for the commit, so that group-offsets
			// next reads what it committed.
			err := s.src.(exec.CheckpointListener).NotifyCheckpointComplete(ctx, int64(intArg(d, "id", 0)))
			if w, ok := s.src.(interface{ WaitGroupCommits() }); ok {
				w.WaitGroupCommits()
			}
			return "", err
		case "source-waiting":
			w, ok := s.src.(exec.Waiter)
			if !ok || w.Waiting() == "" {
				return "nothing", nil
			}
			return w.Waiting(), nil
		default:
			delete(h.sources, name)
			return "", s.src.Close()
		}

	case "group-offsets":
		// A group without committed offsets is answered GROUP_ID_NOT_FOUND
		// by kafka-dev and, at times, by an empty list by Apache Kafka;
		// the source takes both as no offsets, and so does this.
		resp, err := kadm.NewClient(Client(h.t, h.addr)).FetchOffsets(ctx, arg(d, "group", ""))
		if err == nil {
			err = resp.Error()
		}
		if errors.Is(err, kerr.GroupIDNotFound) {
			return "no offsets committed\n", nil
		}
		if err != nil {
			return "", err
		}
		var out []string
		for _, o := range resp.Sorted() {
			out = append(out, fmt.Sprintf("%s/%d: %d", o.Topic, o.Partition, o.At))
		}
		if len(out) == 0 {
			return "no offsets committed\n", nil
		}
		return joinLines(out), nil

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
		snk, err := registry.Sink(tb.Connector, spec)
		if err != nil {
			return "", err
		}
		defer snk.Close()
		if err := snk.Open(ctx); err != nil {
			return "", err
		}
		if err := snk.Write(ctx, b); err != nil {
			return "", err
		}
		return "", snk.Finish(ctx)

	case "sink-open", "sink-write", "sink-precommit", "sink-commit", "sink-finish", "sink-close", "sink-crash":
		return h.sinkStep(ctx, d)
	}
	return "", fmt.Errorf("unknown command %q", d.Cmd)
}

func joinLines(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// drainRows reads from src until it has n rows or more (sorted, as
// partitions interleave in any order), for at most a minute: a backstop
// that turns a source that never delivers into a failure, not a hang.
func drainRows(ctx context.Context, src exec.Source, spec exec.TableSpec, n int) ([]string, error) {
	var lines []string
	deadline := time.Now().Add(time.Minute)
	for len(lines) < n {
		if time.Now().After(deadline) {
			return lines, fmt.Errorf("%d of %d rows after a minute", len(lines), n)
		}
		b, err := src.Next(ctx)
		switch {
		case errors.Is(err, exec.ErrNoData):
			continue
		case err == io.EOF:
			return append(lines, "(end)"), nil
		case err != nil:
			return lines, err
		}
		lines = append(lines, rowfmt.Lines(spec.ProducedSchema(), b)...)
		b.Rec.Release()
	}
	return lines, nil
}

// drain reads up to maxBatches batches from src, until io.EOF or idle
// polls in a row without data; it reports skipped records.
func drain(ctx context.Context, src exec.Source, spec exec.TableSpec, maxBatches, idle int) ([]string, error) {
	var lines []string
	quiet := 0
	for n := 0; n < maxBatches; {
		b, err := src.Next(ctx)
		switch {
		case errors.Is(err, exec.ErrNoData):
			if quiet++; quiet >= idle {
				return withSkipped(lines, src), nil
			}
			continue
		case err == io.EOF:
			return append(withSkipped(lines, src), "(end)"), nil
		case err != nil:
			return withSkipped(lines, src), err
		}
		quiet = 0
		n++
		lines = append(lines, rowfmt.Lines(spec.ProducedSchema(), b)...)
		b.Rec.Release()
	}
	return withSkipped(lines, src), nil
}

func withSkipped(lines []string, src exec.Source) []string {
	if s, ok := src.(interface{ SkippedRecords() int64 }); ok && s.SkippedRecords() > 0 {
		lines = append(lines, fmt.Sprintf("(skipped %d)", s.SkippedRecords()))
	}
	if s, ok := src.(exec.TombstoneCounter); ok && s.TombstonesSkipped() > 0 {
		lines = append(lines, fmt.Sprintf("(tombstones %d)", s.TombstonesSkipped()))
	}
	return lines
}

func (h *harness) scan(ctx context.Context, d *datadriven.TestData) (string, error) {
	spec, tb, err := h.spec(d, false)
	if err != nil {
		return "", err
	}
	var subtasks []int
	if s := arg(d, "subtasks", ""); s != "" {
		for _, x := range strings.Split(s, ",") {
			n, _ := strconv.Atoi(x)
			subtasks = append(subtasks, n)
		}
	} else {
		for i := 0; i < spec.Parallelism; i++ {
			subtasks = append(subtasks, i)
		}
	}
	restoreAfter := intArg(d, "restore-after", -1)
	idle := intArg(d, "idle", 3)
	sorted := arg(d, "sort", "") != ""
	var out strings.Builder
	var all []string
	for _, st := range subtasks {
		spec.Subtask = st
		lines, err := h.scanOne(ctx, tb.Connector, spec, restoreAfter, idle)
		if sorted {
			for _, l := range lines {
				if l != "(end)" && !strings.HasPrefix(l, "-- restored") {
					all = append(all, l)
				}
			}
		} else {
			if len(subtasks) > 1 {
				fmt.Fprintf(&out, "subtask %d:\n", st)
			}
			if arg(d, "sort-each", "") != "" {
				sort.SliceStable(lines, func(a, b int) bool {
					// The end mark stays last; rows sort among themselves.
					return lines[b] == "(end)" && lines[a] != "(end)" ||
						lines[a] != "(end)" && lines[b] != "(end)" && lines[a] < lines[b]
				})
			}
			out.WriteString(joinLines(lines))
		}
		if err != nil {
			return out.String(), err
		}
	}
	if sorted {
		sort.Strings(all)
		out.WriteString(joinLines(all))
	}
	return out.String(), nil
}

func (h *harness) scanOne(ctx context.Context, connector string, spec exec.TableSpec, restoreAfter, idle int) ([]string, error) {
	src, err := registry.Source(connector, spec)
	if err != nil {
		return nil, err
	}
	if err := src.Open(ctx); err != nil {
		src.Close()
		return nil, err
	}
	if restoreAfter < 0 {
		defer src.Close()
		return drain(ctx, src, spec, 1<<30, idle)
	}
	lines, err := drain(ctx, src, spec, restoreAfter, idle)
	if err != nil {
		src.Close()
		return lines, err
	}
	state, err := src.Snapshot()
	src.Close()
	if err != nil {
		return lines, err
	}
	lines = append(lines, fmt.Sprintf("-- restored after %d batches --", restoreAfter))
	src2, err := conntest.Reopen(ctx, connector, spec, func(s exec.Source) error { return s.Restore(state) })
	if err != nil {
		return lines, err
	}
	defer src2.Close()
	rest, err := drain(ctx, src2, spec, 1<<30, idle)
	return append(lines, rest...), err
}

func (h *harness) sinkStep(ctx context.Context, d *datadriven.TestData) (string, error) {
	name := arg(d, "name", "")
	snk := h.sinks[name]
	if d.Cmd != "sink-open" && snk == nil {
		return "", fmt.Errorf("sink %s is not open", name)
	}
	switch d.Cmd {
	case "sink-open":
		spec, tb, err := h.spec(d, true)
		if err != nil {
			return "", err
		}
		if snk, err = registry.Sink(tb.Connector, spec); err != nil {
			return "", err
		}
		h.sinks[name], h.schemas[name], h.topics[name] = snk, tb.Columns, tb.Options["topic"]
		return "", snk.Open(ctx)
	case "sink-write":
		b, err := conntest.ParseBatch(h.schemas[name], h.input(d))
		if err != nil {
			return "", err
		}
		defer b.Rec.Release()
		return "", snk.Write(ctx, b)
	case "sink-precommit":
		id := intArg(d, "id", 0)
		hd, err := snk.PreCommit(ctx, int64(id))
		if err != nil {
			return "", err
		}
		h.handles[fmt.Sprintf("%s/%d", name, id)] = hd
		// Every record of the transaction is below the topic's end now.
		ends, err := h.endOffsets(ctx, h.topics[name], false)
		h.ends[fmt.Sprintf("%s/%d", name, id)] = ends
		return "", err
	case "sink-commit":
		id := intArg(d, "id", 0)
		hd, ok := h.handles[fmt.Sprintf("%s/%d", arg(d, "from", name), id)]
		if !ok {
			return "", fmt.Errorf("no handle of %s for checkpoint %d", arg(d, "from", name), id)
		}
		if err := snk.Commit(ctx, int64(id), hd); err != nil {
			return "", err
		}
		return "", h.awaitMarkers(ctx, h.topics[name], h.ends[fmt.Sprintf("%s/%d", arg(d, "from", name), id)])
	case "sink-finish":
		return "", snk.Finish(ctx)
	case "sink-crash":
		delete(h.sinks, name)
		a, ok := snk.(interface{ Abandon() })
		if !ok {
			return "", fmt.Errorf("sink %s cannot be abandoned", name)
		}
		a.Abandon()
		return "", nil
	default:
		delete(h.sinks, name)
		return "", snk.Close()
	}
}

// endOffsets lists the end offsets of topic's partitions: the high
// watermarks, or the last stable offsets (committed).
func (h *harness) endOffsets(ctx context.Context, topic string, committed bool) (map[int32]int64, error) {
	if topic == "" {
		return nil, nil
	}
	adm := kadm.NewClient(Client(h.t, h.addr))
	list := adm.ListEndOffsets
	if committed {
		list = adm.ListCommittedOffsets
	}
	resp, err := list(ctx, topic)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return nil, err
	}
	ends := map[int32]int64{}
	resp.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
	return ends, nil
}

// awaitMarkers waits until a committed transaction is what a
// read_committed reader sees: a broker acknowledges the commit once it
// has decided it, and writes the markers into the partitions after, so
// the last stable offsets reach the transaction's end (ends, listed at
// its pre-commit) a little later.
func (h *harness) awaitMarkers(ctx context.Context, topic string, ends map[int32]int64) error {
	if len(ends) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		stable, err := h.endOffsets(ctx, topic, true)
		if err != nil {
			return err
		}
		behind := false
		for p, end := range ends {
			if stable[p] < end {
				behind = true
			}
		}
		if !behind {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the commit's markers did not reach %s: last stable offsets %v, the transaction ends at %v", topic, stable, ends)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Values that change from run to run, in errors: transactional ids'
// sequence numbers (the wall clock), producer ids and topic ids.
var (
	scrubSeq   = regexp.MustCompile(`(-\d+-)\d{13}\b`)
	scrubPID   = regexp.MustCompile(`producer id \d+`)
	scrubTopic = regexp.MustCompile(`(topic id |now )[A-Za-z0-9_-]{22}`)
)

func scrub(s string) string {
	s = scrubSeq.ReplaceAllString(s, "${1}<seq>")
	s = scrubPID.ReplaceAllString(s, "producer id <pid>")
	return scrubTopic.ReplaceAllString(s, "${1}<id>")
}
