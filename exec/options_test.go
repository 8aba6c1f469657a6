package exec

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/planner"
)

// TestStartRefusesBadOptions: a negative size in Options is an error of
// Start naming the field and the value, not replaced by the default; zero
// is the default.
func TestStartRefusesBadOptions(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{BatchSize: -1}, "Options.BatchSize must be a positive integer (or 0 for the default, 1024), got -1"},
		{Options{ChannelCapacity: -8}, "Options.ChannelCapacity must be a positive integer (or 0 for the default, 8), got -8"},
		{Options{StateCacheEntries: -5}, "Options.StateCacheEntries must be a positive integer (or 0 for the default, 1000000), got -5"},
	} {
		j, err := Start(context.Background(), &planner.Graph{MaxParallelism: 128}, tc.opts)
		if err == nil {
			j.Cancel()
			j.Wait()
			t.Fatalf("Start(%+v) accepted a negative size", tc.opts)
		}
		if !errors.Is(err, ErrBadOptions) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Start(%+v) = %v, want ErrBadOptions: %s", tc.opts, err, tc.want)
		}
	}
	o := Options{}
	if err := o.ensureDefaults(); err != nil || o.BatchSize != DefaultBatchSize || o.ChannelCapacity != DefaultChannelCapacity ||
		o.StateCacheEntries != DefaultStateCacheEntries {
		t.Fatalf("zero Options: %v, %+v", err, o)
	}
}
