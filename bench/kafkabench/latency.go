package main

// The latency mode (--rate): end-to-end latency at a fixed input rate.
//
// For each rate of --rate and each contender, a producer in this process
// writes clicks to the contender's own input topic at that rate, each
// record's value carrying "pt", its produce time (microseconds since the
// epoch, read when the record is handed to the client). The contender's
// job passes click_id and pt through to its output topic, and a
// read_committed consumer here notes when each record becomes visible to
// it: its latency is that moment less pt, both on this process's clock.
// Once the first output record is seen (the contender runs end to end),
// the producer goes to the rate, --warmup later the measured window opens; the records produced in the
// next --duration are measured, each of which must be seen. Until the
// first output the producer writes 100 records/s only, so that a
// contender's start leaves no backlog behind. Percentiles
// are exact (every record's latency is kept).

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// latencyContenders are the --only keys of the latency mode, in the order
// each rate runs them.
const latencyContenders = "alo,eo-1s,eo-200ms,kstreams-alo,kstreams-eo-1s,kstreams-eo-200ms,flink-alo,flink-eo-1s,flink-eo-200ms"

// latContender is one engine with one guarantee and interval.
type latContender struct {
	key, engine string // engine: streamsql, kstreams or flink
	exactlyOnce bool
	interval    time.Duration
}

func (l latContender) label() string {
	g := "at-least-once"
	if l.exactlyOnce {
		g = fmt.Sprintf("exactly-once, %v checkpoints", l.interval)
		if l.engine == "kstreams" {
			g = fmt.Sprintf("exactly_once_v2, %v commits", l.interval)
		}
	}
	switch l.engine {
	case "kstreams":
		return nameKStreams + " " + g
	case "flink":
		return nameFlink + " " + g
	}
	return "streamsql " + g
}

func latencyContenderList() []latContender {
	var out []latContender
	for _, k := range strings.Split(latencyContenders, ",") {
		lc := latContender{key: k, engine: "streamsql", interval: time.Second}
		rest := k
		if e, r, ok := strings.Cut(k, "-"); ok && (e == "kstreams" || e == "flink") {
			lc.engine, rest = e, r
		}
		switch rest {
		case "eo-1s":
			lc.exactlyOnce = true
		case "eo-200ms":
			lc.exactlyOnce, lc.interval = true, 200*time.Millisecond
		}
		out = append(out, lc)
	}
	return out
}

// latResult is one contender's measurement at one rate.
type latResult struct {
	lc       latContender
	rate     int
	n        int // records measured
	p50, p99 time.Duration
	p999     time.Duration
	max      time.Duration
	mean     time.Duration
	achieved float64 // records/s the producer reached over the window
	cpu      time.Duration
	window   time.Duration
	err      error
}

// rateSpec is one value of --rate: records/s, or a share of the measured
// maximum ("50%").
type rateSpec struct {
	perSec int
	share  float64
}

func parseRates(s string) ([]rateSpec, error) {
	var out []rateSpec
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if p, ok := strings.CutSuffix(f, "%"); ok {
			v, err := strconv.ParseFloat(p, 64)
			if err != nil || v <= 0 || v > 100 {
				return nil, fmt.Errorf("--rate %q: a share must be in (0%%, 100%%]", f)
			}
			out = append(out, rateSpec{share: v / 100})
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("--rate %q: want records per second (a positive integer) or a share of the maximum (50%%)", f)
		}
		out = append(out, rateSpec{perSec: v})
	}
	return out, nil
}

// latencySQL is the streamsql latency job: click_id and pt passed through
// from the input topic to the output topic. bounded: the source stops at
// the latest offsets of its start (the maximum's measurement).
func latencySQL(c config, b *broker, name, in, out string, exactlyOnce, bounded bool, interval time.Duration) string {
	guarantee, mode, txn := "at-least-once", "AT_LEAST_ONCE", ""
	if exactlyOnce {
		guarantee, mode = "exactly-once", "EXACTLY_ONCE"
		txn = fmt.Sprintf(",\n  'sink.transactional-id-prefix' = '%s'", name)
	}
	bound := ""
	if bounded {
		bound = "\n  'scan.bounded.mode' = 'latest-offset',"
	}
	return fmt.Sprintf(`CREATE TABLE clicks (
  click_id BIGINT,
  app_id   STRING,
  user_id  BIGINT,
  ts       TIMESTAMP(3),
  pt       BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '%[1]s',
  'properties.bootstrap.servers' = '%[2]s',
  'properties.group.id' = '%[3]s',
  'scan.startup.mode' = 'earliest-offset',%[9]s
  'format' = 'json'
);
CREATE TABLE passed (
  click_id BIGINT,
  pt       BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '%[4]s',
  'properties.bootstrap.servers' = '%[2]s',
  'format' = 'json',
  'sink.delivery-guarantee' = '%[5]s'%[6]s
);
SET 'execution.checkpointing.interval' = '%[7]dms';
SET 'execution.checkpointing.mode' = '%[8]s';
SET 'parallelism.default' = '%[10]d';
SET 'pipeline.name' = '%[3]s';
INSERT INTO passed SELECT click_id, pt FROM clicks;
`, in, b.addr, name, out, guarantee, txn, interval.Milliseconds(), mode, bound, c.parallelism)
}

// clickWithPT appends the JSON of click id with produce time pt (µs).
func clickWithPT(v []byte, id int64, app []byte, pt int64) []byte {
	v = append(v, `{"click_id":`...)
	v = strconv.AppendInt(v, id, 10)
	v = append(v, `,"app_id":"`...)
	v = append(v, app...)
	v = append(v, `","user_id":`...)
	v = strconv.AppendUint(v, mix(uint64(id)<<1)%100000, 10)
	v = append(v, `,"ts":"`...)
	v = baseTime.Add(time.Duration(id)*time.Millisecond).AppendFormat(v, "2006-01-02 15:04:05.000")
	v = append(v, `","pt":`...)
	v = strconv.AppendInt(v, pt, 10)
	return append(v, '}')
}

// pacedProducer writes clicks to a topic at a fixed rate until stopped.
type pacedProducer struct {
	cl *kgo.Client
	// rate is the records per second it produces now.
	rate atomic.Int64
	keys [][]byte
	// windowStart and windowEnd (µs since the epoch; 0: not yet known)
	// bound the measured window; inWindow counts the records produced in it.
	windowStart, windowEnd atomic.Int64
	inWindow               atomic.Int64
	produced               atomic.Int64
	// limit, if positive, is the number of records after which it stops.
	limit    int64
	firstErr atomic.Value
	done     chan struct{}
}

func startPaced(ctx context.Context, addr, topic string, rate, keys int, limit int64) (*pacedProducer, error) {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(addr),
		kgo.DefaultProduceTopic(topic),
		// No linger (franz-go's default is 10 ms): a record is sent as
		// soon as the connection is free, so that the producer adds as
		// little as it can to what is measured.
		kgo.ProducerLinger(0),
		kgo.MaxBufferedRecords(1<<20),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
	)
	if err != nil {
		return nil, err
	}
	p := &pacedProducer{cl: cl, limit: limit, done: make(chan struct{})}
	p.rate.Store(int64(rate))
	for k := 0; k < keys; k++ {
		p.keys = append(p.keys, []byte("app-"+strconv.Itoa(k)))
	}
	go p.run(ctx)
	return p, nil
}

// run produces, every millisecond, the records due by then at the rate
// of each moment, each stamped with the time it is produced.
func (p *pacedProducer) run(ctx context.Context) {
	defer close(p.done)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	last := time.Now()
	var id int64
	var due float64
	cb := func(_ *kgo.Record, err error) {
		if err != nil {
			p.firstErr.CompareAndSwap(nil, err)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := time.Now()
		due += now.Sub(last).Seconds() * float64(p.rate.Load())
		last = now
		if p.limit > 0 {
			due = min(due, float64(p.limit))
		}
		pt := now.UnixMicro()
		end := p.windowEnd.Load()
		if end != 0 && pt >= end {
			return
		}
		inWindow := pt >= p.windowStart.Load() && p.windowStart.Load() != 0
		for ; float64(id) < due; id++ {
			k := p.keys[mix(uint64(id))%uint64(len(p.keys))]
			v := clickWithPT(make([]byte, 0, 112), id, k, pt)
			p.cl.Produce(ctx, &kgo.Record{Key: k, Value: v}, cb)
			if inWindow {
				p.inWindow.Add(1)
			}
		}
		p.produced.Store(id)
		if p.limit > 0 && id == p.limit {
			return
		}
	}
}

// close waits for run to return, then for the records produced to be
// acknowledged.
func (p *pacedProducer) close() {
	<-p.done
	if err := p.cl.Flush(context.Background()); err != nil {
		p.firstErr.CompareAndSwap(nil, err)
	}
	p.cl.Close()
}

// latencyReader reads an output topic read_committed and keeps the
// latency of every record whose pt falls in the window.
type latencyReader struct {
	mu        sync.Mutex
	lat       []time.Duration
	start     int64 // window, µs since the epoch (0: not yet open)
	end       int64
	seen      atomic.Int64 // every record read
	firstSeen chan struct{}
	err       error
	stop      context.CancelFunc
	exited    chan struct{}
}

func startLatencyReader(addr, topic string) (*latencyReader, error) {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(addr),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(100*time.Millisecond),
	)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &latencyReader{firstSeen: make(chan struct{}), stop: cancel, exited: make(chan struct{})}
	go func() {
		defer close(r.exited)
		defer cl.Close()
		first := true
		for {
			fs := cl.PollFetches(ctx)
			now := time.Now().UnixMicro()
			if ctx.Err() != nil {
				return
			}
			var ferr error
			fs.EachError(func(t string, p int32, err error) { ferr = fmt.Errorf("reading %s[%d]: %w", t, p, err) })
			r.mu.Lock()
			fs.EachRecord(func(rec *kgo.Record) {
				pt, err := parsePT(rec.Value)
				if err != nil {
					ferr = fmt.Errorf("%s[%d] offset %d: %v: %q", rec.Topic, rec.Partition, rec.Offset, err, rec.Value)
					return
				}
				r.seen.Add(1)
				if r.start != 0 && pt >= r.start && pt < r.end {
					r.lat = append(r.lat, time.Duration(now-pt)*time.Microsecond)
				}
			})
			if ferr != nil && r.err == nil {
				r.err = ferr
			}
			r.mu.Unlock()
			if first && r.seen.Load() > 0 {
				first = false
				close(r.firstSeen)
			}
		}
	}()
	return r, nil
}

// parsePT reads the "pt" field of a JSON object.
func parsePT(v []byte) (int64, error) {
	i := bytes.Index(v, []byte(`"pt":`))
	if i < 0 {
		return 0, fmt.Errorf("no pt")
	}
	rest := v[i+5:]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	return strconv.ParseInt(string(rest[:j]), 10, 64)
}

func (r *latencyReader) window(start, end int64) {
	r.mu.Lock()
	r.start, r.end = start, end
	r.mu.Unlock()
}

func (r *latencyReader) measured() (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.lat), r.err
}

func (r *latencyReader) close() []time.Duration {
	r.stop()
	<-r.exited
	return r.lat
}

// runLatency is the latency mode: on each broker, the maximum (if a rate
// is a share of it), then every rate with every contender.
func runLatency(base context.Context, c config, rates []rateSpec, known []latContender, want func(string) bool, work string, peers map[string]*javaPeer, kind string) (string, error) {
	var topics []string
	topics = append(topics, "max_in", "max_out")
	for i := range rates {
		for _, lc := range known {
			topics = append(topics, fmt.Sprintf("in_%s_%d", lc.key, i), fmt.Sprintf("out_%s_%d", lc.key, i))
		}
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return "", err
	}
	b, err := startBroker(c, kind, work, topics...)
	if err != nil {
		return "", err
	}
	defer b.stop()
	logf("%s on %s (%d partitions)", b.desc, b.addr, c.partitions)
	var b2 strings.Builder
	maxRate := 0.0
	for _, r := range rates {
		if r.share > 0 {
			maxRate, err = measureMax(base, c, b, work)
			if err != nil {
				return "", fmt.Errorf("measuring the maximum: %w", err)
			}
			fmt.Fprintf(&b2, "Maximum: %.0f records/s, the streamsql at-least-once job's throughput with the producer and the reader running: %d records produced as fast as the producer goes, over the time from the first produced to the last seen in the output (the job warmed up first).\n\n",
				maxRate, c.maxRecords)
			break
		}
	}
	for i, r := range rates {
		rate := r.perSec
		desc := fmt.Sprintf("%d records/s", rate)
		if r.share > 0 {
			rate = int(r.share * maxRate)
			desc = fmt.Sprintf("%d records/s (%.0f%% of the maximum, %.0f records/s)", rate, 100*r.share, maxRate)
		}
		var rs []latResult
		for _, lc := range known {
			if !want(lc.key) {
				continue
			}
			if base.Err() != nil {
				return "", fmt.Errorf("interrupted")
			}
			ctx, cancel := context.WithTimeout(base, c.timeout)
			res := runLatencyOne(ctx, c, b, lc, rate, i, work, peers)
			cancel()
			if res.err != nil {
				logf("%s at %d records/s: FAILED: %v", lc.label(), rate, res.err)
			} else {
				logf("%s at %d records/s: %d records, p50 %v, p99 %v, p99.9 %v, max %v (producer %.0f records/s)",
					lc.label(), rate, res.n, res.p50, res.p99, res.p999, res.max, res.achieved)
			}
			rs = append(rs, res)
		}
		b2.WriteString(formatLatencyTable(c, desc, rs))
	}
	return "## " + b.desc + "\n\n" + b2.String(), nil
}

// measureMax is the streamsql at-least-once latency job's throughput in
// the setting of the measurements: its job runs (warmed up by a trickle
// of records until its first output), then --max-records are produced as
// fast as the producer goes while the reader reads the output; the
// maximum is those records over the time from the first of them produced
// to the last seen in the output. The producer, the reader, the broker and
// the job share the machine, as they do at a fixed rate.
func measureMax(ctx context.Context, c config, b *broker, work string) (float64, error) {
	dir := filepath.Join(work, "max")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	file := filepath.Join(dir, "job.sql")
	if err := os.WriteFile(file, []byte(latencySQL(c, b, "bench-max", "max_in", "max_out", false, false, time.Second)), 0o644); err != nil {
		return 0, err
	}
	reader, err := startLatencyReader(b.addr, "max_out")
	if err != nil {
		return 0, err
	}
	defer reader.close()
	out := &lockedBuffer{}
	cmd := exec.Command(c.streamsql, "--data-dir", filepath.Join(dir, "data"), "-f", file)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	warm, err := startPaced(ctx, b.addr, "max_in", 1000, c.keys, 0)
	if err != nil {
		return 0, err
	}
	select {
	case <-reader.firstSeen:
	case <-ctx.Done():
		return 0, fmt.Errorf("no output: %v; output:\n%s", ctx.Err(), tail(out.String()))
	}
	warm.windowEnd.Store(1) // stop
	warm.close()
	base := warm.produced.Load()
	for reader.seen.Load() < base {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	p, err := startPaced(ctx, b.addr, "max_in", 100_000_000, c.keys, int64(c.maxRecords))
	if err != nil {
		return 0, err
	}
	for reader.seen.Load() < base+int64(c.maxRecords) {
		if ctx.Err() != nil {
			return 0, fmt.Errorf("%d of %d records seen: %v; output:\n%s", reader.seen.Load()-base, c.maxRecords, ctx.Err(), tail(out.String()))
		}
		time.Sleep(time.Millisecond)
	}
	took := time.Since(start)
	p.close()
	if err, _ := p.firstErr.Load().(error); err != nil {
		return 0, err
	}
	logf("maximum: %d records produced and passed through in %v: %.0f records/s", c.maxRecords, took.Round(time.Millisecond), float64(c.maxRecords)/took.Seconds())
	return float64(c.maxRecords) / took.Seconds(), nil
}

// runLatencyOne measures one contender at one rate.
func runLatencyOne(ctx context.Context, c config, b *broker, lc latContender, rate, idx int, work string, peers map[string]*javaPeer) latResult {
	res := latResult{lc: lc, rate: rate}
	in, outTopic := fmt.Sprintf("in_%s_%d", lc.key, idx), fmt.Sprintf("out_%s_%d", lc.key, idx)
	name := fmt.Sprintf("lat-%s-%d", lc.key, idx)
	dir := filepath.Join(work, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		res.err = err
		return res
	}
	reader, err := startLatencyReader(b.addr, outTopic)
	if err != nil {
		res.err = err
		return res
	}
	var cmd *exec.Cmd
	switch lc.engine {
	case "streamsql":
		file := filepath.Join(dir, "job.sql")
		if err := os.WriteFile(file, []byte(latencySQL(c, b, name, in, outTopic, lc.exactlyOnce, false, lc.interval)), 0o644); err != nil {
			res.err = err
			return res
		}
		cmd = exec.Command(c.streamsql, "--data-dir", filepath.Join(dir, "data"), "-f", file)
	case "kstreams":
		g := "at_least_once"
		if lc.exactlyOnce {
			g = "exactly_once_v2"
		}
		tmp, state := filepath.Join(dir, "tmp"), filepath.Join(dir, "state")
		os.MkdirAll(tmp, 0o755)
		os.MkdirAll(state, 0o755)
		cmd = peers["kstreams"].java(c, tmp, b.addr, name, in, outTopic, state, "pass", g, strconv.FormatInt(lc.interval.Milliseconds(), 10))
	case "flink":
		g := "at-least-once"
		if lc.exactlyOnce {
			g = "exactly-once"
		}
		tmp, chk := filepath.Join(dir, "tmp"), filepath.Join(dir, "checkpoints")
		os.MkdirAll(tmp, 0o755)
		os.MkdirAll(chk, 0o755)
		cmd = peers["flink"].java(c, tmp, b.addr, name, in, outTopic, chk, "pass", g, strconv.FormatInt(lc.interval.Milliseconds(), 10))
	}
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		reader.close()
		res.err = err
		return res
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	pctx, stopProducing := context.WithCancel(ctx)
	defer func() {
		stopProducing()
		cmd.Process.Kill()
	}()
	// A trickle until the contender's first output: a Java peer takes
	// seconds to start, and a backlog at the full rate would be measured
	// as its latency.
	prod, err := startPaced(pctx, b.addr, in, 100, c.keys, 0)
	if err != nil {
		reader.close()
		res.err = err
		return res
	}
	fail := func(err error) latResult {
		stopProducing()
		prod.close()
		reader.close()
		cmd.Process.Kill()
		res.err = fmt.Errorf("%w; output:\n%s", err, tail(out.String()))
		return res
	}
	select {
	case <-reader.firstSeen:
	case err := <-exited:
		exited <- err
		return fail(fmt.Errorf("exited before its first output: %v", err))
	case <-ctx.Done():
		return fail(fmt.Errorf("no output: %w", ctx.Err()))
	}
	prod.rate.Store(int64(rate))
	start := time.Now().Add(c.warmup)
	end := start.Add(c.duration)
	reader.window(start.UnixMicro(), end.UnixMicro())
	prod.windowStart.Store(start.UnixMicro())
	prod.windowEnd.Store(end.UnixMicro())
	<-prod.done
	prod.close()
	if err, _ := prod.firstErr.Load().(error); err != nil {
		return fail(fmt.Errorf("producing: %w", err))
	}
	want := int(prod.inWindow.Load())
	res.achieved = float64(want) / c.duration.Seconds()
	// Every record of the window must be seen (at least once).
	deadline := time.After(2 * time.Minute)
	for {
		n, rerr := reader.measured()
		if rerr != nil {
			return fail(rerr)
		}
		if n >= want {
			break
		}
		select {
		case err := <-exited:
			exited <- err
			return fail(fmt.Errorf("exited (%v) with %d of the window's %d records seen", err, n, want))
		case <-deadline:
			return fail(fmt.Errorf("%d of the window's %d records seen 2 min after it closed", n, want))
		case <-ctx.Done():
			return fail(fmt.Errorf("%d of the window's %d records seen: %w", n, want, ctx.Err()))
		case <-time.After(20 * time.Millisecond):
		}
	}
	lat := reader.close()
	cmd.Process.Kill()
	<-exited
	if st := cmd.ProcessState; st != nil {
		res.cpu = st.UserTime() + st.SystemTime()
	}
	slices.Sort(lat)
	q := func(f float64) time.Duration { return lat[min(len(lat)-1, int(f*float64(len(lat))))] }
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	res.n, res.p50, res.p99, res.p999, res.max = len(lat), q(0.5), q(0.99), q(0.999), lat[len(lat)-1]
	res.mean = sum / time.Duration(len(lat))
	res.window = c.duration
	return res
}

// formatLatencyTable prints one rate's measurements with the goals.
func formatLatencyTable(c config, desc string, rs []latResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n", desc)
	fmt.Fprintf(&b, "Kafka -> pass click_id and its produce time through -> Kafka, %d partitions, parallelism %d (Flink 2, Kafka Streams one stream thread); records produced over %v after a warm-up of %v from the first output; latency = when a read_committed consumer received the record less when it was produced (same clock).\n\n",
		c.partitions, c.parallelism, c.duration, c.warmup)
	b.WriteString("| contender | records | p50 ms | p99 ms | p99.9 ms | max ms | mean ms | producer records/s | CPU s of the process |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }
	by := map[string]latResult{}
	for _, r := range rs {
		if r.err != nil {
			fmt.Fprintf(&b, "| %s | failed | | | | | | | %s |\n", r.lc.label(), firstLine(r.err.Error()))
			continue
		}
		by[r.lc.key] = r
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %.0f | %.1f |\n", r.lc.label(), r.n, ms(r.p50), ms(r.p99), ms(r.p999), ms(r.max), ms(r.mean), r.achieved, r.cpu.Seconds())
	}
	b.WriteString("\n")
	goal := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	if r, ok := by["alo"]; ok {
		fmt.Fprintf(&b, "- at-least-once p99 %s ms < 50 ms: %s\n", ms(r.p99), goal(r.p99 < 50*time.Millisecond))
	}
	for _, k := range []string{"eo-1s", "eo-200ms"} {
		if r, ok := by[k]; ok {
			lim := r.lc.interval + 100*time.Millisecond
			fmt.Fprintf(&b, "- %s p99 %s ms < interval + 100 ms = %s ms: %s\n", r.lc.label(), ms(r.p99), ms(lim), goal(r.p99 < lim))
		}
	}
	for _, k := range []string{"alo", "eo-1s", "eo-200ms"} {
		r, ok := by[k]
		if !ok {
			continue
		}
		for _, peer := range []string{"kstreams", "flink"} {
			p, ok := by[peer+"-"+k]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "- %s p99 %s ms vs %s p99 %s ms: %s\n", r.lc.label(), ms(r.p99), p.lc.label(), ms(p.p99), goal(r.p99 < p.p99))
		}
	}
	b.WriteString("\n")
	return b.String()
}

// latencyMark starts the latency section of the results file: the
// throughput mode rewrites what is above it and keeps it, the latency
// mode rewrites it and keeps what is above.
const latencyMark = "<!-- kafkabench --rate: written by the latency mode from here on -->"

// splitResults is the results file's throughput part and latency part.
func splitResults(path string) (throughput, latency string) {
	old, err := os.ReadFile(path)
	if err != nil {
		return "", ""
	}
	s := string(old)
	if i := strings.Index(s, latencyMark); i >= 0 {
		return strings.TrimRight(s[:i], "\n"), s[i:]
	}
	return strings.TrimRight(s, "\n"), ""
}

// writeLatencyResults replaces the latency part of c.results.
func writeLatencyResults(c config, tables []string, peers map[string]*javaPeer) error {
	above, _ := splitResults(c.results)
	var s strings.Builder
	if above != "" {
		s.WriteString(above + "\n\n")
	}
	s.WriteString(latencyMark + "\n\n# Latency\n\n")
	fmt.Fprintf(&s, "Written by `kafkabench --rate` (see README.md); each such run rewrites this section. Run %s on %s, %d CPUs; all processes (broker, producer, consumer, contender) on this machine.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU())
	if rev, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		fmt.Fprintf(&s, "streamsql built from the repository at commit %s.\n\n", strings.TrimSpace(string(rev)))
	}
	if startLoad != "" {
		fmt.Fprintf(&s, "Load average (1, 5, 15 min) before the run: %s; after it: %s (other work shares the machine, which lengthens every tail).\n\n", startLoad, loadAverage())
	}
	if len(peers) > 0 {
		var built []string
		for _, k := range []string{"kstreams", "flink"} {
			if p := peers[k]; p != nil {
				built = append(built, p.String())
			}
		}
		fmt.Fprintf(&s, "Java peers with -Xmx%s, every setting not named their default (Kafka Streams' producer lingers 100 ms, Flink's network buffers time out after 100 ms); %s.\n\n", c.javaHeap, strings.Join(built, ", "))
	}
	s.WriteString("Command (in `bench/`):\n\n```sh\n" + commandLine() + "\n```\n\n")
	for _, t := range tables {
		s.WriteString(t)
	}
	return os.WriteFile(c.results, []byte(strings.TrimRight(s.String(), "\n")+"\n"), 0o644)
}
