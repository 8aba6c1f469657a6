package registry

import (
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
)

// Register registers c with src and snk (either may be nil; c.Source and
// c.Sink must agree with them) in the connector registry
// (exec.RegisterConnector). It is called from init functions and panics on
// a mistake.
func Register(c catalog.Connector, src exec.SourceFactory, snk exec.SinkFactory) {
	exec.RegisterConnector(c, src, snk)
}

// Source builds a source of connector name.
func Source(name string, spec exec.TableSpec) (exec.Source, error) { return exec.NewSource(name, spec) }

// Sink builds a sink of connector name.
func Sink(name string, spec exec.TableSpec) (exec.Sink, error) { return exec.NewSink(name, spec) }
