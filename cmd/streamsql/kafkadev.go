package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kversion"
)

// runKafkaDev serves a local Kafka-compatible broker (franz-go's kfake) until
// SIGINT or SIGTERM: for quickstarts and tests, not for production. All data
// lives in memory and is gone when the process ends.
func runKafkaDev(args []string) int {
	fs := flag.NewFlagSet("streamsql kafka-dev", flag.ContinueOnError)
	port := fs.Int("port", 9092, "the `port` to listen on (127.0.0.1)")
	partitions := fs.Int("partitions", 1, "partitions of topics created automatically")
	classic := fs.Bool("classic-txn", false, "speak the pre-KIP-890 transaction protocol (Kafka 3.9's) instead of kfake's default")
	var topics topicList
	fs.Var(&topics, "topic", "create `TOPIC` at start (repeatable)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: streamsql kafka-dev [--port 9092] [--partitions N] [--classic-txn] [--topic T]...\n\n"+
			"Serves a local Kafka-compatible broker for trying streamsql out and for tests.\n"+
			"It keeps everything in memory and is not meant for production.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if *partitions < 1 {
		fmt.Fprintln(os.Stderr, "[ERROR] --partitions must be at least 1")
		return 2
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.Ports(*port),
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(*partitions),
	}
	if *classic {
		opts = append(opts, kfake.MaxVersions(kversion.V3_9_0()))
	}
	if len(topics) > 0 {
		opts = append(opts, kfake.SeedTopics(int32(*partitions), topics...))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "[ERROR] starting the broker: %v\n", err)
		return 1
	}
	defer c.Close()
	mode := "KIP-890 transactions"
	if *classic {
		mode = "classic (pre-KIP-890) transactions"
	}
	fmt.Printf("kafka-dev: serving Kafka on %v (%d partitions per new topic, %s); Ctrl-C stops it\n", c.ListenAddrs(), *partitions, mode)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	fmt.Println("kafka-dev: stopped")
	return 0
}

type topicList []string

func (t *topicList) String() string     { return fmt.Sprint(*t) }
func (t *topicList) Set(s string) error { *t = append(*t, s); return nil }
