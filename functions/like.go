package functions

import (
	"fmt"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/streamsql/streamsql/types"
)

func init() {
	register("LIKE", resolveLike("LIKE", false))
	register("NOT LIKE", resolveLike("NOT LIKE", true))
}

// resolveLike resolves s LIKE pattern [ESCAPE e] passed as (s, pattern[,
// e]). '%' matches any sequence of characters, '_' one character; there is
// no escape character unless ESCAPE gives one (as Flink). Matching is
// case-sensitive.
func resolveLike(name string, negate bool) func(args []types.T) (Resolved, error) {
	return func(args []types.T) (Resolved, error) {
		if err := nargs(name, args, 2, 3); err != nil {
			return Resolved{}, err
		}
		for _, a := range args {
			if a.Kind != types.String && a.Kind != types.Null {
				return Resolved{}, errArgs(name, args)
			}
		}
		rt := nullableFrom(types.BooleanType, args)
		k := &likeKernel{negate: negate}
		return Resolved{Ret: rt, ArgTypes: repeatT(types.StringType, len(args)), Kernel: strict(types.BooleanType, k.eval)}, nil
	}
}

type likeKernel struct {
	negate bool
	cached atomic.Pointer[likeMatcher]
}

type likeKind uint8

const (
	likeExact likeKind = iota
	likePrefix
	likeSuffix
	likeContains
	likeAll
	likeGeneral
)

type likeTok struct {
	kind byte // 'l' literal, '_' one character, '%' any
	lit  string
}

// likeMatcher is a compiled LIKE pattern.
type likeMatcher struct {
	pattern, escape string
	kind            likeKind
	lit             string
	toks            []likeTok
}

func compileLike(pattern, escape string) (*likeMatcher, error) {
	m := &likeMatcher{pattern: pattern, escape: escape}
	var esc rune = -1
	if escape != "" {
		r, size := utf8.DecodeRuneInString(escape)
		if size != len(escape) {
			return nil, fmt.Errorf("invalid escape character '%s': must be a single character", escape)
		}
		esc = r
	}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			m.toks = append(m.toks, likeTok{kind: 'l', lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(pattern); {
		r, size := utf8.DecodeRuneInString(pattern[i:])
		i += size
		switch {
		case r == esc:
			if i >= len(pattern) {
				return nil, fmt.Errorf("invalid escape sequence in LIKE pattern '%s'", pattern)
			}
			r2, s2 := utf8.DecodeRuneInString(pattern[i:])
			if r2 != '%' && r2 != '_' && r2 != esc {
				return nil, fmt.Errorf("invalid escape sequence in LIKE pattern '%s'", pattern)
			}
			i += s2
			lit.WriteRune(r2)
		case r == '%':
			flush()
			if len(m.toks) == 0 || m.toks[len(m.toks)-1].kind != '%' {
				m.toks = append(m.toks, likeTok{kind: '%'})
			}
		case r == '_':
			flush()
			m.toks = append(m.toks, likeTok{kind: '_'})
		default:
			lit.WriteRune(r)
		}
	}
	flush()
	m.kind = likeGeneral
	t := m.toks
	switch {
	case len(t) == 0:
		m.kind, m.lit = likeExact, ""
	case len(t) == 1 && t[0].kind == 'l':
		m.kind, m.lit = likeExact, t[0].lit
	case len(t) == 1 && t[0].kind == '%':
		m.kind = likeAll
	case len(t) == 2 && t[0].kind == 'l' && t[1].kind == '%':
		m.kind, m.lit = likePrefix, t[0].lit
	case len(t) == 2 && t[0].kind == '%' && t[1].kind == 'l':
		m.kind, m.lit = likeSuffix, t[1].lit
	case len(t) == 3 && t[0].kind == '%' && t[1].kind == 'l' && t[2].kind == '%':
		m.kind, m.lit = likeContains, t[1].lit
	}
	return m, nil
}

func (m *likeMatcher) match(s string) bool {
	switch m.kind {
	case likeExact:
		return s == m.lit
	case likePrefix:
		return strings.HasPrefix(s, m.lit)
	case likeSuffix:
		return strings.HasSuffix(s, m.lit)
	case likeContains:
		return strings.Contains(s, m.lit)
	case likeAll:
		return true
	}
	return m.matchGeneral(s)
}

// matchGeneral is wildcard matching with backtracking to the last '%'.
// After a '%' the next literal is searched for with strings.Index.
func (m *likeMatcher) matchGeneral(s string) bool {
	toks := m.toks
	ti, si := 0, 0
	starT, starS := -1, 0
	for {
		if ti < len(toks) {
			t := &toks[ti]
			switch t.kind {
			case '%':
				if ti+1 < len(toks) && toks[ti+1].kind == 'l' {
					j := strings.Index(s[si:], toks[ti+1].lit)
					if j < 0 {
						return false
					}
					si += j
				}
				starT, starS = ti, si
				ti++
				continue
			case '_':
				if si < len(s) {
					_, size := utf8.DecodeRuneInString(s[si:])
					si += size
					ti++
					continue
				}
			default:
				if strings.HasPrefix(s[si:], t.lit) {
					si += len(t.lit)
					ti++
					continue
				}
			}
		} else if si == len(s) {
			return true
		}
		if starT < 0 || starS >= len(s) {
			return false
		}
		_, size := utf8.DecodeRuneInString(s[starS:])
		starS += size
		if starT+1 < len(toks) && toks[starT+1].kind == 'l' {
			j := strings.Index(s[starS:], toks[starT+1].lit)
			if j < 0 {
				return false
			}
			starS += j
		}
		si, ti = starS, starT+1
	}
}

func (k *likeKernel) matcher(pattern, escape string) (*likeMatcher, error) {
	if m := k.cached.Load(); m != nil && m.pattern == pattern && m.escape == escape {
		return m, nil
	}
	m, err := compileLike(pattern, escape)
	if err != nil {
		return nil, err
	}
	k.cached.Store(m)
	return m, nil
}

func (k *likeKernel) eval(ctx *Context, args []Vec, n int) (Vec, error) {
	mem := ctx.mem()
	val := andValidity(mem, args, n)
	buf, out := newBoolBuf(mem, n)
	s, p := newStrArg(args[0]), newStrArg(args[1])
	var e strArg
	hasEsc := len(args) == 3
	if hasEsc {
		e = newStrArg(args[2])
	}
	var m *likeMatcher
	for i := range n {
		if !val.valid(i) {
			continue
		}
		esc := ""
		if hasEsc {
			esc = e.at(i)
		}
		if m == nil || !(p.c && (!hasEsc || e.c)) {
			var err error
			if m, err = k.matcher(p.at(i), esc); err != nil {
				val.release()
				buf.Release()
				return Vec{}, err
			}
		}
		if m.match(s.at(i)) != k.negate {
			out[i>>3] |= 1 << uint(i&7)
		}
	}
	return finish(types.BooleanType, n, val, buf), nil
}
