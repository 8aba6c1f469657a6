package udf

import (
	"errors"
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/types"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrBadModule: the module is not a function of a known ABI version,
	// or its signature is not one the engine takes.
	ErrBadModule = errors.New("not a user-defined function module")
	// ErrBadOption: an unknown or bad option of CREATE FUNCTION.
	ErrBadOption = errors.New("bad function option")
	// ErrCall: a call of the function failed (trap, panic, exit, time or
	// memory limit).
	ErrCall = errors.New("user-defined function failed")
)

// Signature is what a module's streamsql_udf_signature export declares:
// the argument and result types and whether the function is called on a
// row with a NULL argument (else such a row's result is NULL).
type Signature struct {
	Args         []types.T
	Ret          types.T
	CalledOnNull bool
}

// String is the signature as the module declares it: "(STRING, STRING)
// RETURNS BIGINT RETURNS NULL ON NULL INPUT".
func (s Signature) String() string {
	var b strings.Builder
	b.WriteString("(")
	for i, a := range s.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.String())
	}
	b.WriteString(") RETURNS " + s.Ret.String())
	if s.CalledOnNull {
		b.WriteString(" CALLED ON NULL INPUT")
	} else {
		b.WriteString(" RETURNS NULL ON NULL INPUT")
	}
	return b.String()
}

// supported reports whether values of t cross the ABI.
func supported(t types.T) bool {
	switch t.Kind {
	case types.BigInt, types.Int, types.Double, types.Boolean, types.String:
		return true
	}
	return false
}

// ParseSignature reads a signature as String writes it (VARCHAR is
// STRING). Only BIGINT, INT, DOUBLE, BOOLEAN and STRING cross ABI 1.
func ParseSignature(text string) (Signature, error) {
	bad := func(format string, a ...any) (Signature, error) {
		return Signature{}, fmt.Errorf("%w: signature %q: %s", ErrBadModule, text, fmt.Sprintf(format, a...))
	}
	s := strings.TrimSpace(text)
	if !strings.HasPrefix(s, "(") {
		return bad("it starts with the argument types in parentheses")
	}
	close := strings.IndexByte(s, ')')
	if close < 0 {
		return bad("the argument list is not closed")
	}
	var sig Signature
	if list := strings.TrimSpace(s[1:close]); list != "" {
		for _, a := range strings.Split(list, ",") {
			t, err := parseType(a)
			if err != nil {
				return bad("%v", err)
			}
			sig.Args = append(sig.Args, t)
		}
	}
	if len(sig.Args) == 0 {
		return bad("a function takes at least one argument")
	}
	rest := strings.Fields(strings.ToUpper(s[close+1:]))
	if len(rest) < 2 || rest[0] != "RETURNS" {
		return bad("RETURNS and the result type follow the arguments")
	}
	t, err := parseType(rest[1])
	if err != nil {
		return bad("%v", err)
	}
	sig.Ret = t
	switch strings.Join(rest[2:], " ") {
	case "RETURNS NULL ON NULL INPUT":
	case "CALLED ON NULL INPUT":
		sig.CalledOnNull = true
	default:
		return bad("RETURNS NULL ON NULL INPUT or CALLED ON NULL INPUT ends it")
	}
	return sig, nil
}

func parseType(s string) (types.T, error) {
	s = strings.TrimSpace(s)
	t, err := types.Parse(s)
	if err != nil {
		return types.T{}, err
	}
	if !supported(t) {
		return types.T{}, fmt.Errorf("type %s does not cross ABI version %d (BIGINT, INT, DOUBLE, BOOLEAN and STRING do)", s, ABIVersion)
	}
	if t.Kind == types.String {
		t = types.T{Kind: types.String} // VARCHAR(n) is STRING here
	}
	return t, nil
}
