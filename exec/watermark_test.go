package exec

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// TestWatermarks runs testdata/watermark: how an operator combines the
// watermarks and idleness of its input channels (aligner), how a source
// subtask generates watermarks per split (watermarkGen), and how it stamps
// processing time and emits its clock as the watermark (proctimeGen).
func TestWatermarks(t *testing.T) {
	var al *aligner
	var g *watermarkGen
	var pt *proctimeGen
	var src *splitTestSource
	var recv *subtask
	var em *emitter
	epoch := time.Unix(0, 0)
	datadriven.RunTest(t, "testdata/watermark", func(t *testing.T, d *datadriven.TestData) string {
		from := func() int {
			var n int
			d.ScanArgs(t, "from", &n)
			return n
		}
		combined := func(wm int64, advanced, idle bool) string {
			var b strings.Builder
			fmt.Fprintf(&b, "combined %s", wmText(wm))
			if advanced {
				b.WriteString(", forwarded")
			}
			if idle {
				b.WriteString(", input idle")
			}
			return b.String() + "\n"
		}
		switch d.Cmd {
		case "aligner":
			var n int
			d.ScanArgs(t, "channels", &n)
			al = newAligner(n)
			return "ok\n"
		case "watermark":
			var at int64
			d.ScanArgs(t, "at", &at)
			wm, adv := al.watermark(from(), at*1e6)
			return combined(wm, adv, false)
		case "idle":
			return combined(al.idle(from()))
		case "batch":
			al.active(from())
			return "ok\n"
		case "end":
			wm, adv, idle, all, _ := al.end(from(), nil)
			out := combined(wm, adv, idle)
			if all {
				out += "all ended\n"
			}
			return out
		case "source":
			// A source subtask reading the splits listed; WATERMARK FOR ts
			// AS ts (seconds in the tests); bounded: a scan that ends.
			src = &splitTestSource{}
			if d.HasArg("splits") {
				src.splits = splitsArg(d)
			}
			recv = &subtask{inbox: make(chan Element, 64)}
			job := &Job{ctx: context.Background()}
			job.opts.ensureDefaults()
			em = (&subtask{job: job, outputs: []*output{{partition: planner.Forward, targets: []target{{task: recv}}}}}).emitter()
			g = &watermarkGen{
				ev:      compileExpr(&planner.ColumnRef{Index: 0, Name: "ts", T: types.TimestampOf(3)}),
				fctx:    &functions.Context{Mem: memory.DefaultAllocator},
				emitted: minWatermark,
				bounded: d.HasArg("bounded"),
			}
			g.wholeRun[0].Split = wholeSubtask
			if src.splits == nil {
				g.splits = []splitWatermark{{id: wholeSubtask, max: minWatermark, active: epoch}}
				return "ok\n"
			}
			if d.HasArg("idle-timeout") {
				var s string
				d.ScanArgs(t, "idle-timeout", &s)
				var err error
				if g.idleTimeout, err = types.ParseDuration(s); err != nil {
					t.Fatal(err)
				}
			}
			g.track(src, epoch)
			return "ok\n"
		case "read":
			// read at=<seconds of wall clock> rows: split:ts ...
			var at int
			d.ScanArgs(t, "at", &at)
			now := epoch.Add(time.Duration(at) * time.Second)
			if d.HasArg("splits") {
				src.splits = splitsArg(d)
			}
			fields := strings.Fields(d.Input)
			if len(fields) > 0 {
				b := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond})
				src.runs = src.runs[:0]
				for i, f := range fields {
					split, ts, ok := strings.Cut(f, ":")
					if !ok {
						split, ts = wholeSubtask, f
					}
					sec, err := strconv.Atoi(ts)
					if err != nil {
						t.Fatal(err)
					}
					b.Append(arrow.Timestamp(int64(sec) * 1e6))
					if k := len(src.runs) - 1; k >= 0 && src.runs[k].Split == split {
						src.runs[k].End = i + 1
					} else {
						src.runs = append(src.runs, SplitRun{Split: split, End: i + 1})
					}
				}
				col := b.NewArray()
				rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "ts", Type: col.DataType()}}, nil), []arrow.Array{col}, int64(col.Len()))
				col.Release()
				b.Release()
				var err error
				if src.splits == nil {
					err = g.observe(nil, Batch{Rec: rec}, now)
				} else {
					err = g.observe(src, Batch{Rec: rec}, now)
				}
				rec.Release()
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
			}
			var s Source
			if src.splits != nil {
				s = src
			}
			if err := g.forward(s, em, now); err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			for len(recv.inbox) > 0 {
				el := <-recv.inbox
				switch el.Kind {
				case KindWatermark:
					fmt.Fprintf(&out, "watermark %s\n", wmText(el.Watermark))
				case KindIdle:
					out.WriteString("idle\n")
				}
			}
			if out.Len() == 0 {
				return "(nothing)\n"
			}
			return out.String()
		case "proctime":
			// A source subtask stamping processing time (proctime.go).
			recv = &subtask{inbox: make(chan Element, 64)}
			job := &Job{ctx: context.Background()}
			job.opts.ensureDefaults()
			em = (&subtask{job: job, outputs: []*output{{partition: planner.Forward, targets: []target{{task: recv}}}}}).emitter()
			pt = &proctimeGen{last: minWatermark, emitted: minWatermark, watermarks: true}
			return "ok\n"
		case "clock":
			// clock at=<microseconds of wall clock> [batch]: a batch read (or
			// a poll that found nothing) at that time.
			var at int64
			d.ScanArgs(t, "at", &at)
			now := time.UnixMicro(at)
			var out strings.Builder
			if d.HasArg("batch") {
				fmt.Fprintf(&out, "stamp %d\n", pt.stamp(now))
			}
			if err := pt.forward(em, now); err != nil {
				t.Fatal(err)
			}
			for len(recv.inbox) > 0 {
				el := <-recv.inbox
				fmt.Fprintf(&out, "watermark %d\n", el.Watermark)
			}
			if out.Len() == 0 {
				return "(nothing)\n"
			}
			return out.String()
		}
		t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
		return ""
	})
}

// splitsArg returns the splits of a splits=(a,b) argument.
func splitsArg(d *datadriven.TestData) []string {
	out := []string{}
	for _, a := range d.CmdArgs {
		if a.Key != "splits" {
			continue
		}
		for _, v := range a.Vals {
			if v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// wmText prints a watermark of the tests (whole seconds) or its bounds.
func wmText(wm int64) string {
	switch wm {
	case minWatermark:
		return "-inf"
	case maxWatermark:
		return "+inf"
	}
	return strconv.FormatInt(wm/1e6, 10)
}

// splitTestSource is a Source reporting the splits a test sets.
type splitTestSource struct {
	splits []string
	runs   []SplitRun
}

func (s *splitTestSource) Open(context.Context) error          { return nil }
func (s *splitTestSource) Next(context.Context) (Batch, error) { return Batch{}, ErrNoData }
func (s *splitTestSource) Snapshot() ([]byte, error)           { return nil, nil }
func (s *splitTestSource) Restore([]byte) error                { return nil }
func (s *splitTestSource) Close() error                        { return nil }
func (s *splitTestSource) Splits() []string                    { return s.splits }
func (s *splitTestSource) BatchSplits() []SplitRun             { return s.runs }
