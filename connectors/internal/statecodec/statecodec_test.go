package statecodec

import (
	"testing"

	"github.com/streamsql/streamsql/checkpoint"
)

type pos struct {
	File   string
	Offset int64
}

// TestDecodeJSON: a JSON state decodes only as the object it was written
// as: null (which would decode to zeros), another JSON value, an unknown
// field, a field of another type, trailing bytes, a missing header or an
// unknown version are each ErrIncompatibleState naming the owner.
func TestDecodeJSON(t *testing.T) {
	enc, err := EncodeJSON(1, pos{File: "a.csv", Offset: 7})
	if err != nil {
		t.Fatal(err)
	}
	var p pos
	if v, err := DecodeJSON(enc, "x", 1, 1, &p); err != nil || v != 1 || p != (pos{"a.csv", 7}) {
		t.Fatalf("round trip: %+v, version %d, %v", p, v, err)
	}
	h := checkpoint.AppendStateHeader(nil, 1)
	decode := func(b []byte) error { var p pos; _, err := DecodeJSON(b, "csv table t", 1, 1, &p); return err }
	CheckRefused(t, "csv table t", decode, append(Refusals(1, enc[2:]),
		Refusal{"null", append(h[:2:2], "null"...), "not a JSON object"},
		Refusal{"empty", h, "not a JSON object"},
		Refusal{"array", append(h[:2:2], "[1]"...), "not a JSON object"},
		Refusal{"unknown field", append(h[:2:2], `{"File":"a","Line":3}`...), `unknown field "Line"`},
		Refusal{"another type", append(h[:2:2], `{"Offset":"7"}`...), "Offset of type int64"},
		Refusal{"trailing", append(h[:2:2], `{"File":"a"}x`...), "trailing bytes"},
		Refusal{"truncated", append(h[:2:2], `{"File":"a"`...), "unexpected EOF"},
	))
}
