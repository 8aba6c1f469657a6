package exec_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
)

// TestOneConnectorRegistry: a connector registered once is known to the
// catalog (which checks CREATE TABLE and tells the planner what it can do)
// and to the runtime (which builds its sources and sinks) alike; one that
// is not, or not as a sink, fails with catalog.ErrUnknownConnector.
func TestOneConnectorRegistry(t *testing.T) {
	built := 0
	src := func(exec.TableSpec) (exec.Source, error) { built++; return nil, nil }
	exec.RegisterConnector(catalog.Connector{Name: "registry-test", Source: true}, src, nil)

	c, ok := catalog.LookupConnector("registry-test")
	if !ok || !c.Source || c.Sink {
		t.Fatalf("catalog sees %+v, %v; want the source-only connector", c, ok)
	}
	if _, err := exec.NewSource("registry-test", exec.TableSpec{}); err != nil || built != 1 {
		t.Fatalf("NewSource: %v (factory called %d times)", err, built)
	}

	_, err := exec.NewSink("registry-test", exec.TableSpec{})
	if !errors.Is(err, catalog.ErrUnknownConnector) || !strings.Contains(err.Error(), `"registry-test" as a sink`) {
		t.Fatalf("a sink of a source-only connector: %v", err)
	}
	_, err = exec.NewSource("no-such-connector", exec.TableSpec{})
	if !errors.Is(err, catalog.ErrUnknownConnector) || !strings.Contains(err.Error(), "registry-test") {
		t.Fatalf("an unknown connector: %v (want catalog.ErrUnknownConnector listing the sources)", err)
	}

	defer func() {
		if recover() == nil {
			t.Fatal("capabilities that disagree with the factories did not panic")
		}
	}()
	exec.RegisterConnector(catalog.Connector{Name: "registry-test-2", Sink: true}, src, nil)
}
