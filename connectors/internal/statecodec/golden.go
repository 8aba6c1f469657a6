package statecodec

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/checkpoint"
)

// WriteGoldenEnv, set to 1, makes CheckGolden write a golden file that does
// not exist yet (it never overwrites one).
const WriteGoldenEnv = "STREAMSQL_WRITE_GOLDEN"

// CheckGolden checks one version of a state encoding against its golden
// file (path, the encoding in hex, written by the build that introduced
// the version): the golden bytes must still decode to want, and, when
// encoded is not nil (the current version: this build's encoding of
// want), encoded must be the golden bytes.
//
// When it fails, the encoding changed: bump the version, keep decoding
// the old one (its golden file stays, checked with encoded nil), and add a
// golden file for the new version.
func CheckGolden(t testing.TB, path string, encoded []byte, decode func([]byte) (any, error), want any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && encoded != nil && os.Getenv(WriteGoldenEnv) == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(hex.EncodeToString(encoded)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		data, err = os.ReadFile(path)
	}
	if err != nil {
		t.Fatalf("golden state %s: %v (set %s=1 to write a missing one)", path, err, WriteGoldenEnv)
	}
	golden, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("golden state %s: %v", path, err)
	}
	got, err := decode(golden)
	if err != nil {
		t.Fatalf("golden state %s no longer decodes: %v (a format change must keep reading the old version)", path, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("golden state %s decodes to\n%#v\nwant\n%#v", path, got, want)
	}
	if encoded != nil && !reflect.DeepEqual(encoded, golden) {
		t.Fatalf("the encoding differs from golden state %s without a version bump (bump the version and keep reading the old one):\n got  %q\n want %q",
			path, encoded, golden)
	}
}

// Refusal is a state encoding a decoder must refuse with
// checkpoint.ErrIncompatibleState, and what the error must say.
type Refusal struct {
	Name  string
	State []byte
	Want  string
}

// Refusals are the cases every versioned encoding refuses, given a valid
// body of the current version: the body without a header (as written
// before encodings had versions), and the body under the next version.
func Refusals(maxVersion uint8, body []byte) []Refusal {
	return []Refusal{
		{"no header", body, "without a format header"},
		{"newer version", append(checkpoint.AppendStateHeader(nil, maxVersion+1), body...), fmt.Sprintf("version %d;", maxVersion+1)},
	}
}

// CheckRefused checks that decode refuses every case with an error
// wrapping checkpoint.ErrIncompatibleState that names owner and says the
// case's Want.
func CheckRefused(t testing.TB, owner string, decode func([]byte) error, cases []Refusal) {
	t.Helper()
	for _, c := range cases {
		err := decode(c.State)
		if !errors.Is(err, checkpoint.ErrIncompatibleState) || !strings.Contains(err.Error(), owner) || !strings.Contains(err.Error(), c.Want) {
			t.Errorf("%s (%q): got %v, want ErrIncompatibleState naming %q and saying %q", c.Name, c.State, err, owner, c.Want)
		}
	}
}
