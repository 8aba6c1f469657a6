package kafka

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors/kafka/kafkatest"
	"github.com/streamsql/streamsql/exec"
)

var _ exec.LagReporter = (*Source)(nil)

// TestSourceLag reads two partitions four rows at a time: after each
// batch, every partition fetched reports its lag as the messages produced
// to it less those read from it (exec.LagReporter), until both are at 0;
// messages produced later raise the lag again once a fetch sees them, and
// reading them brings it back to 0.
func TestSourceLag(t *testing.T) {
	kafkatest.EachBroker(t, func(t *testing.T) {
		addr := startCluster(t, 2, []string{"lag"})
		msgs := func(n int) []string {
			var out []string
			for i := range n {
				out = append(out, fmt.Sprintf(`{"a":%d}`, i))
			}
			return out
		}
		produced := map[int32]int64{0: 10, 1: 3}
		produce(t, addr, "lag", 0, msgs(10)...)
		produce(t, addr, "lag", 1, msgs(3)...)
		sp := spec(mustSchema(t, "a BIGINT"), map[string]string{"properties.bootstrap.servers": addr, "topic": "lag", "format": "json"})
		src, err := newSource(sp, false)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		if err := src.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		if l := src.Lag(); len(l) != 0 {
			t.Fatalf("lag before any fetch: %+v, want none", l)
		}
		read := map[int32]int64{}
		// next reads one batch (or none) and checks the lag after it.
		next := func() {
			t.Helper()
			b, err := src.Next(context.Background())
			if errors.Is(err, exec.ErrNoData) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, run := range src.BatchSplits() {
				start := 0
				if i > 0 {
					start = src.BatchSplits()[i-1].End
				}
				var p int32
				fmt.Sscanf(run.Split, "lag-%d", &p)
				read[p] += int64(run.End - start)
			}
			b.Rec.Release()
			for _, l := range src.Lag() {
				if l.Topic != "lag" || l.Records != produced[l.Partition]-read[l.Partition] {
					t.Fatalf("lag %+v after reading %v of %v", src.Lag(), read, produced)
				}
			}
		}
		caughtUp := func() bool {
			l := src.Lag()
			return len(l) == 2 && l[0].Records == 0 && l[1].Records == 0
		}
		deadline := time.Now().Add(30 * time.Second)
		var most int64
		for !caughtUp() {
			if time.Now().After(deadline) {
				t.Fatalf("lag %+v after reading %v of %v", src.Lag(), read, produced)
			}
			next()
			for _, l := range src.Lag() {
				most = max(most, l.Records)
			}
		}
		if read[0] != 10 || read[1] != 3 || most == 0 {
			t.Fatalf("read %v, want %v, with a lag on the way (largest seen: %d)", read, produced, most)
		}

		produce(t, addr, "lag", 1, msgs(6)...)
		produced[1] += 6
		behind := false
		for !behind || !caughtUp() {
			if time.Now().After(deadline) {
				t.Fatalf("lag %+v after reading %v of %v (behind seen: %v)", src.Lag(), read, produced, behind)
			}
			next()
			for _, l := range src.Lag() {
				behind = behind || l.Records > 0
			}
		}
		if read[1] != 9 {
			t.Fatalf("read %v, want %v", read, produced)
		}
	})
}
