package exec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestBarrierAlignment runs testdata/barrier: when an operator with several
// input channels takes its snapshot for a checkpoint, in EXACTLY_ONCE mode
// (the aligner holds back a channel after its barrier) and in AT_LEAST_ONCE
// mode (the barrier tracker counts barriers per checkpoint id and holds
// nothing back).
//
//	aligner channels=N mode=exactly-once|at-least-once
//	barrier from=C id=N [savepoint]   prints "snapshot N" when aligned, then releases
//	batch from=C                      prints "processed" or "held"
//	end from=C                        prints the snapshots due, and "all ended"
func TestBarrierAlignment(t *testing.T) {
	var al *aligner
	datadriven.RunTest(t, "testdata/barrier", func(t *testing.T, d *datadriven.TestData) string {
		from := func() int {
			var n int
			d.ScanArgs(t, "from", &n)
			return n
		}
		snapshots := func(bs ...Barrier) string {
			var b strings.Builder
			for _, x := range bs {
				fmt.Fprintf(&b, "snapshot %d", x.ID)
				if x.Savepoint {
					b.WriteString(" (savepoint)")
				}
				b.WriteString("\n")
				al.release()
			}
			return b.String()
		}
		switch d.Cmd {
		case "aligner":
			var n int
			var mode string
			d.ScanArgs(t, "channels", &n)
			d.ScanArgs(t, "mode", &mode)
			al = newAligner(n)
			switch mode {
			case "at-least-once":
				al.tracker = newBarrierTracker(n)
			case "exactly-once":
			default:
				t.Fatalf("%s: unknown mode %q", d.Pos, mode)
			}
			return "ok\n"
		case "barrier":
			var id int64
			d.ScanArgs(t, "id", &id)
			el := Element{Kind: KindBarrier, From: from(), Barrier: Barrier{ID: id, Savepoint: d.HasArg("savepoint")}}
			if al.hold(el) {
				return "held\n"
			}
			b, ok := al.barrier(el.From, el.Barrier)
			if !ok {
				return "pending\n"
			}
			return snapshots(b)
		case "batch":
			if al.hold(Element{Kind: KindBatch, From: from()}) {
				return "held\n"
			}
			return "processed\n"
		case "end":
			el := Element{Kind: KindEnd, From: from()}
			if al.hold(el) {
				return "held\n"
			}
			_, _, _, all, done := al.end(el.From, nil)
			out := snapshots(done...)
			if all {
				out += "all ended\n"
			}
			if out == "" {
				out = "ok\n"
			}
			return out
		}
		t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
		return ""
	})
}

// TestBarrierTrackerBounded: a channel that never delivers a barrier does
// not make the tracker grow; the oldest pending checkpoints are dropped.
func TestBarrierTrackerBounded(t *testing.T) {
	tr := newBarrierTracker(2)
	for id := int64(1); id <= 3*maxTrackedBarriers; id++ {
		if _, ok := tr.barrier(0, Barrier{ID: id}); ok {
			t.Fatalf("checkpoint %d aligned with one of two channels", id)
		}
	}
	if len(tr.pending) != maxTrackedBarriers {
		t.Fatalf("%d checkpoints pending, want at most %d", len(tr.pending), maxTrackedBarriers)
	}
	if _, ok := tr.barrier(1, Barrier{ID: 1}); ok {
		t.Fatal("a dropped checkpoint aligned")
	}
	if b, ok := tr.barrier(1, Barrier{ID: 3 * maxTrackedBarriers}); !ok || b.ID != 3*maxTrackedBarriers {
		t.Fatalf("the newest checkpoint did not align: %v %v", b, ok)
	}
	if len(tr.pending) != 0 {
		t.Fatalf("%d checkpoints still pending after the newest aligned", len(tr.pending))
	}
}
