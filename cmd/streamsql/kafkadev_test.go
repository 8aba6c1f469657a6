package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// freePort asks the kernel for a free loopback port.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestKafkaDev starts `streamsql kafka-dev` as a process, in both
// transaction protocol modes, and talks the Kafka protocol to it: the seeded
// topic has the requested partitions, a produced record reads back, and
// SIGTERM stops the broker.
func TestKafkaDev(t *testing.T) {
	for _, classic := range []bool{false, true} {
		t.Run(fmt.Sprintf("classic=%v", classic), func(t *testing.T) {
			port := freePort(t)
			args := []string{"kafka-dev", "--port", fmt.Sprint(port), "--partitions", "3", "--topic", "clicks"}
			if classic {
				args = append(args, "--classic-txn")
			}
			cmd := exec.Command(binary, args...)
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil || !strings.Contains(line, "serving Kafka") {
				t.Fatalf("first line %q, %v", line, err)
			}
			cl, err := kgo.NewClient(kgo.SeedBrokers(fmt.Sprintf("127.0.0.1:%d", port)))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			td, err := kadm.NewClient(cl).ListTopics(ctx, "clicks")
			if err != nil || len(td["clicks"].Partitions) != 3 {
				t.Fatalf("topic clicks: %+v, %v", td["clicks"], err)
			}
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "clicks", Value: []byte("hello")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			cons, err := kgo.NewClient(kgo.SeedBrokers(fmt.Sprintf("127.0.0.1:%d", port)), kgo.ConsumeTopics("clicks"),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			if err != nil {
				t.Fatal(err)
			}
			defer cons.Close()
			fs := cons.PollFetches(ctx)
			if recs := fs.Records(); len(recs) != 1 || string(recs[0].Value) != "hello" {
				t.Fatalf("read back %v (errors %v)", recs, fs.Errors())
			}
			cmd.Process.Signal(syscall.SIGTERM)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("kafka-dev after SIGTERM: %v", err)
			}
		})
	}
}
