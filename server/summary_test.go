package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/session"
)

// TestSummaryOwnerEpoch: a job's owner epoch is in its JSON when it has
// one (checkpoints in an object store), and absent when not.
func TestSummaryOwnerEpoch(t *testing.T) {
	for _, c := range []struct {
		epoch int64
		want  string
		has   bool
	}{{3, `"owner_epoch":3`, true}, {0, `"owner_epoch"`, false}} {
		data, err := json.Marshal(summary(session.JobInfo{ID: "j", OwnerEpoch: c.epoch}))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), c.want) != c.has {
			t.Errorf("owner epoch %d: %s (want %q: %v)", c.epoch, data, c.want, c.has)
		}
	}
}
