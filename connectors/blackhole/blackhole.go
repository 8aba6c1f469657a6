package blackhole

import (
	"context"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	"github.com/streamsql/streamsql/exec"
)

// Name is the value of the 'connector' option.
const Name = "blackhole"

func init() {
	registry.Register(catalog.Connector{
		Name:           Name,
		Sink:           true,
		AcceptsUpdates: true,
	}, nil, func(exec.TableSpec) (exec.Sink, error) { return sink{}, nil })
}

// sink has no state, so a value of it in an interface allocates nothing.
type sink struct{}

func (sink) Open(context.Context) error                       { return nil }
func (sink) Write(context.Context, exec.Batch) error          { return nil }
func (sink) PreCommit(context.Context, int64) ([]byte, error) { return nil, nil }
func (sink) Commit(context.Context, int64, []byte) error      { return nil }
func (sink) Finish(context.Context) error                     { return nil }
func (sink) Close() error                                     { return nil }
