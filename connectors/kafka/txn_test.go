package kafka

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

func eoSpec(addr string, sch types.Schema) exec.TableSpec {
	return spec(sch, map[string]string{"properties.bootstrap.servers": addr, "topic": "out", "format": "csv",
		"sink.delivery-guarantee": "exactly-once"})
}

func openSink(t *testing.T, sp exec.TableSpec) *Sink {
	t.Helper()
	s, err := NewSink(sp)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s.(*Sink)
}

func write(t *testing.T, s exec.Sink, sch types.Schema, rows ...string) {
	t.Helper()
	b := batch(t, sch, rows...)
	defer b.Rec.Release()
	if err := s.Write(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

func preCommit(t *testing.T, s exec.Sink, id int64) []byte {
	t.Helper()
	h, err := s.PreCommit(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func commit(t *testing.T, s exec.Sink, id int64, h []byte) {
	t.Helper()
	if err := s.Commit(context.Background(), id, h); err != nil {
		t.Fatal(err)
	}
}

func expectCommitted(t *testing.T, addr string, want ...string) {
	t.Helper()
	got := values(readTopic(t, addr, "out", true))
	if want == nil {
		want = []string{}
	}
	if got == nil {
		got = []string{}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("committed messages: got %q want %q", got, want)
	}
}

func TestExactlyOnceCommitMakesVisible(t *testing.T) {
	eachProtocol(t, func(t *testing.T, opts []kfake.Opt) {
		addr := startCluster(t, 1, []string{"out"}, opts...)
		sch := mustSchema(t, "id BIGINT, name STRING")
		s := openSink(t, eoSpec(addr, sch))
		defer s.Close()
		write(t, s, sch, "1, a", "2, b")
		h1 := preCommit(t, s, 1)
		// Pre-committed: durable, invisible to read_committed readers.
		expectCommitted(t, addr)
		if got := len(readTopic(t, addr, "out", false)); got != 2 {
			t.Fatalf("read_uncommitted sees %d messages, want 2", got)
		}
		write(t, s, sch, "3, c")
		commit(t, s, 1, h1)
		expectCommitted(t, addr, "<nil>|1,a", "<nil>|2,b")
		h2 := preCommit(t, s, 2)
		h, err := decodeHandle("t", h2)
		if err != nil || len(h.Txns) != 1 || h.Prefix != "job-op1" {
			t.Fatalf("handle %s: %v", h2, err)
		}
		commit(t, s, 2, h2)
		commit(t, s, 2, h2) // again: a no-op
		expectCommitted(t, addr, "<nil>|1,a", "<nil>|2,b", "<nil>|3,c")
		write(t, s, sch, "4, d")
		if err := s.Finish(context.Background()); err != nil {
			t.Fatal(err)
		}
		expectCommitted(t, addr, "<nil>|1,a", "<nil>|2,b", "<nil>|3,c", "<nil>|4,d")
		if o := ongoing(t, addr); len(o) != 0 {
			t.Fatalf("open transactions left: %v", o)
		}
	})
}

// A checkpoint aborted after its pre-commit: its transaction is committed
// with the next checkpoint, through the cumulative handle, also after a
// crash.
func TestExactlyOnceAbortedCheckpointRidesWithTheNext(t *testing.T) {
	eachProtocol(t, func(t *testing.T, opts []kfake.Opt) {
		addr := startCluster(t, 1, []string{"out"}, opts...)
		sch := mustSchema(t, "id BIGINT, name STRING")
		a := openSink(t, eoSpec(addr, sch))
		write(t, a, sch, "1, a")
		preCommit(t, a, 1) // checkpoint 1 is aborted: no commit
		write(t, a, sch, "2, b")
		h2 := preCommit(t, a, 2)
		a.Abandon() // after checkpoint 2's _metadata, before its commit
		b := openSink(t, eoSpec(addr, sch))
		defer b.Close()
		commit(t, b, 2, h2)
		expectCommitted(t, addr, "<nil>|1,a", "<nil>|2,b")
	})
}

func TestExactlyOnceCrashRecovery(t *testing.T) {
	eachProtocol(t, func(t *testing.T, opts []kfake.Opt) {
		addr := startCluster(t, 2, []string{"out"}, opts...)
		sch := mustSchema(t, "id BIGINT, name STRING")
		sp := eoSpec(addr, sch)
		a := openSink(t, sp)
		write(t, a, sch, "1, a", "2, b", "3, c")
		h1 := preCommit(t, a, 1)
		write(t, a, sch, "4, lingering") // the open transaction after barrier 1
		if err := a.cur.cl.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		a.Abandon()
		if o := ongoing(t, addr); len(o) != 2 {
			t.Fatalf("want the pre-committed and the open transaction, got %v", o)
		}

		// The restored job: Open, commit the restored handle, then rows.
		b := openSink(t, sp)
		defer b.Close()
		commit(t, b, 1, h1)
		commit(t, b, 1, h1) // a repeated commit answers NONE: done
		got := values(readTopic(t, addr, "out", true))
		slices.Sort(got)
		if want := []string{"<nil>|1,a", "<nil>|2,b", "<nil>|3,c"}; !slices.Equal(got, want) {
			t.Fatalf("after the recovered commit: got %q want %q", got, want)
		}
		write(t, b, sch, "4, d")
		if err := b.cur.cl.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		// The lingering transaction was aborted before b's first.
		o := ongoing(t, addr)
		if len(o) != 1 || o[0] != b.cur.ID {
			t.Fatalf("open transactions: %v, want only %s", o, b.cur.ID)
		}
		h2 := preCommit(t, b, 2)
		commit(t, b, 2, h2)
		got = values(readTopic(t, addr, "out", true))
		slices.Sort(got)
		if want := []string{"<nil>|1,a", "<nil>|2,b", "<nil>|3,c", "<nil>|4,d"}; !slices.Equal(got, want) {
			t.Fatalf("got %q want %q", got, want)
		}
		// A third instance restoring checkpoint 1 again (its handle was
		// committed twice already) still succeeds.
		c := openSink(t, sp)
		defer c.Close()
		commit(t, c, 1, h1)
	})
}

func TestExactlyOnceLostTransactionIsAnError(t *testing.T) {
	eachProtocol(t, func(t *testing.T, opts []kfake.Opt) {
		addr := startCluster(t, 1, []string{"out"}, opts...)
		sch := mustSchema(t, "id BIGINT, name STRING")
		sp := eoSpec(addr, sch)
		a := openSink(t, sp)
		write(t, a, sch, "1, a")
		h1 := preCommit(t, a, 1)
		a.Abandon()
		h, err := decodeHandle("t", h1)
		if err != nil {
			t.Fatal(err)
		}
		// Something fences the id (as the transaction timeout would abort it).
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID = &h.Txns[0].ID
		req.TransactionTimeoutMillis = 60000
		req.ProducerID, req.ProducerEpoch = -1, -1
		if _, err := req.RequestWith(context.Background(), client(t, addr)); err != nil {
			t.Fatal(err)
		}
		b := openSink(t, sp)
		defer b.Close()
		err = b.Commit(context.Background(), 1, h1)
		if err == nil || !strings.Contains(err.Error(), "rows of checkpoint 1 are lost") {
			t.Fatalf("want a lost-rows error, got %v", err)
		}
		expectCommitted(t, addr)
	})
}

// A broker without ListTransactions (before Kafka 3.0): lingering
// transactions are found by probing ids. kafka-dev only: it stands in for
// an old broker (kfake.MaxVersions); Apache Kafka 4.4 has ListTransactions,
// and TestExactlyOnceCrashRecovery/apache aborts lingering transactions
// with it.
func TestExactlyOnceProbesWithoutListTransactions(t *testing.T) {
	addr := startCluster(t, 1, []string{"out"}, kfake.MaxVersions(kversion.V2_8_0()))
	sch := mustSchema(t, "id BIGINT, name STRING")
	sp := eoSpec(addr, sch)
	a := openSink(t, sp)
	write(t, a, sch, "1, a")
	h1 := preCommit(t, a, 1)
	write(t, a, sch, "2, lingering")
	preCommit(t, a, 2) // never completes
	write(t, a, sch, "3, lingering")
	if err := a.cur.cl.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	a.Abandon()
	b := openSink(t, sp)
	defer b.Close()
	commit(t, b, 1, h1)
	if err := b.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Both lingering transactions were aborted: a read_committed reader is
	// not held back at them and sees only the committed row.
	expectCommitted(t, addr, "<nil>|1,a")
	if got := len(readTopic(t, addr, "out", false)); got != 3 {
		t.Fatalf("read_uncommitted sees %d messages, want 3", got)
	}
}

// No broker: the sink's options are checked when it is built.
func TestExactlyOnceNeedsCheckpointsAndALongerTimeout(t *testing.T) {
	sch := mustSchema(t, "id BIGINT")
	sp := eoSpec("127.0.0.1:1", sch)
	sp.CheckpointInterval = 0
	if _, err := NewSink(sp); err == nil || !strings.Contains(err.Error(), "needs checkpoints") {
		t.Fatalf("got %v", err)
	}
	sp.CheckpointInterval = time.Minute
	_, err := NewSink(sp)
	want := fmt.Sprintf("'properties.transaction.timeout.ms' = 60000 ms is too short for the checkpoint interval of 1m0s")
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
	sp.Options["properties.transaction.timeout.ms"] = "70001"
	if _, err := NewSink(sp); err != nil {
		t.Fatal(err)
	}
}

// TestExactlyOnceSweepsSupersededOwner: the instance a restore took over
// is still running (a process paused while another took its job over,
// then woken). A transaction it opens after the restore is on an id
// nobody fenced; the restored sink aborts it at its next barrier, so it
// does not hold back read_committed readers, and it is never committed.
func TestExactlyOnceSweepsSupersededOwner(t *testing.T) {
	eachProtocol(t, func(t *testing.T, opts []kfake.Opt) {
		addr := startCluster(t, 1, []string{"out"}, opts...)
		sch := mustSchema(t, "id BIGINT, name STRING")
		sp := eoSpec(addr, sch)
		a := openSink(t, sp)
		defer a.Abandon()
		write(t, a, sch, "1, a")
		h1 := preCommit(t, a, 1)

		// b restores checkpoint 1 and starts its own transaction, its
		// sequence numbers from the wall clock in milliseconds on: a
		// millisecond after a's, as any takeover is.
		time.Sleep(2 * time.Millisecond)
		b := openSink(t, sp)
		defer b.Close()
		commit(t, b, 1, h1)
		write(t, b, sch, "2, b")

		// a, woken, opens a transaction after b's restore.
		write(t, a, sch, "3, superseded")
		if err := a.cur.cl.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		stale := a.cur.ID
		if o := ongoing(t, addr); !slices.Contains(o, stale) {
			t.Fatalf("open transactions %v, want a's %s among them", o, stale)
		}
		b.lastSweep = time.Time{} // the next barrier sweeps, whatever the clock
		h2 := preCommit(t, b, 2)
		if o := ongoing(t, addr); slices.Contains(o, stale) || len(o) != 1 {
			t.Fatalf("open transactions after b's barrier: %v, want only b's pending one, not a's %s", o, stale)
		}
		commit(t, b, 2, h2)
		got := values(readTopic(t, addr, "out", true))
		slices.Sort(got)
		if want := []string{"<nil>|1,a", "<nil>|2,b"}; !slices.Equal(got, want) {
			t.Fatalf("read_committed: got %q want %q", got, want)
		}
	})
}
