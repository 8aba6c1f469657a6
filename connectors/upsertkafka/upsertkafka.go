package upsertkafka

import (
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	"github.com/streamsql/streamsql/connectors/kafka"
)

// Name is the value of the 'connector' option.
const Name = "upsert-kafka"

func init() {
	registry.Register(catalog.Connector{
		Name:            Name,
		Source:          true,
		Sink:            true,
		AcceptsUpdates:  true,
		WritesByKey:     true,
		ProducesUpdates: func(map[string]string) bool { return true },
		Bounded:         kafka.IsBounded,
		Options:         kafka.UpsertOptions(),
		Required:        []string{kafka.OptTopic, kafka.OptBootstrapServers, kafka.OptKeyFormat, kafka.OptValueFormat},
		Validate:        kafka.ValidateUpsert,
	}, kafka.NewUpsertSource, kafka.NewUpsertSink)
}
