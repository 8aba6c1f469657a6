package layering

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestModTidy: go.mod and go.sum are as `go mod tidy` leaves them, so the
// requirements say which modules the code uses directly and no stale one
// stays.
func TestModTidy(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "mod", "tidy", "-diff")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go mod tidy would change go.mod or go.sum (%v):\n%s", err, out)
	}
}
