package registry

import (
	"fmt"
	"sync"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
)

var factories = struct {
	sync.Mutex
	sources map[string]exec.SourceFactory
	sinks   map[string]exec.SinkFactory
}{sources: map[string]exec.SourceFactory{}, sinks: map[string]exec.SinkFactory{}}

// Register registers c, and src and snk (either may be nil; c.Source and
// c.Sink must agree with them). It is called from init functions and
// panics on a mistake.
func Register(c catalog.Connector, src exec.SourceFactory, snk exec.SinkFactory) {
	if c.Source != (src != nil) || c.Sink != (snk != nil) {
		panic(fmt.Sprintf("connector %s: capabilities and factories disagree", c.Name))
	}
	catalog.RegisterConnector(c)
	factories.Lock()
	defer factories.Unlock()
	if src != nil {
		exec.RegisterSource(c.Name, src)
		factories.sources[c.Name] = src
	}
	if snk != nil {
		exec.RegisterSink(c.Name, snk)
		factories.sinks[c.Name] = snk
	}
}

// Source builds a source of connector name.
func Source(name string, spec exec.TableSpec) (exec.Source, error) {
	factories.Lock()
	f := factories.sources[name]
	factories.Unlock()
	if f == nil {
		return nil, fmt.Errorf("%w %q as a source", exec.ErrUnknownConnector, name)
	}
	return f(spec)
}

// Sink builds a sink of connector name.
func Sink(name string, spec exec.TableSpec) (exec.Sink, error) {
	factories.Lock()
	f := factories.sinks[name]
	factories.Unlock()
	if f == nil {
		return nil, fmt.Errorf("%w %q as a sink", exec.ErrUnknownConnector, name)
	}
	return f(spec)
}
