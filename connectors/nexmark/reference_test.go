package nexmark_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors/nexmark"
	"github.com/streamsql/streamsql/slt"
)

// sltPath is the suite whose expected results the reference computes; the
// engine runs it in tests/sqllogic.
const sltPath = "../../tests/sqllogic/testdata/nexmark.slt"

// The table of the suite: 10,000 events at 500 per second.
var refConfig = func() nexmark.Config {
	c := nexmark.DefaultConfig
	c.FirstEventRate, c.NextEventRate, c.EventsNum = 500, 500, 10000
	return c
}()

// refBid is a bid of the view bid, with its strings copied.
type refBid struct {
	auction, bidder, price int64
	channel, url, extra    string
	ts                     int64 // ms
}

// refEvents are the suite's events, regenerated with Generator.Event.
type refEvents struct {
	bids     []refBid
	persons  []nexmark.Event
	auctions []nexmark.Event
}

func loadRefEvents() refEvents {
	g := nexmark.NewGenerator(refConfig)
	var out refEvents
	var e nexmark.Event
	for n := uint64(0); n < uint64(refConfig.EventsNum); n++ {
		g.Event(n, &e)
		switch e.Type {
		case nexmark.BidEvent:
			b := e.Bid
			out.bids = append(out.bids, refBid{b.Auction, b.Bidder, b.Price, string(b.Channel), string(b.URL), string(b.Extra), e.DateTime})
		case nexmark.PersonEvent:
			c := e
			p := &c.Person
			for _, b := range []*[]byte{&p.Name, &p.EmailAddress, &p.CreditCard, &p.City, &p.State, &p.Extra} {
				*b = slices.Clone(*b)
			}
			out.persons = append(out.persons, c)
		case nexmark.AuctionEvent:
			c := e
			a := &c.Auction
			for _, b := range []*[]byte{&a.ItemName, &a.Description, &a.Extra} {
				*b = slices.Clone(*b)
			}
			out.auctions = append(out.auctions, c)
		}
	}
	return out
}

// tsText is a TIMESTAMP(3) as the suites print it: without a fraction of
// zeros (session.SLTValue, PostgreSQL's convention).
func tsText(ms int64) string {
	if ms%1000 == 0 {
		return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05")
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000")
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// refQueries compute each labelled query of the suite in plain Go, as rows
// of the engine's text (nullText for NULL).
var refQueries = map[string]func(ev refEvents) [][]string{
	"nexmark_q0": func(ev refEvents) (rows [][]string) {
		for _, b := range ev.bids {
			rows = append(rows, []string{itoa(b.auction), itoa(b.bidder), itoa(b.price), tsText(b.ts), b.extra})
		}
		return rows
	},
	"nexmark_q1": func(ev refEvents) (rows [][]string) {
		for _, b := range ev.bids {
			// 0.908 * price as DECIMAL with 3 digits: price * 908 thousandths.
			m := b.price * 908
			euros := fmt.Sprintf("%d.%03d", m/1000, m%1000)
			rows = append(rows, []string{itoa(b.auction), itoa(b.bidder), euros, tsText(b.ts), b.extra})
		}
		return rows
	},
	"nexmark_q2": func(ev refEvents) (rows [][]string) {
		for _, b := range ev.bids {
			if b.auction%123 == 0 {
				rows = append(rows, []string{itoa(b.auction), itoa(b.price)})
			}
		}
		return rows
	},
	"nexmark_q5": func(ev refEvents) (rows [][]string) {
		// HOP of 10 s every 2 s: a bid at t is in the 5 windows starting at
		// the multiples of 2 s in (t-10 s, t].
		const slide, size = 2000, 10000
		type key struct{ start, auction int64 }
		counts := map[key]int64{}
		for _, b := range ev.bids {
			last := floorDiv(b.ts, slide) * slide
			for s := last; s > b.ts-size; s -= slide {
				counts[key{s, b.auction}]++
			}
		}
		maxn := map[int64]int64{}
		for k, n := range counts {
			maxn[k.start] = max(maxn[k.start], n)
		}
		for k, n := range counts {
			if n >= maxn[k.start] {
				rows = append(rows, []string{itoa(k.auction), itoa(n)})
			}
		}
		return rows
	},
	"nexmark_q11": func(ev refEvents) (rows [][]string) {
		// Sessions per bidder: a bid within 10 s of the session's last one
		// joins it; the session ends 10 s after its last bid.
		const gap = 10000
		times := map[int64][]int64{}
		for _, b := range ev.bids {
			times[b.bidder] = append(times[b.bidder], b.ts)
		}
		for bidder, ts := range times {
			slices.Sort(ts)
			start, n := ts[0], int64(0)
			for i, t := range ts {
				if i > 0 && t >= ts[i-1]+gap {
					rows = append(rows, []string{itoa(bidder), itoa(n), tsText(start), tsText(ts[i-1] + gap)})
					start, n = t, 0
				}
				n++
			}
			rows = append(rows, []string{itoa(bidder), itoa(n), tsText(start), tsText(ts[len(ts)-1] + gap)})
		}
		return rows
	},
	"nexmark_q15": func(ev refEvents) (rows [][]string) {
		groups := map[string]*rankStats{}
		for _, b := range ev.bids {
			day := tsText(b.ts)[:10]
			if groups[day] == nil {
				groups[day] = newRankStats()
			}
			groups[day].add(b)
		}
		for day, g := range groups {
			rows = append(rows, append([]string{day}, g.values()...))
		}
		return rows
	},
	"nexmark_q16": func(ev refEvents) (rows [][]string) {
		type key struct{ channel, day string }
		groups := map[key]*rankStats{}
		minute := map[key]string{}
		for _, b := range ev.bids {
			k := key{b.channel, tsText(b.ts)[:10]}
			if groups[k] == nil {
				groups[k] = newRankStats()
			}
			groups[k].add(b)
			minute[k] = max(minute[k], tsText(b.ts)[11:16])
		}
		for k, g := range groups {
			rows = append(rows, append([]string{k.channel, k.day, minute[k]}, g.values()...))
		}
		return rows
	},
	"nexmark_q17": func(ev refEvents) (rows [][]string) {
		type key struct {
			auction int64
			day     string
		}
		type stats struct{ n, r1, r2, r3, lo, hi, sum int64 }
		groups := map[key]*stats{}
		for _, b := range ev.bids {
			k := key{b.auction, tsText(b.ts)[:10]}
			s := groups[k]
			if s == nil {
				s = &stats{lo: b.price, hi: b.price}
				groups[k] = s
			}
			s.n++
			switch rank(b.price) {
			case 1:
				s.r1++
			case 2:
				s.r2++
			case 3:
				s.r3++
			}
			s.lo, s.hi, s.sum = min(s.lo, b.price), max(s.hi, b.price), s.sum+b.price
		}
		for k, s := range groups {
			// AVG of BIGINT is BIGINT, truncated.
			rows = append(rows, []string{itoa(k.auction), k.day, itoa(s.n), itoa(s.r1), itoa(s.r2), itoa(s.r3),
				itoa(s.lo), itoa(s.hi), itoa(s.sum / s.n), itoa(s.sum)})
		}
		return rows
	},
	"nexmark_q21": func(ev refEvents) (rows [][]string) {
		hot := map[string]string{"apple": "0", "google": "1", "facebook": "2", "baidu": "3"}
		re := regexp.MustCompile(`(&|^)channel_id=([^&]*)`)
		for _, b := range ev.bids {
			id, ok := hot[strings.ToLower(b.channel)]
			if !ok {
				m := re.FindStringSubmatch(b.url)
				if m == nil {
					continue
				}
				id = m[2]
			}
			rows = append(rows, []string{itoa(b.auction), itoa(b.bidder), itoa(b.price), b.channel, id})
		}
		return rows
	},
	"nexmark_q22": func(ev refEvents) (rows [][]string) {
		for _, b := range ev.bids {
			parts := strings.Split(b.url, "/")
			dir := func(i int) string {
				if i < len(parts) {
					return parts[i]
				}
				return nullText
			}
			rows = append(rows, []string{itoa(b.auction), itoa(b.bidder), itoa(b.price), b.channel, dir(3), dir(4), dir(5)})
		}
		return rows
	},
	"nexmark_q3": func(ev refEvents) (rows [][]string) {
		people := personsByID(ev)
		for _, a := range ev.auctions {
			p, ok := people[a.Auction.Seller]
			if !ok || a.Auction.Category != 10 {
				continue
			}
			if st := string(p.Person.State); st == "OR" || st == "ID" || st == "CA" {
				rows = append(rows, []string{string(p.Person.Name), string(p.Person.City), st, itoa(a.Auction.ID)})
			}
		}
		return rows
	},
	"nexmark_q4": func(ev refEvents) (rows [][]string) {
		type stats struct{ sum, n int64 }
		cats := map[int64]*stats{}
		for _, w := range winningBids(ev) {
			s := cats[w.auction.Auction.Category]
			if s == nil {
				s = &stats{}
				cats[w.auction.Auction.Category] = s
			}
			s.sum += w.max
			s.n++
		}
		for c, s := range cats {
			rows = append(rows, []string{itoa(c), itoa(s.sum / s.n)})
		}
		return rows
	},
	"nexmark_q7": func(ev refEvents) (rows [][]string) {
		// The highest price of each 10 s tumbling window; a bid at that
		// price within [end - 10 s, end], both ends included, joins it.
		const size = 10000
		maxp := map[int64]int64{} // window start -> highest price
		for _, b := range ev.bids {
			s := floorDiv(b.ts, size) * size
			if p, ok := maxp[s]; !ok || b.price > p {
				maxp[s] = b.price
			}
		}
		for s, p := range maxp {
			for _, b := range ev.bids {
				if b.price == p && b.ts >= s && b.ts <= s+size {
					rows = append(rows, []string{itoa(b.auction), itoa(b.bidder), itoa(b.price), tsText(b.ts), b.extra})
				}
			}
		}
		return rows
	},
	"nexmark_q8": func(ev refEvents) (rows [][]string) {
		// People and sellers per 10 s tumbling window, joined on the id and
		// the window.
		const size = 10000
		type key struct{ id, start int64 }
		sellers := map[key]bool{}
		for _, a := range ev.auctions {
			sellers[key{a.Auction.Seller, floorDiv(a.DateTime, size) * size}] = true
		}
		people := map[key]map[string]bool{}
		for _, p := range ev.persons {
			k := key{p.Person.ID, floorDiv(p.DateTime, size) * size}
			if people[k] == nil {
				people[k] = map[string]bool{}
			}
			people[k][string(p.Person.Name)] = true
		}
		for k, names := range people {
			if !sellers[k] {
				continue
			}
			for name := range names {
				rows = append(rows, []string{itoa(k.id), name, tsText(k.start)})
			}
		}
		return rows
	},
	"nexmark_q9": func(ev refEvents) (rows [][]string) {
		for _, w := range winningBids(ev) {
			a, b := w.auction, w.bid
			rows = append(rows, append(auctionRow(a), itoa(b.auction), itoa(b.bidder), itoa(b.price), tsText(b.ts), b.extra))
		}
		return rows
	},
	"nexmark_q18": func(ev refEvents) (rows [][]string) {
		// The latest bid of each bidder on each auction (no two bids share a
		// time at 500 events per second).
		type key struct{ bidder, auction int64 }
		last := map[key]refBid{}
		for _, b := range ev.bids {
			k := key{b.bidder, b.auction}
			if l, ok := last[k]; !ok || b.ts > l.ts {
				last[k] = b
			}
		}
		for _, b := range last {
			rows = append(rows, []string{itoa(b.auction), itoa(b.bidder), itoa(b.price), b.channel, b.url, tsText(b.ts), b.extra})
		}
		return rows
	},
	"nexmark_q19": func(ev refEvents) (rows [][]string) {
		// The 10 highest bids of each auction, numbered from 1; the suite's
		// events have no two bids of one auction at the same price among
		// them (checked here, as ROW_NUMBER would then order them at will).
		byAuction := map[int64][]refBid{}
		for _, b := range ev.bids {
			byAuction[b.auction] = append(byAuction[b.auction], b)
		}
		for _, bs := range byAuction {
			slices.SortStableFunc(bs, func(x, y refBid) int { return int(y.price - x.price) })
			for i, b := range bs[:min(10, len(bs))] {
				if i+1 < len(bs) && bs[i+1].price == b.price {
					panic(fmt.Sprintf("q19: two bids of auction %d at price %d", b.auction, b.price))
				}
				rows = append(rows, []string{itoa(b.auction), itoa(b.bidder), itoa(b.price), b.channel, b.url, tsText(b.ts), b.extra, itoa(int64(i + 1))})
			}
		}
		return rows
	},
	"nexmark_q20": func(ev refEvents) (rows [][]string) {
		auctions := map[int64]nexmark.Event{}
		for _, a := range ev.auctions {
			auctions[a.Auction.ID] = a
		}
		for _, b := range ev.bids {
			a, ok := auctions[b.auction]
			if !ok || a.Auction.Category != 10 {
				continue
			}
			x := a.Auction
			rows = append(rows, []string{itoa(b.auction), itoa(b.bidder), itoa(b.price), b.channel, b.url, tsText(b.ts), b.extra,
				string(x.ItemName), string(x.Description), itoa(x.InitialBid), itoa(x.Reserve), tsText(a.DateTime), tsText(x.Expires),
				itoa(x.Seller), itoa(x.Category), string(x.Extra)})
		}
		return rows
	},
	"nexmark_q23": func(ev refEvents) (rows [][]string) {
		people := personsByID(ev)
		bySeller := map[int64][]nexmark.Event{}
		for _, a := range ev.auctions {
			bySeller[a.Auction.Seller] = append(bySeller[a.Auction.Seller], a)
		}
		for _, b := range ev.bids {
			p, ok := people[b.bidder]
			if !ok {
				continue
			}
			q := p.Person
			for _, a := range bySeller[b.bidder] {
				x := a.Auction
				rows = append(rows, []string{itoa(b.bidder), itoa(b.price), b.channel, b.url, b.extra,
					itoa(q.ID), string(q.Name), string(q.EmailAddress), string(q.CreditCard), string(q.City), string(q.State), string(q.Extra),
					string(x.ItemName), string(x.Description), itoa(x.InitialBid), itoa(x.Reserve), tsText(a.DateTime), tsText(x.Expires),
					itoa(x.Seller), itoa(x.Category), string(x.Extra)})
			}
		}
		return rows
	},
	"nexmark_people": func(ev refEvents) [][]string {
		p := ev.persons
		city, state := string(p[0].Person.City), string(p[0].Person.State)
		for _, e := range p {
			city, state = min(city, string(e.Person.City)), max(state, string(e.Person.State))
		}
		return [][]string{{itoa(int64(len(p))), itoa(p[0].Person.ID), itoa(p[len(p)-1].Person.ID),
			tsText(p[0].DateTime), tsText(p[len(p)-1].DateTime), city, state}}
	},
	"nexmark_auctions": func(ev refEvents) [][]string {
		a := ev.auctions
		lo, hi := a[0].Auction.Category, a[0].Auction.Category
		sellers := map[int64]bool{}
		for _, e := range a {
			lo, hi = min(lo, e.Auction.Category), max(hi, e.Auction.Category)
			sellers[e.Auction.Seller] = true
		}
		return [][]string{{itoa(int64(len(a))), itoa(a[0].Auction.ID), itoa(a[len(a)-1].Auction.ID), itoa(lo), itoa(hi), itoa(int64(len(sellers)))}}
	},
}

// personsByID are the suite's people by id.
func personsByID(ev refEvents) map[int64]nexmark.Event {
	m := map[int64]nexmark.Event{}
	for _, p := range ev.persons {
		m[p.Person.ID] = p
	}
	return m
}

// winningBid is an auction's highest bid within its lifetime (from its
// time to its expiry, both included), the earliest of equal prices.
type winningBid struct {
	auction nexmark.Event
	bid     refBid
	max     int64
}

// winningBids are q4's and q9's winning bids, one per auction with a bid.
func winningBids(ev refEvents) []winningBid {
	auctions := map[int64]nexmark.Event{}
	for _, a := range ev.auctions {
		auctions[a.Auction.ID] = a
	}
	win := map[int64]*winningBid{}
	for _, b := range ev.bids {
		a, ok := auctions[b.auction]
		if !ok || b.ts < a.DateTime || b.ts > a.Auction.Expires {
			continue
		}
		w := win[b.auction]
		if w == nil {
			win[b.auction] = &winningBid{a, b, b.price}
		} else if b.price > w.max || b.price == w.max && b.ts < w.bid.ts {
			w.bid, w.max = b, b.price
		}
	}
	var out []winningBid
	for _, w := range win {
		out = append(out, *w)
	}
	return out
}

// auctionRow is an auction's columns as the view auction has them.
func auctionRow(a nexmark.Event) []string {
	x := a.Auction
	return []string{itoa(x.ID), string(x.ItemName), string(x.Description), itoa(x.InitialBid), itoa(x.Reserve),
		tsText(a.DateTime), tsText(x.Expires), itoa(x.Seller), itoa(x.Category), string(x.Extra)}
}

// nullText stands for NULL in the reference's rows.
const nullText = "\x00NULL"

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// rank is the price range of q15-q17: 1 below $100, 2 below $10,000, 3
// above.
func rank(price int64) int {
	switch {
	case price < 10000:
		return 1
	case price < 1000000:
		return 2
	}
	return 3
}

// rankStats are q15's and q16's counts of bids, distinct bidders and
// distinct auctions, in all and per price range.
type rankStats struct {
	bids     [4]int64
	bidders  [4]map[int64]bool
	auctions [4]map[int64]bool
}

func newRankStats() *rankStats {
	s := &rankStats{}
	for i := range s.bidders {
		s.bidders[i], s.auctions[i] = map[int64]bool{}, map[int64]bool{}
	}
	return s
}

func (s *rankStats) add(b refBid) {
	for _, i := range []int{0, rank(b.price)} {
		s.bids[i]++
		s.bidders[i][b.bidder] = true
		s.auctions[i][b.auction] = true
	}
}

func (s *rankStats) values() []string {
	var out []string
	for i := range s.bids {
		out = append(out, itoa(s.bids[i]))
	}
	for i := range s.bidders {
		out = append(out, itoa(int64(len(s.bidders[i]))))
	}
	for i := range s.auctions {
		out = append(out, itoa(int64(len(s.auctions[i]))))
	}
	return out
}

// expected renders rows as the suite's expected block for a query of the
// declared types in rowsort mode: the values in SQLite's runner's format,
// rows sorted; a block of more than maxListed rows as "N values hashing
// to H", as slt compares it.
func expected(rows [][]string, types string) []string {
	const maxListed = 40
	formatted := make([][]string, len(rows))
	for i, r := range rows {
		formatted[i] = make([]string, len(r))
		for j, v := range r {
			val := slt.Text(v)
			if v == nullText {
				val = slt.Null
			}
			formatted[i][j] = slt.FormatValue(val, types[j])
		}
	}
	slices.SortStableFunc(formatted, slices.Compare[[]string])
	if len(formatted) > maxListed {
		var vals []string
		for _, r := range formatted {
			vals = append(vals, r...)
		}
		return []string{fmt.Sprintf("%d values hashing to %s", len(vals), slt.HashValues(vals))}
	}
	lines := make([]string, len(formatted))
	for i, r := range formatted {
		lines[i] = strings.Join(r, " ")
	}
	return lines
}

// TestReference: every labelled query of the suite expects what the Go
// reference computes from the same events; NEXMARK_REWRITE=1 writes the
// reference's results into the suite instead.
func TestReference(t *testing.T) {
	checkSuite(t, sltPath, refQueries)
}

// checkSuite compares the labelled query blocks of the suite at path with
// what queries compute (every label must have a query, and every query a
// block), or rewrites them under NEXMARK_REWRITE=1.
func checkSuite(t *testing.T, path string, queries map[string]func(refEvents) [][]string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := slt.Parse(strings.NewReader(string(data)), path)
	if err != nil {
		t.Fatal(err)
	}
	ev := loadRefEvents()
	lines := strings.Split(string(data), "\n")
	rewrite := os.Getenv("NEXMARK_REWRITE") == "1"
	seen := map[string]bool{}
	// Rewrites go from the last record up, so line numbers stay right.
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		if r.Kind != slt.KindQuery || r.Label == "" {
			continue
		}
		ref, ok := queries[r.Label]
		if !ok {
			t.Errorf("%s:%d: no reference for query %s", path, r.Line, r.Label)
			continue
		}
		seen[r.Label] = true
		if r.Sort != slt.RowSort {
			t.Errorf("%s:%d: query %s must be rowsort", path, r.Line, r.Label)
		}
		want := expected(ref(ev), r.Types)
		if slices.Equal(r.Expected, want) {
			continue
		}
		if !rewrite {
			t.Errorf("%s:%d: query %s expects\n%s\nthe reference computes\n%s", path, r.Line, r.Label,
				strings.Join(r.Expected, "\n"), strings.Join(want, "\n"))
			continue
		}
		dash := r.Line
		for lines[dash-1] != "----" {
			dash++
		}
		end := dash
		for end < len(lines) && strings.TrimSpace(lines[end]) != "" {
			end++
		}
		lines = slices.Concat(lines[:dash], want, lines[end:])
	}
	for label := range queries {
		if !seen[label] {
			t.Errorf("%s has no query labelled %s", path, label)
		}
	}
	if rewrite {
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
