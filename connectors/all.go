package connectors

import (
	_ "github.com/streamsql/streamsql/connectors/blackhole"
	_ "github.com/streamsql/streamsql/connectors/datagen"
	_ "github.com/streamsql/streamsql/connectors/filesystem"
	_ "github.com/streamsql/streamsql/connectors/jdbc"
	_ "github.com/streamsql/streamsql/connectors/kafka"
	_ "github.com/streamsql/streamsql/connectors/memory"
	_ "github.com/streamsql/streamsql/connectors/nexmark"
	_ "github.com/streamsql/streamsql/connectors/print"
	_ "github.com/streamsql/streamsql/connectors/upsertkafka"
)
