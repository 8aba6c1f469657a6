//go:build cgo && linux

package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestMallocArenasBounded: the binary runs with glibc's arenas bounded
// (MALLOC_ARENA_MAX=2, malloc_cgo.go) in the same process the caller
// started, and keeps a bound the environment sets.
func TestMallocArenasBounded(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{"", "MALLOC_ARENA_MAX=2"},
		{"MALLOC_ARENA_MAX=4", "MALLOC_ARENA_MAX=4"},
	} {
		cmd := exec.Command(binary, "--data-dir", filepath.Join(t.TempDir(), "data"))
		cmd.Env = os.Environ()
		for i, kv := range cmd.Env {
			if bytes.HasPrefix([]byte(kv), []byte("MALLOC_ARENA_MAX=")) {
				cmd.Env[i] = "UNSET_MALLOC_ARENA_MAX=1"
			}
		}
		if tc.env != "" {
			cmd.Env = append(cmd.Env, tc.env)
		}
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		io.WriteString(stdin, "SELECT 1 AS one;\n")
		sc := bufio.NewScanner(stdout)
		for sc.Scan() && sc.Text() != "1 row in set" {
		}
		// The shell answered: it is the process the exec left running.
		environ, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/environ")
		stdin.Close()
		cmd.Wait()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, kv := range bytes.Split(environ, []byte{0}) {
			if bytes.HasPrefix(kv, []byte("MALLOC_ARENA_MAX=")) {
				n++
				if string(kv) != tc.want {
					t.Errorf("environment %q: the process runs with %s, want %s", tc.env, kv, tc.want)
				}
			}
		}
		if n != 1 {
			t.Errorf("environment %q: MALLOC_ARENA_MAX set %d times, want once", tc.env, n)
		}
	}
}
