package testenv

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
)

// S3Bucket is the bucket scripts/s3-server.sh creates.
const S3Bucket = "streamsql"

// S3Server is an S3-compatible server (versitygw) started with
// scripts/s3-server.sh on 127.0.0.1:Port, its objects, log and pid file
// under Dir, with the bucket S3Bucket. Its Env is AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_REGION and S3_ENDPOINT; Start starts it
// again on its port and directory, keeping every object.
type S3Server struct {
	*ScriptServer
	Endpoint string // http://127.0.0.1:Port
}

// StartS3Server installs the server if needed (scripts/s3-server.sh
// resolve: a few minutes the first time) and starts it on a free port
// with its data under dir.
func StartS3Server(dir string) (*S3Server, error) {
	ss, err := startScriptServer("s3-server.sh", dir, nil, func(s *ScriptServer) error {
		if got, want := s.Var("S3_ENDPOINT"), "http://127.0.0.1:"+strconv.Itoa(s.Port); got != want {
			return fmt.Errorf("printed S3_ENDPOINT=%q, want %q", got, want)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &S3Server{ScriptServer: ss, Endpoint: ss.Var("S3_ENDPOINT")}, nil
}

// sharedS3 is the S3 server the tests of one test binary share.
var sharedS3 sharedServer[*S3Server]

// S3 returns the S3 server of the test binary, starting it on first use;
// the test fails when it cannot start. Tests share its bucket: each
// writes under a prefix of its own. A package that uses it stops it at
// exit: TestMain(m) { code := m.Run(); testenv.StopS3(); os.Exit(code) }
// (the watchdog stops it anyway when the binary exits).
func S3(t testing.TB) *S3Server {
	t.Helper()
	return sharedS3.get(t, "the S3 server", "streamsql-s3-", StartS3Server,
		func(s *S3Server) string { return fmt.Sprintf("on %s (data in %s)", s.Endpoint, s.Dir) })
}

// StopS3 stops the shared S3 server, if a test started it, and removes
// its data.
func StopS3() { sharedS3.stop() }

// moduleScript finds scripts/<name> of this module.
func moduleScript(name string) (string, error) {
	mod, err := apacheScript() // scripts/apache-kafka.sh of the module
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(mod), name), nil
}
