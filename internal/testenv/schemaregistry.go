package testenv

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// SchemaRegistry is a Confluent-compatible schema registry (Apicurio
// Registry) started with scripts/schema-registry.sh on 127.0.0.1:Port, its
// log and pid file under Dir. A watchdog process stops it when the test
// binary exits, however it exits.
type SchemaRegistry struct {
	Port int
	Dir  string
	// URL is the base of its Confluent API, for 'avro-confluent.url'.
	URL    string
	script string
}

// StartSchemaRegistry builds the registry if needed
// (scripts/schema-registry.sh resolve: about a minute the first time) and
// starts it on a free port with its files under dir.
func StartSchemaRegistry(dir string) (*SchemaRegistry, error) {
	script, err := moduleScript("schema-registry.sh")
	if err != nil {
		return nil, err
	}
	if out, err := exec.Command(script, "resolve").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s resolve: %v\n%s", script, err, out)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // a free port may be taken in between
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		r := &SchemaRegistry{Port: port, Dir: dir, script: script}
		if lastErr = r.Start(); lastErr == nil {
			if err := r.watchdog(); err != nil {
				r.Stop()
				return nil, err
			}
			return r, nil
		}
	}
	return nil, lastErr
}

// Start starts the registry (again) on its port; it starts empty.
func (r *SchemaRegistry) Start() error {
	cmd := exec.Command(r.script, "start", strconv.Itoa(r.Port), r.Dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("schema-registry.sh start %d %s: %v\n%s", r.Port, r.Dir, err, stderr.String())
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "SCHEMA_REGISTRY_URL=")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:"+strconv.Itoa(r.Port)+"/") {
		return fmt.Errorf("schema-registry.sh start printed %q, not SCHEMA_REGISTRY_URL=http://127.0.0.1:%d/...", out, r.Port)
	}
	r.URL = url
	return nil
}

// Stop stops the registry (SIGTERM).
func (r *SchemaRegistry) Stop() error {
	if out, err := exec.Command(r.script, "stop", r.Dir).CombinedOutput(); err != nil {
		return fmt.Errorf("schema-registry.sh stop %s: %v\n%s", r.Dir, err, out)
	}
	return nil
}

// watchdog starts a process of its own session that stops the registry
// when this process exits.
func (r *SchemaRegistry) watchdog() error {
	cmd := exec.Command("bash", "-c", `tail --pid="$1" -f /dev/null; exec "$2" stop "$3"`, "watchdog",
		strconv.Itoa(os.Getpid()), r.script, r.Dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the schema registry's watchdog: %v", err)
	}
	return cmd.Process.Release()
}

// sharedSR is the registry the tests of one test binary share, started on
// first use; StopRegistry stops it.
var sharedSR struct {
	once sync.Once
	dir  string
	r    *SchemaRegistry
	err  error
}

// Registry returns the schema registry of the test binary, starting it on
// first use; the test fails (never skips) when it cannot be built or
// started. Tests share it: each uses subjects of its own. A package that
// uses it stops it at exit: TestMain(m) { code := m.Run();
// testenv.StopRegistry(); os.Exit(code) } (the watchdog stops it anyway
// when the binary exits).
func Registry(t testing.TB) *SchemaRegistry {
	t.Helper()
	sharedSR.once.Do(func() {
		start := time.Now()
		if sharedSR.dir, sharedSR.err = os.MkdirTemp("", "streamsql-sr-"); sharedSR.err != nil {
			return
		}
		sharedSR.r, sharedSR.err = StartSchemaRegistry(sharedSR.dir)
		if sharedSR.err == nil {
			fmt.Fprintf(os.Stderr, "schema registry on %s, started in %v\n", sharedSR.r.URL, time.Since(start).Round(time.Millisecond))
		}
	})
	if sharedSR.err != nil {
		t.Fatalf("starting the schema registry: %v", sharedSR.err)
	}
	return sharedSR.r
}

// StopRegistry stops the shared registry, if a test started it, and
// removes its files.
func StopRegistry() {
	if sharedSR.r != nil {
		if err := sharedSR.r.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	if sharedSR.dir != "" {
		os.RemoveAll(sharedSR.dir)
	}
}
