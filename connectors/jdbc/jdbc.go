package jdbc

import (
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connectors/internal/registry"
)

// Name is the value of the 'connector' option.
const Name = "jdbc"

func init() {
	registry.Register(catalog.Connector{
		Name:           Name,
		Sink:           true,
		AcceptsUpdates: true,
		WritesByKey:    true,
		Options: []string{OptURL, OptTableName, OptUsername, OptPassword, OptFlushMaxRows, OptFlushInterval,
			OptMaxRetries, OptParallelism, OptDeliveryGuarantee},
		Required: []string{OptURL, OptTableName},
		Validate: validate,
	}, nil, newSink)
}
