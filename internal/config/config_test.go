package config

import (
	"errors"
	"testing"
	"time"
)

func TestOptions(t *testing.T) {
	n := Int("n", 4, 1, 10, "")
	d := Duration("d", time.Second, false, "")
	p := Duration("p", time.Second, true, "")
	b := Bool("b", false, "")
	e := Enum("e", "a", []string{"a", "b"}, map[string]string{"old": "b"}, "")
	f := Float("f", 2, 1, "")
	for _, tc := range []struct {
		def   Def
		value string
		err   string
	}{
		{n, "0", "option 'n' must be an integer between 1 and 10, got '0'"},
		{n, "11", "option 'n' must be an integer between 1 and 10, got '11'"},
		{n, " 10 ", ""},
		{d, "-1s", "option 'd' must be a non-negative duration such as '30 s' or '500 ms', got '-1s'"},
		{d, "0", ""},
		{p, "0", "option 'p' must be a positive duration such as '30 s' or '500 ms', got '0'"},
		{b, "1", "option 'b' must be 'true' or 'false', got '1'"},
		{b, "TRUE", ""},
		{e, "c", "option 'e' must be 'a' or 'b', got 'c'"},
		{e, "OLD", ""},
		{f, "0.5", "option 'f' must be a number >= 1, got '0.5'"},
		{f, "inf", "option 'f' must be a number >= 1, got 'inf'"},
	} {
		err := tc.def.Check(tc.value)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s = %q: %v", tc.def.Key(), tc.value, err)
		case tc.err != "" && (err == nil || err.Error() != tc.err || !errors.Is(err, ErrBadValue)):
			t.Errorf("%s = %q: got %v, want %s", tc.def.Key(), tc.value, err, tc.err)
		}
	}
	m := map[string]string{"n": "", "e": "Old"}
	if v, err := n.Get(m); v != 4 || err != nil {
		t.Errorf("an empty value is the default: %v, %v", v, err)
	}
	if v, err := e.Get(m); v != "b" || err != nil {
		t.Errorf("an alias is its canonical value: %v, %v", v, err)
	}
	if v, err := d.Get(nil); v != time.Second || err != nil {
		t.Errorf("an absent value is the default: %v, %v", v, err)
	}
}

// TestSensitive: the keys whose values are secrets, in any case, and
// their values as shown.
func TestSensitive(t *testing.T) {
	for key, want := range map[string]bool{
		"s3.secret-key": true, "S3.Secret-Key": true, "properties.sasl.jaas.config": true, "ssl.key.password": true,
		"api.TOKEN": true, "s3.access-key": false, "s3.endpoint": false, "parallelism.default": false,
	} {
		if got := Sensitive(key); got != want {
			t.Errorf("Sensitive(%q) = %v, want %v", key, got, want)
		}
	}
	if got := Show("s3.secret-key", "hunter2"); got != Masked {
		t.Errorf("Show of a secret: %q, want %q", got, Masked)
	}
	if got := Show("s3.secret-key", ""); got != "" {
		t.Errorf("Show of an empty secret: %q, want it empty", got)
	}
	if got := Show("s3.endpoint", "http://x"); got != "http://x" {
		t.Errorf("Show of an endpoint: %q", got)
	}
}
