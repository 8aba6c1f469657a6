package functions

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"testing"
)

// TestRegexpMatcherAgreesWithRegexp: the prefiltered search finds what Go's
// regexp finds, group by group, for patterns with and without a literal,
// with ^ and $, look-behind assertions, case folding and multi-byte
// characters, over inputs built from the patterns' pieces.
func TestRegexpMatcherAgreesWithRegexp(t *testing.T) {
	patterns := []string{
		`(&|^)channel_id=([^&]*)`,
		`channel_id=(\d+)`,
		`^abc`,
		`abc$`,
		`x?abc(d*)`,
		`(a|bb)..abc`,
		`\babc`,
		`(?m)^abc`,
		`(?i)abc`,
		`é.abc(.)`,
		`[a-c]{2,3}abc`,
		`.*abc`,
		`((ab)c)`,
		`(^|x)(abc)(x|$)`,
		`ab+c`,
		`a`,
		`^$`,
	}
	pieces := []string{"abc", "channel_id=", "&", "x", "é", "\n", "AbC", "b", "12", "a", " "}
	rng := rand.New(rand.NewPCG(1, 2))
	inputs := []string{"", "abc", "channel_id=1", "&channel_id=2&x", "xabcx"}
	for range 3000 {
		var s []byte
		for range rng.IntN(9) {
			s = append(s, pieces[rng.IntN(len(pieces))]...)
		}
		inputs = append(inputs, string(s))
	}
	for _, p := range patterns {
		re := regexp.MustCompile(p)
		m := newRegexpMatcher(p, re)
		for _, s := range inputs {
			if got, want := m.MatchString(s), re.MatchString(s); got != want {
				t.Fatalf("%q on %q: match %v, regexp says %v", p, s, got, want)
			}
			want := re.FindStringSubmatch(s)
			for g := 0; g <= re.NumSubexp(); g++ {
				got, ok := m.submatch(s, g)
				w, wok := "", false
				if want != nil {
					x := re.FindStringSubmatchIndex(s)
					wok = x[2*g] >= 0
					w = want[g]
				}
				if got != w || ok != wok {
					t.Fatalf("%q on %q group %d: %q %v, regexp says %q %v", p, s, g, got, ok, w, wok)
				}
			}
			if got, want := string(m.appendReplaced(nil, s, "<>")), re.ReplaceAllLiteralString(s, "<>"); got != want {
				t.Fatalf("%q on %q: replaced %q, regexp says %q", p, s, got, want)
			}
		}
	}
}

// TestRegexpMatcherPrefilter: which patterns get a literal and a bounded
// start (the reason for the matcher), so that a change that loses them
// shows.
func TestRegexpMatcherPrefilter(t *testing.T) {
	for _, tc := range []struct {
		p, lit string
		pre    int
	}{
		{`(&|^)channel_id=([^&]*)`, "channel_id=", 1},
		{`x?abc(d*)`, "abc", 1},
		{`.*abc`, "abc", -1},
		{`\babc`, "abc", -1},
		{`[a-c]{2,3}`, "", -1},
	} {
		m := newRegexpMatcher(tc.p, regexp.MustCompile(tc.p))
		if got := fmt.Sprintf("%q %d", m.lit, m.pre); got != fmt.Sprintf("%q %d", tc.lit, tc.pre) {
			t.Errorf("%s: literal and reach %s, want %q %d", tc.p, got, tc.lit, tc.pre)
		}
	}
}

// BenchmarkRegexpExtract: Nexmark q21's REGEXP_EXTRACT on its URLs, with
// the matcher and with Go's regexp alone.
//
//	GOMAXPROCS=1 go test ./functions -run '^$' -bench RegexpExtract
func BenchmarkRegexpExtract(b *testing.B) {
	const p = `(&|^)channel_id=([^&]*)`
	urls := []string{
		"https://www.nexmark.com/abc/def/ghi/item.htm?query=1&channel_id=1073741824",
		"https://www.nexmark.com/xyz/uvw/rst/item.htm?query=1",
	}
	re := regexp.MustCompile(p)
	m := newRegexpMatcher(p, re)
	b.Run("matcher", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			m.submatch(urls[i%2], 2)
		}
	})
	b.Run("regexp", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			re.FindStringSubmatchIndex(urls[i%2])
		}
	})
}
