package testenv

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// SchemaRegistry is a Confluent-compatible schema registry (Apicurio
// Registry) started with scripts/schema-registry.sh on 127.0.0.1:Port,
// its log and pid file under Dir. Start starts it again, empty.
type SchemaRegistry struct {
	*ScriptServer
	// URL is the base of its Confluent API, for 'avro-confluent.url'.
	URL string
}

// StartSchemaRegistry builds the registry if needed
// (scripts/schema-registry.sh resolve: about a minute the first time) and
// starts it on a free port with its files under dir.
func StartSchemaRegistry(dir string) (*SchemaRegistry, error) {
	ss, err := startScriptServer("schema-registry.sh", dir, nil, func(s *ScriptServer) error {
		if url := s.Var("SCHEMA_REGISTRY_URL"); !strings.HasPrefix(url, "http://127.0.0.1:"+strconv.Itoa(s.Port)+"/") {
			return fmt.Errorf("printed %q, not SCHEMA_REGISTRY_URL=http://127.0.0.1:%d/...", s.Env, s.Port)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &SchemaRegistry{ScriptServer: ss, URL: ss.Var("SCHEMA_REGISTRY_URL")}, nil
}

// sharedSR is the registry the tests of one test binary share.
var sharedSR sharedServer[*SchemaRegistry]

// Registry returns the schema registry of the test binary, starting it on
// first use; the test fails (never skips) when it cannot be built or
// started. Tests share it: each uses subjects of its own. A package that
// uses it stops it at exit: TestMain(m) { code := m.Run();
// testenv.StopRegistry(); os.Exit(code) } (the watchdog stops it anyway
// when the binary exits).
func Registry(t testing.TB) *SchemaRegistry {
	t.Helper()
	return sharedSR.get(t, "the schema registry", "streamsql-sr-", StartSchemaRegistry,
		func(r *SchemaRegistry) string { return "on " + r.URL })
}

// StopRegistry stops the shared registry, if a test started it, and
// removes its files.
func StopRegistry() { sharedSR.stop() }
