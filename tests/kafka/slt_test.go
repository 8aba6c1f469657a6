package kafka

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/streamsql/streamsql/connectors/kafka/kafkatest"
)

// TestKafkaSLT runs the sqllogictest files under testdata/ with
// `streamsql test`, as a user would, against a kafka-dev broker of their
// own: 4 partitions per topic, topics created on first use, its address in
// $KAFKA (the files turn "control substitution on").
func TestKafkaSLT(t *testing.T) {
	files, err := filepath.Glob("testdata/*.slt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no .slt files under testdata: %v", err)
	}
	run := func(t *testing.T, start func(t *testing.T) *broker) {
		for _, f := range files {
			t.Run(filepath.Base(f), func(t *testing.T) {
				b := start(t)
				cmd := exec.Command(binary, "test", "--data-dir", t.TempDir(), f)
				cmd.Env = append(os.Environ(), "KAFKA="+b.addr)
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("streamsql test %s: %v\n%s", f, err, out)
				}
				t.Logf("%s", out)
			})
		}
	}
	run(t, func(t *testing.T) *broker { return startBroker(t, 4, false) })
	if kafkatest.ApacheWanted(t) {
		t.Run(kafkatest.ApacheName, func(t *testing.T) {
			run(t, func(t *testing.T) *broker { return startApache(t, 4) })
		})
	}
}
