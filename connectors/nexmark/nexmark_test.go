package nexmark_test

import (
	"context"
	"io"
	"math"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/internal/registry"
	"github.com/streamsql/streamsql/connectors/nexmark"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// spec is a table of every nexmark column with options opts (events.num
// among them), read by subtask of parallelism in batches of batch.
func spec(opts map[string]string, parallelism, subtask, batch int) exec.TableSpec {
	return exec.TableSpec{
		Table:       "nx",
		Schema:      nexmark.Schema(),
		Options:     opts,
		Parallelism: parallelism,
		Subtask:     subtask,
		BatchSize:   batch,
		Mem:         memory.DefaultAllocator,
	}
}

// eventRow renders event n as the row of every column, in Schema order
// (event_type|person|auction|bid, a row as (f1, f2, ...)): the reference
// for what the source writes.
func eventRow(g *nexmark.Generator, n uint64) string {
	var e nexmark.Event
	g.Event(n, &e)
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	ts := func(ms int64) string { return i(ms * 1000) }
	row := func(fs ...string) string { return "(" + strings.Join(fs, ", ") + ")" }
	cols := []string{i(int64(e.Type)), "NULL", "NULL", "NULL"}
	switch e.Type {
	case nexmark.PersonEvent:
		p := e.Person
		cols[1] = row(i(p.ID), string(p.Name), string(p.EmailAddress), string(p.CreditCard),
			string(p.City), string(p.State), ts(e.DateTime), string(p.Extra))
	case nexmark.AuctionEvent:
		a := e.Auction
		cols[2] = row(i(a.ID), string(a.ItemName), string(a.Description), i(a.InitialBid), i(a.Reserve),
			ts(e.DateTime), ts(a.Expires), i(a.Seller), i(a.Category), string(a.Extra))
	case nexmark.BidEvent:
		b := e.Bid
		cols[3] = row(i(b.Auction), i(b.Bidder), i(b.Price), string(b.Channel), string(b.URL),
			ts(e.DateTime), string(b.Extra))
	}
	return strings.Join(cols, "|")
}

// recordRows renders the rows of rec as eventRow does.
func recordRows(rec arrow.RecordBatch) []string {
	out := make([]string, rec.NumRows())
	for r := range out {
		cols := make([]string, rec.NumCols())
		for c := range cols {
			cols[c] = valueText(rec.Column(c), r)
		}
		out[r] = strings.Join(cols, "|")
	}
	return out
}

func valueText(a arrow.Array, r int) string {
	if a.IsNull(r) {
		return "NULL"
	}
	switch a := a.(type) {
	case *array.Int32:
		return strconv.FormatInt(int64(a.Value(r)), 10)
	case *array.Int64:
		return strconv.FormatInt(a.Value(r), 10)
	case *array.Timestamp:
		return strconv.FormatInt(int64(a.Value(r)), 10)
	case *array.String:
		return a.Value(r)
	case *array.Struct:
		fs := make([]string, a.NumField())
		for k := range fs {
			fs[k] = valueText(a.Field(k), r)
		}
		return "(" + strings.Join(fs, ", ") + ")"
	}
	return "?"
}

// read reads src to its end, or for batches batches (>= 0), and returns
// its rows.
func read(t testing.TB, src exec.Source, batches int) []string {
	t.Helper()
	var rows []string
	for k := 0; k != batches; k++ {
		b, err := src.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err == exec.ErrNoData {
			k--
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, recordRows(b.Rec)...)
		b.Rec.Release()
	}
	return rows
}

func open(t testing.TB, s exec.TableSpec) exec.Source {
	t.Helper()
	src, err := registry.Source(nexmark.Name, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	return src
}

// TestEventMix: event n's kind is n mod 50 in the proportions 1:3:46, and
// other proportions work the same way.
func TestEventMix(t *testing.T) {
	g := nexmark.NewGenerator(nexmark.DefaultConfig)
	var count [3]int
	for n := uint64(0); n < 50_000; n++ {
		k := g.Kind(n)
		want := nexmark.BidEvent
		switch off := n % 50; {
		case off == 0:
			want = nexmark.PersonEvent
		case off <= 3:
			want = nexmark.AuctionEvent
		}
		if k != want {
			t.Fatalf("event %d is of kind %d, want %d", n, k, want)
		}
		var e nexmark.Event
		g.Event(n, &e)
		if e.Type != k {
			t.Fatalf("event %d: Event says kind %d, Kind %d", n, e.Type, k)
		}
		count[k]++
	}
	if count != [3]int{1000, 3000, 46000} {
		t.Errorf("kinds %v, want [1000 3000 46000]", count)
	}
	c := nexmark.DefaultConfig
	c.PersonProportion, c.AuctionProportion, c.BidProportion = 2, 1, 0
	g = nexmark.NewGenerator(c)
	if got := []int32{g.Kind(0), g.Kind(1), g.Kind(2), g.Kind(3)}; !slices.Equal(got, []int32{0, 0, 1, 0}) {
		t.Errorf("2:1:0 gives kinds %v, want [0 0 1 0]", got)
	}
}

// TestEventTime: events are first-event.rate per second of event time,
// alternating with next-event.rate every 300 s.
func TestEventTime(t *testing.T) {
	g := nexmark.NewGenerator(nexmark.DefaultConfig)
	for _, n := range []uint64{0, 1, 9, 10, 12345, 1 << 40} {
		if got, want := g.Timestamp(n), nexmark.BaseTime+int64(n/10); got != want {
			t.Errorf("event %d at %d, want %d", n, got, want)
		}
	}
	c := nexmark.DefaultConfig
	c.FirstEventRate, c.NextEventRate = 1000, 3000
	g = nexmark.NewGenerator(c)
	for _, tc := range []struct {
		n  uint64
		ms int64
	}{
		{0, 0}, {999, 999}, {300_000, 300_000}, {300_003, 300_001}, {1_199_999, 599_999},
		{1_200_000, 600_000}, {1_200_000 + 300_000, 900_000}, {1_200_000 + 300_006, 900_002},
	} {
		if got := g.Timestamp(tc.n) - nexmark.BaseTime; got != tc.ms {
			t.Errorf("1000/3000 per s: event %d at +%d ms, want +%d", tc.n, got, tc.ms)
		}
	}
}

// TestModel checks what the Nexmark model promises over 200,000 events: id
// ranges, the hot auctions, bidders and sellers, prices, the shape of the
// strings, channels and URLs, and the extra padding's sizes.
func TestModel(t *testing.T) {
	g := nexmark.NewGenerator(nexmark.DefaultConfig)
	var e nexmark.Event
	var persons, auctions, bids, hotAuction, hotBidder, hotSeller, hotChannel, channelID int64
	var extra [3]int64
	cities := []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	states := []string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	card := regexp.MustCompile(`^\d{4} \d{4} \d{4} \d{4}$`)
	url := regexp.MustCompile(`^https://www\.nexmark\.com/[a-z_]{3,4}/[a-z_]{3,4}/[a-z_]{3,4}/item\.htm\?query=1(&channel_id=\d+)?$`)
	chID := regexp.MustCompile(`(&|^)channel_id=([^&]*)`)
	const n = 200_000
	for i := uint64(0); i < n; i++ {
		g.Event(i, &e)
		switch e.Type {
		case nexmark.PersonEvent:
			p := e.Person
			if p.ID != nexmark.FirstPersonID+persons {
				t.Fatalf("event %d: person %d, want %d", i, p.ID, nexmark.FirstPersonID+persons)
			}
			persons++
			if !card.Match(p.CreditCard) || !slices.Contains(cities, string(p.City)) || !slices.Contains(states, string(p.State)) ||
				!strings.Contains(string(p.Name), " ") || !strings.HasSuffix(string(p.EmailAddress), ".com") {
				t.Fatalf("event %d: person %q %q %q %q %q", i, p.Name, p.EmailAddress, p.CreditCard, p.City, p.State)
			}
			extra[0] += int64(len(p.Extra) + 8 + len(p.Name) + len(p.EmailAddress) + len(p.CreditCard) + len(p.City) + len(p.State))
		case nexmark.AuctionEvent:
			a := e.Auction
			if a.ID != nexmark.FirstAuctionID+auctions {
				t.Fatalf("event %d: auction %d, want %d", i, a.ID, nexmark.FirstAuctionID+auctions)
			}
			auctions++
			// The seller is an existing person (or one of the next 10).
			if a.Seller < nexmark.FirstPersonID || a.Seller >= nexmark.FirstPersonID+persons+10 {
				t.Fatalf("event %d: seller %d with %d persons", i, a.Seller, persons)
			}
			if a.Seller == nexmark.FirstPersonID+(persons-1)/100*100 {
				hotSeller++
			}
			if a.Category < 10 || a.Category > 14 || a.InitialBid < 100 || a.Reserve <= a.InitialBid ||
				a.Expires <= e.DateTime || len(a.ItemName) > 19 || len(a.Description) > 99 {
				t.Fatalf("event %d: auction %+v", i, a)
			}
			extra[1] += int64(len(a.Extra) + 8 + len(a.ItemName) + len(a.Description) + 40)
		case nexmark.BidEvent:
			b := e.Bid
			bids++
			last := nexmark.FirstAuctionID + auctions - 1
			if b.Auction < nexmark.FirstAuctionID || b.Auction > last+10 {
				t.Fatalf("event %d: bid on auction %d, last is %d", i, b.Auction, last)
			}
			if b.Auction == nexmark.FirstAuctionID+(auctions-1)/100*100 {
				hotAuction++
			} else if b.Auction < last-100 {
				t.Fatalf("event %d: bid on auction %d, not hot and more than 100 before %d", i, b.Auction, last)
			}
			if b.Bidder < nexmark.FirstPersonID || b.Bidder >= nexmark.FirstPersonID+persons+10 {
				t.Fatalf("event %d: bidder %d with %d persons", i, b.Bidder, persons)
			}
			if b.Bidder == nexmark.FirstPersonID+(persons-1)/100*100+1 {
				hotBidder++
			}
			if b.Price < 100 || b.Price > 100_000_000 || !url.Match(b.URL) {
				t.Fatalf("event %d: bid %+v", i, b)
			}
			switch ch := string(b.Channel); ch {
			case "Google", "Facebook", "Baidu", "Apple":
				hotChannel++
				if chID.Match(b.URL) {
					t.Fatalf("event %d: hot channel %s with URL %s", i, ch, b.URL)
				}
			default:
				if !strings.HasPrefix(ch, "channel-") {
					t.Fatalf("event %d: channel %q", i, ch)
				}
				if chID.Match(b.URL) {
					channelID++
				}
			}
			extra[2] += int64(len(b.Extra) + 32)
		}
	}
	near := func(what string, got, want float64) {
		if math.Abs(got-want) > want*0.03 {
			t.Errorf("%s: %.3f, want about %.3f", what, got, want)
		}
	}
	near("hot auctions", float64(hotAuction)/float64(bids), 0.5)
	near("hot bidders", float64(hotBidder)/float64(bids), 0.75)
	near("hot sellers", float64(hotSeller)/float64(auctions), 0.75)
	near("hot channels", float64(hotChannel)/float64(bids), 0.5)
	near("other channels with channel_id", float64(channelID)/float64(bids-hotChannel), 0.9)
	near("person size", float64(extra[0])/float64(persons), 200)
	near("auction size", float64(extra[1])/float64(auctions), 500)
	near("bid size", float64(extra[2])/float64(bids), 100)
}

// TestPrices: prices are log-uniform between $1 and $1,000,000 (in cents):
// each decade holds about a sixth of the bids.
func TestPrices(t *testing.T) {
	g := nexmark.NewGenerator(nexmark.DefaultConfig)
	var e nexmark.Event
	var decades [6]int
	bids := 0
	for i := uint64(0); i < 300_000; i++ {
		if g.Event(i, &e); e.Type == nexmark.BidEvent {
			decades[int(math.Log10(float64(e.Bid.Price)))-2]++
			bids++
		}
	}
	for d, c := range decades {
		if share := float64(c) / float64(bids); share < 0.16 || share > 0.173 {
			t.Errorf("prices between $%g and $%g: %.3f of the bids, want about 1/6", math.Pow10(d), math.Pow10(d+1), share)
		}
	}
}

// TestSplitsAreTheGeneratorsEvents: subtask i of p emits events i, i+p,
// ... as the generator makes them, whatever the batch size, so the splits
// together are the single split's events.
func TestSplitsAreTheGeneratorsEvents(t *testing.T) {
	const events = 5000
	opts := map[string]string{"events.num": strconv.Itoa(events)}
	g := nexmark.NewGenerator(nexmark.DefaultConfig)
	all := map[string]int{}
	for _, p := range []int{1, 3, 7} {
		total := 0
		for st := 0; st < p; st++ {
			src := open(t, spec(opts, p, st, 97))
			rows := read(t, src, -1)
			src.Close()
			for k, r := range rows {
				n := uint64(st + k*p)
				if want := eventRow(g, n); r != want {
					t.Fatalf("parallelism %d, subtask %d, row %d:\n got %s\nwant %s (event %d)", p, st, k, r, want, n)
				}
				all[r]++
			}
			total += len(rows)
		}
		if total != events {
			t.Errorf("parallelism %d: %d rows, want %d", p, total, events)
		}
	}
	for r, c := range all {
		if c != 3 {
			t.Fatalf("row seen %d times over parallelisms 1, 3, 7: %s", c, r)
		}
	}
}

// TestProjection: a scan of some columns reads what the full scan has in
// them.
func TestProjection(t *testing.T) {
	opts := map[string]string{"events.num": "500"}
	full := read(t, open(t, spec(opts, 1, 0, 64)), -1)
	s := spec(opts, 1, 0, 64)
	s.Fields = []int{3, 0, 1}
	part := read(t, open(t, s), -1)
	if len(part) != len(full) {
		t.Fatalf("%d rows, want %d", len(part), len(full))
	}
	for i := range full {
		f := strings.Split(full[i], "|")
		if want := strings.Join([]string{f[3], f[0], f[1]}, "|"); part[i] != want {
			t.Fatalf("row %d: %s, want %s", i, part[i], want)
		}
	}
}

// TestRestoreContinues: a source restored from a snapshot emits the next
// event on; restored into another parallelism, the subtasks together emit
// every event not yet emitted exactly once.
func TestRestoreContinues(t *testing.T) {
	opts := map[string]string{"events.num": "3000"}
	g := nexmark.NewGenerator(nexmark.DefaultConfig)
	seen := map[string]bool{}
	var states [][]byte
	for st := 0; st < 2; st++ {
		src := open(t, spec(opts, 2, st, 100))
		rows := read(t, src, 3+st)
		state, err := src.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, state)
		// The rest of this subtask's events, read past the snapshot, are
		// what a restore must emit again.
		src.Close()
		for _, r := range rows {
			seen[r] = true
		}
		again, err := registry.Source(nexmark.Name, spec(opts, 2, st, 100))
		if err != nil {
			t.Fatal(err)
		}
		if err := again.Restore(state); err != nil {
			t.Fatal(err)
		}
		if err := again.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		next := read(t, again, 1)
		if want := eventRow(g, uint64(st+2*len(rows))); next[0] != want {
			t.Fatalf("subtask %d restored: first row %s, want event %d: %s", st, next[0], st+2*len(rows), want)
		}
		again.Close()
	}
	for st := 0; st < 3; st++ {
		src, err := registry.Source(nexmark.Name, spec(opts, 3, st, 100))
		if err != nil {
			t.Fatal(err)
		}
		if err := src.(exec.Rescalable).RestoreRescaled(states); err != nil {
			t.Fatal(err)
		}
		if err := src.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, r := range read(t, src, -1) {
			if seen[r] {
				t.Fatalf("rescaled subtask %d emitted a row again: %s", st, r)
			}
			seen[r] = true
		}
		src.Close()
	}
	if len(seen) != 3000 {
		t.Errorf("%d distinct rows, want 3000", len(seen))
	}
}

// TestPaced: with max-emit-speed false an event is emitted no earlier than
// its event time after the first: 200 events at 1000 per second take at
// least 0.2 s.
func TestPaced(t *testing.T) {
	opts := map[string]string{"events.num": "201", "first-event.rate": "1000", "max-emit-speed": "false"}
	start := time.Now()
	rows := read(t, open(t, spec(opts, 1, 0, 1000)), -1)
	if el := time.Since(start); el < 200*time.Millisecond {
		t.Errorf("201 events in %v, want at least 200 ms", el)
	}
	if len(rows) != 201 {
		t.Errorf("%d rows, want 201", len(rows))
	}
}

// BenchmarkSource generates 1M events per iteration: every column, and
// what q0 reads (event_type, the bid row without channel and url, the
// dateTime field of the person and auction rows). -benchmem shows the
// allocations, amortized over a batch.
func BenchmarkSource(b *testing.B) {
	q0 := nexmark.Schema()
	keep := func(t types.T, names ...string) types.T {
		var fs []types.Column
		for _, f := range t.Fields {
			if slices.Contains(names, f.Name) {
				fs = append(fs, f)
			}
		}
		t.Fields = fs
		return t
	}
	q0[1].Type = keep(q0[1].Type, "dateTime")
	q0[2].Type = keep(q0[2].Type, "dateTime")
	q0[3].Type = keep(q0[3].Type, "auction", "bidder", "price", "dateTime", "extra")
	for _, bc := range []struct {
		name   string
		schema types.Schema
	}{
		{"all", nexmark.Schema()},
		{"q0", q0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			const events = 1_000_000
			s := spec(map[string]string{"events.num": strconv.Itoa(events)}, 1, 0, exec.DefaultBatchSize)
			s.Schema = bc.schema
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				src, err := registry.Source(nexmark.Name, s)
				if err != nil {
					b.Fatal(err)
				}
				if err := src.Open(context.Background()); err != nil {
					b.Fatal(err)
				}
				for {
					batch, err := src.Next(context.Background())
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					batch.Rec.Release()
				}
				src.Close()
			}
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(b.N*events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N*events), "allocs/event")
		})
	}
}
