package kafka

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// committedProgress is the share of topic's records (up to its end offsets
// ends) that consumer group has committed: the kafka source commits each
// completed checkpoint's positions there, so this is how far the job got.
// The kill schedule uses it; the results are always checked with kcat.
func committedProgress(t *testing.T, b *broker, group, topic string, ends []int64) float64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resps, err := kadm.NewClient(cl).FetchOffsets(ctx, group)
	if err != nil {
		t.Logf("fetching the offsets of group %s: %v (taken as no progress)", group, err)
		return 0
	}
	var done, total int64
	for p, end := range ends {
		total += end
		if r, ok := resps.Lookup(topic, int32(p)); ok && r.Err == nil && r.At > 0 {
			done += min(r.At, end)
		}
	}
	if total == 0 {
		return 1
	}
	return float64(done) / float64(total)
}

// median of a non-empty list of durations.
func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
