package kafka

import (
	"github.com/streamsql/streamsql/connectors/kafka/kafkatest"

	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/connectors/internal/conntest"
	"github.com/streamsql/streamsql/connectors/internal/rowfmt"
	"github.com/streamsql/streamsql/exec"
)

// drain reads src to its end, returning its rows as rowfmt prints them.
func drain(t testing.TB, src exec.Source, spec exec.TableSpec) []string {
	t.Helper()
	lines, _, err := conntest.Drain(context.Background(), src, spec.ProducedSchema())
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

func TestSourceBoundedJSON(t *testing.T) {
	kafkatest.EachBroker(t, func(t *testing.T) {
		addr := startCluster(t, 2, []string{"in"})
		produce(t, addr, "in", 0, `{"a":1,"b":"x"}`, `{"a":2,"b":"y"}`)
		produce(t, addr, "in", 1, `{"a":3,"b":"z"}`)
		sch := mustSchema(t, "a BIGINT, b STRING")
		sp := spec(sch, map[string]string{"properties.bootstrap.servers": addr, "topic": "in", "format": "json",
			"scan.bounded.mode": "latest-offset"})
		src, err := NewSource(sp)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		if err := src.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := drain(t, src, sp)
		slices.Sort(got)
		if want := []string{"+I[1, x]", "+I[2, y]", "+I[3, z]"}; !slices.Equal(got, want) {
			t.Fatalf("got %v want %v", got, want)
		}
		_ = io.EOF
		_ = strings.Join
		_ = rowfmt.Lines
	})
}
