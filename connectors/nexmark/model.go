package nexmark

import (
	"math"
	"math/bits"
	"strconv"
	"sync"
)

// The kinds of events, the values of event_type.
const (
	PersonEvent  int32 = 0
	AuctionEvent int32 = 1
	BidEvent     int32 = 2
)

// BaseTime is the event time of event 0, 2024-01-01 00:00:00 UTC, in
// milliseconds since 1970-01-01 00:00:00 UTC. Flink's generator starts at
// the wall clock; a fixed start makes every run produce the same events.
const BaseTime int64 = 1704067200000

// Constants of the Nexmark model.
const (
	// FirstPersonID, FirstAuctionID and FirstCategoryID are the first ids
	// (ids start high so that small runs still find matches).
	FirstPersonID   = 1000
	FirstAuctionID  = 1000
	FirstCategoryID = 10
	// numCategories is the number of auction categories.
	numCategories = 5
	// idLead is how many ids past the last person or auction created a
	// random reference may name (events seem to arrive out of order).
	idLead = 10
	// numActivePeople is how many of the latest people random sellers and
	// bidders are drawn from.
	numActivePeople = 1000
	// numInFlightAuctions is how many of the latest auctions a random bid
	// goes to; an auction lasts about as long as it takes to create as
	// many new ones.
	numInFlightAuctions = 100
	// hotGroup: a hot auction, seller or bidder is the first (bidder: the
	// second) of the latest group of hotGroup auctions or people.
	hotGroup = 100
	// Hot ratios (Flink's bid.hot-ratio.auctions, bid.hot-ratio.bidders,
	// auction.hot-ratio.sellers defaults): a bid goes to a hot auction with
	// probability 1-1/2, is by a hot bidder with 1-1/4, an auction is by a
	// hot seller with 1-1/4.
	hotAuctionRatio = 2
	hotBidderRatio  = 4
	hotSellerRatio  = 4
	// Average sizes of the events in bytes (Flink's person.avg-size,
	// auction.avg-size, bid.avg-size): the extra column pads each event
	// to about this.
	avgPersonSize  = 200
	avgAuctionSize = 500
	avgBidSize     = 100
	// numChannels is the number of channels other than the hot ones; half
	// the bids come from one of the hot channels.
	numChannels = 10000
	// ratePeriodMS is the period of the rate shape: first-event.rate for
	// its first half, next-event.rate for the second (Beam's SQUARE shape
	// with Flink's default rate.period of 600 s).
	ratePeriodMS = 600_000
)

var (
	usStates   = byteSlices("AZ", "CA", "ID", "OR", "WA", "WY")
	usCities   = byteSlices("Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne")
	firstNames = []string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames  = []string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	hotChannel = []string{"Google", "Facebook", "Baidu", "Apple"}
)

func byteSlices(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, v := range s {
		out[i] = []byte(v)
	}
	return out
}

// Person is a new person event. Its byte slices stay valid until the
// Event holding it is filled again.
type Person struct {
	ID                                          int64
	Name, EmailAddress, CreditCard, City, State []byte
	Extra                                       []byte
}

// Auction is a new auction event: an item put up for auction by a seller
// until Expires.
type Auction struct {
	ID                    int64
	ItemName, Description []byte
	InitialBid, Reserve   int64
	// Expires is in milliseconds since the epoch, as Event.DateTime.
	Expires          int64
	Seller, Category int64
	Extra            []byte
}

// Bid is a bid on an auction.
type Bid struct {
	Auction, Bidder, Price int64
	Channel, URL           []byte
	Extra                  []byte
}

// Event is one generated event: Type says which of Person, Auction and Bid
// holds it (the others keep stale values).
type Event struct {
	Type int32
	// DateTime is the event time in milliseconds since 1970-01-01 UTC.
	DateTime int64
	Person   Person
	Auction  Auction
	Bid      Bid
	// buf holds the bytes of the generated strings, reused by each fill.
	buf []byte
}

// Generator produces the Nexmark events of a configuration. Event n is a
// function of the configuration and n alone, so any subset of events can
// be produced in any order, by any number of generators.
type Generator struct {
	c Config
	// total is the sum of the proportions: event n is a person when n mod
	// total < person, an auction when < person+auction, else a bid.
	total uint64
	// half is the number of events in the first half of a rate period,
	// period the number in a whole one.
	half, period uint64
	// ahead is the number of events after which numInFlightAuctions more
	// auctions have been created.
	ahead uint64
}

// NewGenerator returns a generator of c's events.
func NewGenerator(c Config) *Generator {
	g := &Generator{c: c}
	g.total = uint64(c.PersonProportion + c.AuctionProportion + c.BidProportion)
	g.half = uint64(c.FirstEventRate) * ratePeriodMS / 2000
	g.period = g.half + uint64(c.NextEventRate)*ratePeriodMS/2000
	g.ahead = numInFlightAuctions * g.total / uint64(c.AuctionProportion)
	return g
}

// Kind returns the kind of event n.
func (g *Generator) Kind(n uint64) int32 {
	switch off := n % g.total; {
	case off < uint64(g.c.PersonProportion):
		return PersonEvent
	case off < uint64(g.c.PersonProportion+g.c.AuctionProportion):
		return AuctionEvent
	}
	return BidEvent
}

// Timestamp returns the event time of event n in milliseconds since the
// epoch: events are first-event.rate per second for the first half of
// each rate period, next-event.rate per second for the second half.
func (g *Generator) Timestamp(n uint64) int64 { return g.timeAt(n/g.period, n%g.period) }

// timeAt returns the event time of the event r (< period) of rate period
// q.
func (g *Generator) timeAt(q, r uint64) int64 {
	ms := q * ratePeriodMS
	rate := uint64(g.c.FirstEventRate)
	if r >= g.half {
		ms += ratePeriodMS / 2
		r -= g.half
		rate = uint64(g.c.NextEventRate)
	}
	// r/rate*1000 + r%rate*1000/rate in one division: floor(1000r / rate),
	// which is below 1000 * ratePeriodMS / 2000 (r < rate*ratePeriodMS/2000).
	hi, lo := bits.Mul64(r, 1000)
	t, _ := bits.Div64(hi, lo, rate)
	return BaseTime + int64(ms+t)
}

// times sets kinds[k] and ts[k] to the kind and the event time of event
// first + k*step, as Kind and Timestamp, stepping the remainders they
// divide for from one event to the next rather than dividing per event.
func (g *Generator) times(first, step uint64, kinds []int32, ts []int64) {
	off, dOff := first%g.total, step%g.total
	q, r := first/g.period, first%g.period
	dq, dr := step/g.period, step%g.period
	person, auction := uint64(g.c.PersonProportion), uint64(g.c.PersonProportion+g.c.AuctionProportion)
	for k := range kinds {
		switch {
		case off < person:
			kinds[k] = PersonEvent
		case off < auction:
			kinds[k] = AuctionEvent
		default:
			kinds[k] = BidEvent
		}
		ts[k] = g.timeAt(q, r)
		if off += dOff; off >= g.total {
			off -= g.total
		}
		q, r = q+dq, r+dr
		if r >= g.period {
			q, r = q+1, r-g.period
		}
	}
}

// latest holds the base-0 ids of the latest person and the latest
// auction created at an event (its own if it creates one); auction is -1
// before the first.
type latest struct{ person, auction int64 }

// latestAt returns the latest ids at event n, with one division.
func (g *Generator) latestAt(n uint64) latest {
	p, a := uint64(g.c.PersonProportion), uint64(g.c.AuctionProportion)
	epoch, off := n/g.total, n%g.total
	l := latest{person: int64(epoch*p + min(off, p-1))}
	switch {
	case off < p:
		l.auction = int64(epoch*a) - 1
	case off < p+a:
		l.auction = int64(epoch*a + off - p)
	default:
		l.auction = int64(epoch*a + a - 1)
	}
	return l
}

// randomPerson draws a base-0 person id among the latest numActivePeople
// people (last is the latest) and idLead ids beyond the last.
func randomPerson(last int64, r *rng) int64 {
	people := last + 1
	active := min(people, numActivePeople)
	return people - active + int64(r.intn(uint64(active+idLead)))
}

// randomAuction draws a base-0 auction id among the latest
// numInFlightAuctions auctions (last is the latest) and idLead ids beyond
// the last.
func randomAuction(last int64, r *rng) int64 {
	first := max(last-numInFlightAuctions, 0)
	return first + int64(r.intn(uint64(last-first+1+idLead)))
}

// Event fills e with event n.
func (g *Generator) Event(n uint64, e *Event) { g.fill(n, g.Kind(n), g.Timestamp(n), e, allKinds) }

// allKinds asks fill for the fields of every kind.
const allKinds = 1<<PersonEvent | 1<<AuctionEvent | 1<<BidEvent

// fill sets e to event n, of kind kind and event time ts (Kind and
// Timestamp of n); the fields of a kind not in kinds (a bit per kind) are
// not generated, only its type and time.
func (g *Generator) fill(n uint64, kind int32, ts int64, e *Event, kinds uint8) {
	e.Type = kind
	e.DateTime = ts
	if kinds&(1<<e.Type) == 0 {
		return
	}
	if cap(e.buf) < 256 {
		e.buf = make([]byte, 0, 256)
	}
	r := rng{s: mix(n*golden ^ 0x6a09e667f3bcc909)}
	last := g.latestAt(n)
	switch e.Type {
	case PersonEvent:
		g.person(last, e, &r)
	case AuctionEvent:
		g.auction(n, last, e, &r)
	default:
		g.bid(last, e, &r)
	}
}

func (g *Generator) person(last latest, e *Event, r *rng) {
	p := &e.Person
	p.ID = last.person + FirstPersonID
	b := e.buf[:0]
	s := len(b)
	b = append(b, firstNames[r.intn(uint64(len(firstNames)))]...)
	b = append(b, ' ')
	b = append(b, lastNames[r.intn(uint64(len(lastNames)))]...)
	p.Name, s = b[s:], len(b)
	b = appendWord(b, r, 7, ' ')
	b = append(b, '@')
	b = appendWord(b, r, 5, ' ')
	b = append(b, ".com"...)
	p.EmailAddress, s = b[s:], len(b)
	for i := 0; i < 4; i++ {
		if i > 0 {
			b = append(b, ' ')
		}
		d := r.intn(10000)
		b = append(b, byte('0'+d/1000), byte('0'+d/100%10), byte('0'+d/10%10), byte('0'+d%10))
	}
	p.CreditCard = b[s:]
	p.City = usCities[r.intn(uint64(len(usCities)))]
	p.State = usStates[r.intn(uint64(len(usStates)))]
	e.buf = b
	size := 8 + len(p.Name) + len(p.EmailAddress) + len(p.CreditCard) + len(p.City) + len(p.State)
	p.Extra = extra(r, size, avgPersonSize)
}

func (g *Generator) auction(n uint64, last latest, e *Event, r *rng) {
	a := &e.Auction
	a.ID = last.auction + FirstAuctionID
	if r.intn(hotSellerRatio) > 0 {
		a.Seller = last.person / hotGroup * hotGroup
	} else {
		a.Seller = randomPerson(last.person, r)
	}
	a.Seller += FirstPersonID
	a.Category = FirstCategoryID + int64(r.intn(numCategories))
	a.InitialBid = price(r)
	// An auction ends within twice the time numInFlightAuctions more
	// auctions take to be created, so about that many are open at once.
	horizon := g.Timestamp(n+g.ahead) - e.DateTime
	a.Expires = e.DateTime + 1 + int64(r.intn(uint64(max(2*horizon, 1))))
	b := e.buf[:0]
	b = appendWord(b, r, 20, ' ')
	s := len(b)
	a.ItemName = b[:s]
	b = appendWord(b, r, 100, ' ')
	a.Description = b[s:]
	e.buf = b
	a.Reserve = a.InitialBid + price(r)
	size := 8 + len(a.ItemName) + len(a.Description) + 8 + 8 + 8 + 8 + 8
	a.Extra = extra(r, size, avgAuctionSize)
}

func (g *Generator) bid(last latest, e *Event, r *rng) {
	b := &e.Bid
	if r.intn(hotAuctionRatio) > 0 {
		b.Auction = last.auction / hotGroup * hotGroup
	} else {
		b.Auction = randomAuction(last.auction, r)
	}
	b.Auction += FirstAuctionID
	if r.intn(hotBidderRatio) > 0 {
		// The second of the group, so that hot bidders are not hot sellers.
		b.Bidder = last.person/hotGroup*hotGroup + 1
	} else {
		b.Bidder = randomPerson(last.person, r)
	}
	b.Bidder += FirstPersonID
	b.Price = price(r)
	ch := loadChannels()
	if r.intn(2) > 0 {
		c := &ch.hot[r.intn(uint64(len(ch.hot)))]
		b.Channel, b.URL = c.name, c.url
	} else {
		c := &ch.other[r.intn(numChannels)]
		b.Channel, b.URL = c.name, c.url
	}
	b.Extra = extra(r, 8+8+8+8, avgBidSize)
}

// price draws a price in cents, log-uniform between $1 and $1,000,000.
func price(r *rng) int64 {
	return int64(math.Round(math.Exp(r.float()*(6*math.Ln10)) * 100))
}

// appendWord appends a string of 3 to max-1 characters, each a lowercase
// letter or, one time in 13, the character special; leading and trailing
// spaces are trimmed.
func appendWord(b []byte, r *rng, max uint64, special byte) []byte {
	s := len(b)
	for n := 3 + r.intn(max-3); n > 0; n-- {
		x := r.next()
		if (x>>32)*13>>32 == 0 {
			b = append(b, special)
		} else {
			b = append(b, byte('a'+uint32(x)%26))
		}
	}
	if special != ' ' {
		return b
	}
	w := b[s:]
	for len(w) > 0 && w[len(w)-1] == ' ' {
		w = w[:len(w)-1]
	}
	k := 0
	for k < len(w) && w[k] == ' ' {
		k++
	}
	return append(b[:s], w[k:]...)
}

// extra returns padding that brings an event of size bytes to avg bytes on
// average: avg-size ±20%, nothing when size exceeds avg. Its letters are a
// slice of a fixed random text.
func extra(r *rng, size, avg int) []byte {
	if size > avg {
		return nil
	}
	want := avg - size
	delta := int(math.Round(float64(want) * 0.2))
	n := want - delta
	if delta > 0 {
		n += int(r.intn(uint64(2 * delta)))
	}
	off := r.intn(uint64(len(padding) - n))
	return padding[off : int(off)+n : int(off)+n]
}

// padding is the text the extra columns are cut from: lowercase letters
// from a fixed seed.
var padding = func() []byte {
	r := rng{s: 0x243f6a8885a308d3}
	b := make([]byte, 1<<16)
	for i := range b {
		b[i] = byte('a' + r.intn(26))
	}
	return b
}()

// channel is a bid channel and the URL its bids come from.
type channel struct{ name, url []byte }

type channelTable struct {
	hot   []channel
	other [numChannels]channel
}

var (
	channelsOnce sync.Once
	channels     *channelTable
)

// loadChannels builds the channels once: the hot ones and "channel-<i>"
// for i below numChannels, each with a URL of three random path parts; nine
// in ten of the others carry a channel_id parameter (i's 32 bits reversed,
// as a magnitude).
func loadChannels() *channelTable {
	channelsOnce.Do(func() {
		t := &channelTable{}
		url := func(seed uint64) []byte {
			r := rng{s: mix(seed*golden ^ 0xbb67ae8584caa73b)}
			b := []byte("https://www.nexmark.com/")
			for i := 0; i < 3; i++ {
				b = appendWord(b, &r, 5, '_')
				b = append(b, '/')
			}
			b = append(b, "item.htm?query=1"...)
			if seed < numChannels && r.intn(10) > 0 {
				id := int64(int32(bits.Reverse32(uint32(seed))))
				b = append(b, "&channel_id="...)
				b = strconv.AppendInt(b, max(id, -id), 10)
			}
			return b
		}
		for i := range t.other {
			t.other[i] = channel{name: []byte("channel-" + strconv.Itoa(i)), url: url(uint64(i))}
		}
		for i, name := range hotChannel {
			t.hot = append(t.hot, channel{name: []byte(name), url: url(uint64(numChannels + i))})
		}
		channels = t
	})
	return channels
}

// golden is 2^64/φ, splitmix64's increment.
const golden = 0x9e3779b97f4a7c15

// mix is splitmix64's finaliser: a bijective scramble of z.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// rng is a splitmix64 stream: the draws of one event, seeded from its
// number.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += golden
	return mix(r.s)
}

// intn returns a number in [0, n) (n > 0).
func (r *rng) intn(n uint64) uint64 {
	hi, _ := bits.Mul64(r.next(), n)
	return hi
}

// float returns a number in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) * 0x1p-53 }
