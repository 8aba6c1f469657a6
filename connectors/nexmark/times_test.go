package nexmark

import (
	"math/rand/v2"
	"testing"
)

// TestTimes: the kinds and event times a batch steps through (times) are
// Kind and Timestamp of each event, and Timestamp's one division gives
// what dividing twice gives (r/rate*1000 + r%rate*1000/rate), for rates
// whose halves of a rate period hold a few events (crossed often) or
// many, proportions of a few kinds, and steps below and above a period.
func TestTimes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []Config{
		DefaultConfig,
		{FirstEventRate: 1, NextEventRate: 3, PersonProportion: 1, AuctionProportion: 3, BidProportion: 46},
		{FirstEventRate: 7, NextEventRate: 2, PersonProportion: 2, AuctionProportion: 1, BidProportion: 1},
		{FirstEventRate: 10_000_000, NextEventRate: 1_000, PersonProportion: 1, AuctionProportion: 3, BidProportion: 46},
	} {
		g := NewGenerator(c)
		for range 200 {
			first := r.Uint64N(1 << 40)
			step := 1 + r.Uint64N(8)
			if r.IntN(4) == 0 {
				step = 1 + r.Uint64N(3*g.period)
			}
			kinds := make([]int32, 1+r.IntN(500))
			ts := make([]int64, len(kinds))
			g.times(first, step, kinds, ts)
			for k := range kinds {
				n := first + uint64(k)*step
				if kinds[k] != g.Kind(n) || ts[k] != g.Timestamp(n) {
					t.Fatalf("%+v: event %d (first %d, step %d): kind %d at %d, want %d at %d", c, n, first, step, kinds[k], ts[k], g.Kind(n), g.Timestamp(n))
				}
				if want := twoDivisions(g, n); ts[k] != want {
					t.Fatalf("%+v: event %d at %d, dividing twice gives %d", c, n, ts[k], want)
				}
			}
		}
	}
}

// twoDivisions is the event time as the generator first computed it.
func twoDivisions(g *Generator, n uint64) int64 {
	ms := n / g.period * ratePeriodMS
	r := n % g.period
	rate := uint64(g.c.FirstEventRate)
	if r >= g.half {
		ms += ratePeriodMS / 2
		r -= g.half
		rate = uint64(g.c.NextEventRate)
	}
	return BaseTime + int64(ms+r/rate*1000+r%rate*1000/rate)
}
