package option

import "testing"

func TestErrorsNameTheOption(t *testing.T) {
	opts := map[string]string{"n": "x", "b": "yes", "e": "seq", "c": "ab", "tab": `\t`}
	if _, err := Int(opts, "n", 0, 0, 1<<63-1); err == nil || err.Error() != "option 'n' must be a non-negative integer, got 'x'" {
		t.Fatal(err)
	}
	if _, err := Bool(opts, "b", false); err == nil || err.Error() != "option 'b' must be 'true' or 'false', got 'yes'" {
		t.Fatal(err)
	}
	if _, err := Enum(opts, "e", "", "sequence", "random"); err == nil || err.Error() != "option 'e' must be 'sequence' or 'random', got 'seq'" {
		t.Fatal(err)
	}
	if _, err := Char(opts, "c", ','); err == nil {
		t.Fatal("want error")
	}
	if c, err := Char(opts, "tab", ','); err != nil || c != '\t' {
		t.Fatal(c, err)
	}
	if n, err := Int(opts, "absent", 7, 0, 10); err != nil || n != 7 {
		t.Fatal(n, err)
	}
}
