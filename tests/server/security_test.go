package server

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

// freePortAll is a free port on every interface (0.0.0.0:PORT).
func freePortAll(t *testing.T) string {
	l, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// status is the status of a request to url carrying the header
// "Authorization: auth" (none when auth is empty), and its body.
func status(t *testing.T, c *http.Client, method, url, auth string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader("SHOW TABLES;"))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestNonLoopbackNeedsToken: a server on 0.0.0.0 without a token does not
// start, and says why.
func TestNonLoopbackNeedsToken(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:" + freePortAll(t), ":" + freePortAll(t)} {
		p := testenv.StartProc(t, time.Minute, []string{"STREAMSQL_SERVER_TOKEN="}, bin, "server", "--data-dir", t.TempDir(), "--http", addr)
		err := p.Wait()
		if err == nil {
			t.Fatalf("the server on %s without a token started:\n%s", addr, p.Output())
		}
		for _, want := range []string{"--http " + addr + " is not a loopback address", "--token-file", "STREAMSQL_SERVER_TOKEN"} {
			if !strings.Contains(p.Output(), want) {
				t.Errorf("the error on %s does not say %q:\n%s", addr, want, p.Output())
			}
		}
	}
}

// TestToken: a server on 0.0.0.0 with --token-file answers a request only
// with its token (but /healthz), and streamsql --server sends it.
func TestToken(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(t.TempDir(), "token")
	const token = "s3cret-token-of-the-test"
	os.WriteFile(tokenFile, []byte(token+"\n"), 0o600)
	port := freePortAll(t)
	srv := startServer(t, dir, "0.0.0.0:"+port, "--token-file", tokenFile)
	t.Cleanup(func() {
		srv.Signal(syscall.SIGTERM)
		srv.Wait()
	})
	url := "http://127.0.0.1:" + port
	c := http.DefaultClient
	for _, ep := range []struct{ method, path string }{
		{"GET", "/api/v1/jobs"}, {"POST", "/api/v1/statements"}, {"GET", "/metrics"}, {"GET", "/"},
	} {
		if code, body := status(t, c, ep.method, url+ep.path, ""); code != 401 || !strings.Contains(body, "unauthorized") {
			t.Errorf("%s %s without a token: %d %s", ep.method, ep.path, code, body)
		}
		if code, body := status(t, c, ep.method, url+ep.path, "Bearer wrong"); code != 401 {
			t.Errorf("%s %s with a wrong token: %d %s", ep.method, ep.path, code, body)
		}
		if code, body := status(t, c, ep.method, url+ep.path, token); code != 401 {
			t.Errorf("%s %s with the token but not as Bearer: %d %s", ep.method, ep.path, code, body)
		}
		if code, body := status(t, c, ep.method, url+ep.path, "Bearer "+token); code != 200 {
			t.Errorf("%s %s with the token: %d %s", ep.method, ep.path, code, body)
		}
	}
	if code, body := status(t, c, "GET", url+"/healthz", ""); code != 200 {
		t.Errorf("/healthz without a token: %d %s", code, body)
	}

	file := filepath.Join(t.TempDir(), "tables.sql")
	os.WriteFile(file, []byte("CREATE TABLE t (n BIGINT) WITH ('connector'='blackhole');\n"), 0o644)
	client := testenv.StartProc(t, time.Minute, []string{"STREAMSQL_SERVER_TOKEN="}, bin, "--server", url, "-f", file)
	if err := client.Wait(); err == nil || !strings.Contains(client.Output(), "unauthorized") {
		t.Fatalf("a client without the token: %v\n%s", err, client.Output())
	}
	client = testenv.StartProc(t, time.Minute, nil, bin, "--server", url, "--token-file", tokenFile, "-f", file)
	if err := client.Wait(); err != nil {
		t.Fatalf("a client with --token-file: %v\n%s", err, client.Output())
	}
	show := filepath.Join(t.TempDir(), "show.sql")
	os.WriteFile(show, []byte("SHOW TABLES;\n"), 0o644)
	client = testenv.StartProc(t, time.Minute, []string{"STREAMSQL_SERVER_TOKEN=" + token}, bin, "--server", url, "-f", show)
	if err := client.Wait(); err != nil || !strings.Contains(client.Output(), "| t ") {
		t.Fatalf("a client with the token in STREAMSQL_SERVER_TOKEN: %v\n%s", err, client.Output())
	}
}

// TestPprofOnlyWithFlag: /debug/pprof/ is 404 unless the server runs with
// --pprof.
func TestPprofOnlyWithFlag(t *testing.T) {
	_, _, url := serve(t)
	if code, body := status(t, http.DefaultClient, "GET", url+"/debug/pprof/", ""); code != 404 {
		t.Errorf("/debug/pprof/ without --pprof: %d %s", code, body)
	}
	if code, _ := status(t, http.DefaultClient, "GET", url+"/debug/pprof/cmdline", ""); code != 404 {
		t.Errorf("/debug/pprof/cmdline without --pprof: %d", code)
	}
	addr := freeAddr(t)
	srv := startServer(t, t.TempDir(), addr, "--pprof")
	t.Cleanup(func() {
		srv.Signal(syscall.SIGTERM)
		srv.Wait()
	})
	if code, body := status(t, http.DefaultClient, "GET", "http://"+addr+"/debug/pprof/", ""); code != 200 || !strings.Contains(body, "goroutine") {
		t.Errorf("/debug/pprof/ with --pprof: %d %s", code, body)
	}
}

// TestAllowedPaths: statements sent to the server name files only under
// its data directory (the default) or under --allowed-paths; a path outside
// is refused with an error naming it and the allowed directories.
func TestAllowedPaths(t *testing.T) {
	dir, _, url := serve(t)
	api := url + "/api/v1"
	for _, c := range []struct{ name, path, body string }{
		{"/etc/passwd", "/statements", "CREATE TABLE pw (line STRING) WITH ('connector'='filesystem', 'path'='/etc/passwd', 'format'='raw');"},
		{"a restore path", "/statements?restore=/tmp/some-savepoint", "SHOW TABLES;"},
		{"a savepoints dir", "/statements", "SET 'state.savepoints.dir' = '/tmp';"},
	} {
		code, body := post(t, api+c.path, c.body)
		msg, _ := body["error"].(string)
		if code != 400 || !strings.Contains(msg, "path not allowed") || !strings.Contains(msg, "only read and write files under "+dir) {
			t.Errorf("%s: %d %v", c.name, code, body)
		}
	}
	if code, body := post(t, api+"/statements", "CREATE TABLE inside (n BIGINT) WITH ('connector'='filesystem', 'path'='"+dir+"/files/inside', 'format'='csv');"); code != 200 {
		t.Errorf("a path in the data directory: %d %v", code, body)
	}

	// --allowed-paths replaces the default; each must exist.
	other := t.TempDir()
	p := testenv.StartProc(t, time.Minute, nil, bin, "server", "--data-dir", t.TempDir(), "--http", freeAddr(t), "--allowed-paths", other+","+other+"/missing")
	if err := p.Wait(); err == nil || !strings.Contains(p.Output(), "--allowed-paths") || !strings.Contains(p.Output(), other+"/missing") {
		t.Errorf("a server with a missing allowed directory: %v\n%s", err, p.Output())
	}
	data2, addr := t.TempDir(), freeAddr(t)
	srv := startServer(t, data2, addr, "--allowed-paths", other)
	t.Cleanup(func() {
		srv.Signal(syscall.SIGTERM)
		srv.Wait()
	})
	api = "http://" + addr + "/api/v1"
	if code, body := post(t, api+"/statements", "CREATE TABLE o (n BIGINT) WITH ('connector'='filesystem', 'path'='"+other+"/o', 'format'='csv');"); code != 200 {
		t.Errorf("a path under --allowed-paths: %d %v", code, body)
	}
	if code, body := post(t, api+"/statements", "CREATE TABLE d (n BIGINT) WITH ('connector'='filesystem', 'path'='"+data2+"/d', 'format'='csv');"); code != 400 {
		t.Errorf("a path in the data directory, not listed in --allowed-paths: %d %v", code, body)
	}
}

// TestServerHelp: streamsql server -h lists the security flags.
func TestServerHelp(t *testing.T) {
	out, _ := exec.Command(bin, "server", "-h").CombinedOutput()
	for _, want := range []string{"-token-file", "STREAMSQL_SERVER_TOKEN", "-tls-cert", "-tls-key", "-allowed-paths", "-pprof", "loopback"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("streamsql server -h does not say %q:\n%s", want, out)
		}
	}
	out, _ = exec.Command(bin, "-h").CombinedOutput()
	for _, want := range []string{"-token-file", "-tls-ca"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("streamsql -h does not say %q:\n%s", want, out)
		}
	}
}

// TestObjectStorePathsAndSecrets: a server allows an object store location
// only under an s3:// entry of --allowed-paths, does not let a client SET
// the object store's endpoint or credentials (its configuration file gives
// them), and answers SET; with the secret key masked, which its log never
// shows.
func TestObjectStorePathsAndSecrets(t *testing.T) {
	data, addr := t.TempDir(), freeAddr(t)
	config := filepath.Join(t.TempDir(), "config.yaml")
	const secret = "the-secret-key-of-the-test"
	if err := os.WriteFile(config, []byte("s3.endpoint: http://127.0.0.1:9\ns3.access-key: streamsql\ns3.secret-key: "+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, data, addr, "--config", config, "--allowed-paths", data+",s3://streamsql/jobs", "--log-format", "json")
	t.Cleanup(func() {
		srv.Signal(syscall.SIGTERM)
		srv.Wait()
	})
	api := "http://" + addr + "/api/v1"
	if code, body := post(t, api+"/statements", "SET 'state.savepoints.dir' = 's3://streamsql/jobs/savepoints';"); code != 200 {
		t.Errorf("a savepoints dir under the allowed s3:// location: %d %v", code, body)
	}
	for _, c := range []struct{ body, want string }{
		{"SET 'execution.checkpointing.dir' = 's3://streamsql/other';", "path not allowed: 'execution.checkpointing.dir' = 's3://streamsql/other'"},
		{"SET 'state.savepoints.dir' = 's3://elsewhere/jobs';", "path not allowed: 'state.savepoints.dir' = 's3://elsewhere/jobs'"},
		{"SET 's3.endpoint' = 'http://127.0.0.1:1';", "'s3.endpoint' may not be SET in this session"},
		{"SET 's3.secret-key' = 'x';", "'s3.secret-key' may not be SET in this session"},
	} {
		code, body := post(t, api+"/statements", c.body)
		if msg, _ := body["error"].(string); code != 400 || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %d %v, want 400 %q", c.body, code, body, c.want)
		}
	}
	code, body := post(t, api+"/statements", "SET;")
	text := fmt.Sprint(body)
	if code != 200 || !strings.Contains(text, "s3.secret-key ******") || strings.Contains(text, secret) {
		t.Errorf("SET;: %d %s; want s3.secret-key masked", code, text)
	}
	if strings.Contains(srv.Output(), secret) {
		t.Errorf("the server's log shows the secret key:\n%s", srv.Output())
	}
}
