package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

// setOptions is what "SET;" lists on the server.
func setOptions(t *testing.T, api string) string {
	t.Helper()
	code, body := post(t, api+"/statements", "SET;")
	if code != 200 {
		t.Fatalf("SET: %d %v", code, body)
	}
	return fmt.Sprint(body["results"])
}

// TestOptionsSurviveRestart: what a client SETs on the server is kept in
// its data dir (<data-dir>/server/options.json): after a SIGKILL the
// restarted server lists it and the job submitted next checkpoints; once
// RESET, a restart forgets it. A job without checkpointing stops with a
// savepoint through the API all the same, and a request's restore is the
// first job's only.
func TestOptionsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	addr := freeAddr(t)
	api := "http://" + addr + "/api/v1"
	srv := startServer(t, data, addr)
	submitOK(t, api+"/statements", `CREATE TABLE ticks (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '50',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '1000000000');
CREATE TABLE out (id BIGINT) WITH ('connector' = 'blackhole');
SET 'execution.checkpointing.interval' = '100ms';`)
	if _, err := os.Stat(filepath.Join(data, "server", "options.json")); err != nil {
		t.Fatalf("the SET options are not recorded: %v", err)
	}
	srv.Signal(syscall.SIGKILL)
	srv.Wait()

	srv = startServer(t, data, addr)
	if opts := setOptions(t, api); !strings.Contains(opts, "execution.checkpointing.interval") || !strings.Contains(opts, "100ms") {
		t.Fatalf("the restarted server's options: %s", opts)
	}
	id := submit(t, api, "INSERT INTO out SELECT id FROM ticks;")
	waitFor(t, "a checkpoint of the job submitted after the restart", func() bool {
		var cp struct {
			Counts struct{ Completed int } `json:"counts"`
		}
		getJSON(t, api+"/jobs/"+id+"/checkpoints", &cp)
		return cp.Counts.Completed > 0
	})
	submitOK(t, api+"/jobs/"+id+"/stop", "")
	submitOK(t, api+"/statements", "RESET 'execution.checkpointing.interval';")
	srv.Signal(syscall.SIGKILL)
	srv.Wait()

	srv = startServer(t, data, addr)
	defer func() {
		srv.Signal(syscall.SIGTERM)
		srv.Wait()
	}()
	if opts := setOptions(t, api); strings.Contains(opts, "execution.checkpointing.interval") {
		t.Fatalf("RESET, then restarted: the option is still set: %s", opts)
	}

	// Without checkpointing, a stop with a savepoint takes one.
	id = submit(t, api, "INSERT INTO out SELECT id FROM ticks;")
	code, body := post(t, api+"/jobs/"+id+"/stop?savepoint=true", "")
	sp, _ := body["savepoint"].(string)
	if code != 200 || sp == "" {
		t.Fatalf("stop with savepoint of a job without checkpointing: %d %v", code, body)
	}
	if _, err := os.Stat(filepath.Join(sp, "_metadata")); err != nil {
		t.Fatalf("the savepoint: %v", err)
	}

	// ?restore= (-s) is the request's first job's: the second starts on
	// its own.
	code, body = post(t, api+"/statements?restore="+sp, "INSERT INTO out SELECT id FROM ticks;\nINSERT INTO out SELECT id + 1 FROM ticks;")
	rs, _ := body["results"].([]any)
	if code != 200 || len(rs) != 2 {
		t.Fatalf("two jobs with ?restore: %d %v", code, body)
	}
	first, _ := rs[0].(map[string]any)["message"].(string)
	second, _ := rs[1].(map[string]any)["message"].(string)
	if !strings.Contains(first, "restored job") || !strings.Contains(first, sp) {
		t.Errorf("the first job is not restored from %s: %q", sp, first)
	}
	if strings.Contains(second, "restored") {
		t.Errorf("the second job of the request restored the savepoint too: %q", second)
	}
}

// TestConfigFileFlag: `streamsql server --config FILE` makes the file's
// options the base of its session: SET lists them with the file and line,
// and a job submitted without any SET checkpoints by the file's interval.
// A file with an unknown key stops the server before it serves, the error
// naming the file and line.
func TestConfigFileFlag(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "flink.yaml")
	if err := os.WriteFile(file, []byte("execution:\n  checkpointing:\n    interval: 100 ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	api := "http://" + addr + "/api/v1"
	srv := startServer(t, filepath.Join(dir, "data"), addr, "--config", file)
	defer func() {
		srv.Signal(syscall.SIGTERM)
		srv.Wait()
	}()
	if opts := setOptions(t, api); !strings.Contains(opts, "execution.checkpointing.interval 100 ms "+file+":3") {
		t.Fatalf("SET on the server: %s", opts)
	}
	submitOK(t, api+"/statements", `CREATE TABLE ticks (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '50');
CREATE TABLE out (id BIGINT) WITH ('connector' = 'blackhole');`)
	id := submit(t, api, "INSERT INTO out SELECT id FROM ticks;")
	waitFor(t, "a checkpoint of a job by the file's interval", func() bool {
		var cp struct {
			Counts struct{ Completed int } `json:"counts"`
		}
		getJSON(t, api+"/jobs/"+id+"/checkpoints", &cp)
		return cp.Counts.Completed > 0
	})

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("parallelism.default: 2\njobmanager.rpc.address: localhost\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := testenv.StartProc(t, time.Minute, nil, bin, "server", "--data-dir", filepath.Join(dir, "data2"), "--http", freeAddr(t), "--config", bad)
	if err := p.Wait(); err == nil {
		t.Fatalf("the server started with an unknown key in its configuration file:\n%s", p.Output())
	}
	if !strings.Contains(p.Output(), bad+":2: unknown option 'jobmanager.rpc.address'") {
		t.Fatalf("the server's error does not name the file and line:\n%s", p.Output())
	}
}
