package functions

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/streamsql/streamsql/types"
)

// Flink's hash functions (MD5, SHA1, SHA224, SHA256, SHA384, SHA512,
// SHA2), STARTSWITH/ENDSWITH and the string tests IS_ALPHA, IS_DIGIT and
// IS_DECIMAL.

func init() {
	for name, sum := range map[string]func(dst []byte, s string) []byte{
		"MD5":    func(dst []byte, s string) []byte { h := md5.Sum(bytesOf(s)); return hex.AppendEncode(dst, h[:]) },
		"SHA1":   func(dst []byte, s string) []byte { h := sha1.Sum(bytesOf(s)); return hex.AppendEncode(dst, h[:]) },
		"SHA224": appendSHA2(224),
		"SHA256": appendSHA2(256),
		"SHA384": appendSHA2(384),
		"SHA512": appendSHA2(512),
	} {
		register(name, strFunc(name, "s", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
			return sum(dst, r.str(0, i)), true, nil
		}))
	}
	f := register("SHA2", func(args []types.T) (Resolved, error) { return resolveSHA2(argsOf(args)) })
	f.resolveArgs = resolveSHA2
	register("STARTSWITH", resolveAffix("STARTSWITH", strings.HasPrefix))
	register("ENDSWITH", resolveAffix("ENDSWITH", strings.HasSuffix))
	register("IS_ALPHA", resolveStringTest("IS_ALPHA", func(s string) bool { return allRunes(s, unicode.IsLetter) }))
	register("IS_DIGIT", resolveStringTest("IS_DIGIT", func(s string) bool { return allRunes(s, unicode.IsDigit) }))
	register("IS_DECIMAL", resolveStringTest("IS_DECIMAL", isJavaNumber))
}

// appendSHA2 appends the hex SHA-2 digest of s of the given bit length
// (224, 256, 384 or 512), in lower case as Flink's.
func appendSHA2(bits int) func(dst []byte, s string) []byte {
	return func(dst []byte, s string) []byte {
		switch bits {
		case 224:
			h := sha256.Sum224(bytesOf(s))
			return hex.AppendEncode(dst, h[:])
		case 256:
			h := sha256.Sum256(bytesOf(s))
			return hex.AppendEncode(dst, h[:])
		case 384:
			h := sha512.Sum384(bytesOf(s))
			return hex.AppendEncode(dst, h[:])
		}
		h := sha512.Sum512(bytesOf(s))
		return hex.AppendEncode(dst, h[:])
	}
}

func sha2Bits(n int64) bool { return n == 224 || n == 256 || n == 384 || n == 512 }

// resolveSHA2: SHA2(s, bits) is the SHA-2 digest of s of 224, 256, 384
// or 512 bits; another literal length is an error where it is written,
// another computed one fails the query (as Flink's, whose MessageDigest
// has no such algorithm).
func resolveSHA2(args []Arg) (Resolved, error) {
	ts := make([]types.T, len(args))
	for i, a := range args {
		ts[i] = a.Type
	}
	if len(args) == 2 && args[1].Const {
		if v, ok := args[1].Value.(int64); ok && !sha2Bits(v) {
			return Resolved{}, invalidArg("SHA2: unsupported hash length %d (224, 256, 384 or 512)", v)
		}
	}
	return strFunc("SHA2", "si", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		bits := r.int(1, i)
		if !sha2Bits(bits) {
			return dst, false, fmt.Errorf("SHA2: unsupported hash length %d (224, 256, 384 or 512)", bits)
		}
		return appendSHA2(int(bits))(dst, r.str(0, i)), true, nil
	})(ts)
}

// resolveAffix: STARTSWITH(s, prefix) and ENDSWITH(s, suffix) over two
// STRINGs or two BYTES; TRUE for the empty affix, NULL for a NULL.
func resolveAffix(name string, test func(s, affix string) bool) func(args []types.T) (Resolved, error) {
	return func(args []types.T) (Resolved, error) {
		if err := nargs(name, args, 2, 2); err != nil {
			return Resolved{}, err
		}
		t := types.StringType
		for _, a := range args {
			if a.Kind == types.Bytes {
				t = types.BytesType
			}
		}
		for _, a := range args {
			if a.Kind != t.Kind && a.Kind != types.Null {
				return Resolved{}, errArgs(name, args)
			}
		}
		rt := nullableFrom(types.BooleanType, args)
		return Resolved{Ret: rt, ArgTypes: []types.T{t, t}, Kernel: strict(types.BooleanType, func(ctx *Context, args []Vec, n int) (Vec, error) {
			mem := ctx.mem()
			val := andValidity(mem, args, n)
			buf, out := newBoolBuf(mem, n)
			s, a := newStrArg(args[0]), newStrArg(args[1])
			for i := range n {
				if val.valid(i) && test(s.at(i), a.at(i)) {
					out[i>>3] |= 1 << uint(i&7)
				}
			}
			return finish(types.BooleanType, n, val, buf), nil
		})}, nil
	}
}

// resolveStringTest: IS_ALPHA, IS_DIGIT and IS_DECIMAL of a STRING are
// BOOLEAN NOT NULL: FALSE for NULL and for the empty string, as Flink's.
func resolveStringTest(name string, test func(s string) bool) func(args []types.T) (Resolved, error) {
	return func(args []types.T) (Resolved, error) {
		if err := nargs(name, args, 1, 1); err != nil {
			return Resolved{}, err
		}
		if args[0].Kind != types.String && args[0].Kind != types.Null {
			return Resolved{}, errArgs(name, args)
		}
		rt := types.T{Kind: types.Boolean, NotNull: true}
		return Resolved{Ret: rt, ArgTypes: []types.T{types.StringType}, Infallible: true, Kernel: func(ctx *Context, args []Vec, n int) (Vec, error) {
			if args[0].Const {
				v, ok := args[0].Value.(string)
				return ConstVec(rt, ok && v != "" && test(v)), nil
			}
			mem := ctx.mem()
			val := andValidity(mem, args, n)
			buf, out := newBoolBuf(mem, n)
			s := newStrArg(args[0])
			for i := range n {
				if val.valid(i) {
					if v := s.at(i); v != "" && test(v) {
						out[i>>3] |= 1 << uint(i&7)
					}
				}
			}
			val.release()
			return finish(rt, n, validity{}, buf), nil
		}}, nil
	}
}

func allRunes(s string, f func(rune) bool) bool {
	for _, c := range s {
		if !f(c) {
			return false
		}
	}
	return true
}

// isJavaNumber reports whether Java's Double.parseDouble reads s (Flink's
// IS_DECIMAL): surrounding white space and control characters trimmed,
// an optional d/D/f/F suffix, NaN and [+-]Infinity spelt so, and a value
// too large for a double (Infinity to Java).
func isJavaNumber(s string) bool {
	s = strings.TrimFunc(s, func(c rune) bool { return c <= ' ' })
	unsigned := s
	if s != "" && (s[0] == '+' || s[0] == '-') {
		unsigned = s[1:]
	}
	if unsigned == "NaN" || unsigned == "Infinity" {
		return true
	}
	if n := len(s); n > 1 && strings.ContainsRune("dDfF", rune(s[n-1])) {
		s = s[:n-1]
	}
	if s == "" || strings.ContainsAny(s, "_iInN") {
		return false
	}
	f, err := strconv.ParseFloat(s, 64)
	return err == nil || math.IsInf(f, 0)
}
