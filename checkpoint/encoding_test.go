package checkpoint

import (
	"errors"
	"strings"
	"testing"
)

func TestStateHeader(t *testing.T) {
	b := AppendStateHeader(nil, 2)
	b = append(b, 'x')
	v, rest, err := ReadStateHeader(b, "op", 1, 2)
	if err != nil || v != 2 || string(rest) != "x" {
		t.Fatalf("got %d %q %v", v, rest, err)
	}
	for _, c := range []struct {
		src  []byte
		want string
	}{
		{AppendStateHeader(nil, 3), "version 3; this build reads versions 1 to 2"},
		{[]byte{1, 2, 3}, "without a format header"},
		{nil, "without a format header"},
	} {
		_, _, err := ReadStateHeader(c.src, "GroupAggregate 1a2b", 1, 2)
		if !errors.Is(err, ErrIncompatibleState) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "GroupAggregate 1a2b") {
			t.Errorf("%v: got %v, want ErrIncompatibleState with %q", c.src, err, c.want)
		}
	}
}
