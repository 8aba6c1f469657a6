package nexmark

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/connectors/internal/option"
	"github.com/streamsql/streamsql/types"
)

// Option keys (Flink nexmark's NexmarkSourceOptions).
const (
	OptFirstEventRate    = "first-event.rate"
	OptNextEventRate     = "next-event.rate"
	OptEventsNum         = "events.num"
	OptPersonProportion  = "person.proportion"
	OptAuctionProportion = "auction.proportion"
	OptBidProportion     = "bid.proportion"
	OptMaxEmitSpeed      = "max-emit-speed"
)

var optionKeys = []string{
	OptFirstEventRate, OptNextEventRate, OptEventsNum,
	OptPersonProportion, OptAuctionProportion, OptBidProportion, OptMaxEmitSpeed,
}

// Config is a nexmark table's options, parsed.
type Config struct {
	// FirstEventRate and NextEventRate are the events per second of event
	// time in the first and second half of each rate period.
	FirstEventRate, NextEventRate int64
	// EventsNum is the number of events of the whole table; 0 is unbounded.
	EventsNum int64
	// PersonProportion, AuctionProportion and BidProportion say how many of
	// every Person+Auction+Bid consecutive events are of each kind.
	PersonProportion, AuctionProportion, BidProportion int64
	// MaxEmitSpeed emits as fast as possible; false paces the events by
	// their event time (the rate above, in wall-clock time).
	MaxEmitSpeed bool
}

// DefaultConfig is the configuration of a table without options.
var DefaultConfig = Config{
	FirstEventRate: 10000, NextEventRate: 10000,
	PersonProportion: 1, AuctionProportion: 3, BidProportion: 46,
	MaxEmitSpeed: true,
}

// ParseOptions parses the WITH options of a nexmark table; a bad value is
// a *config.Error naming the option. Unknown keys are the registry's to
// refuse.
func ParseOptions(opts map[string]string) (Config, error) {
	c := DefaultConfig
	var err error
	// Flink's options are Java ints: at most 2^31-1.
	const maxInt = math.MaxInt32
	if c.FirstEventRate, err = option.Int(opts, OptFirstEventRate, c.FirstEventRate, 1, maxInt); err != nil {
		return c, err
	}
	if c.NextEventRate, err = option.Int(opts, OptNextEventRate, c.NextEventRate, 1, maxInt); err != nil {
		return c, err
	}
	if c.EventsNum, err = option.Int(opts, OptEventsNum, 0, 0, math.MaxInt64); err != nil {
		return c, err
	}
	// A person must come first (auctions and bids name people), and an
	// auction (bids name auctions); bids may be left out.
	if c.PersonProportion, err = option.Int(opts, OptPersonProportion, c.PersonProportion, 1, maxInt); err != nil {
		return c, err
	}
	if c.AuctionProportion, err = option.Int(opts, OptAuctionProportion, c.AuctionProportion, 1, maxInt); err != nil {
		return c, err
	}
	if c.BidProportion, err = option.Int(opts, OptBidProportion, c.BidProportion, 0, maxInt); err != nil {
		return c, err
	}
	if c.PersonProportion+c.AuctionProportion+c.BidProportion > maxInt {
		return c, fmt.Errorf("'%s' + '%s' + '%s' must be at most %d, got %d",
			OptPersonProportion, OptAuctionProportion, OptBidProportion, maxInt,
			c.PersonProportion+c.AuctionProportion+c.BidProportion)
	}
	if c.MaxEmitSpeed, err = option.Bool(opts, OptMaxEmitSpeed, c.MaxEmitSpeed); err != nil {
		return c, err
	}
	return c, nil
}

// bounded reports whether a scan ends: 'events.num' is set and not 0.
func bounded(opts map[string]string) bool {
	n, err := strconv.ParseInt(strings.TrimSpace(opts[OptEventsNum]), 10, 64)
	return err == nil && n > 0
}

// field identifies a value of an event: event_type, or a field of the
// person, auction or bid row.
type field uint8

const (
	fEventType field = iota
	fPersonID
	fPersonName
	fPersonEmail
	fPersonCreditCard
	fPersonCity
	fPersonState
	fPersonDateTime
	fPersonExtra
	fAuctionID
	fAuctionItemName
	fAuctionDescription
	fAuctionInitialBid
	fAuctionReserve
	fAuctionDateTime
	fAuctionExpires
	fAuctionSeller
	fAuctionCategory
	fAuctionExtra
	fBidAuction
	fBidBidder
	fBidPrice
	fBidChannel
	fBidURL
	fBidDateTime
	fBidExtra
	numFields
)

var ts3 = types.TimestampOf(3)

// fields names and types every field, as Flink nexmark's table does.
var fields = [numFields]types.Column{
	fEventType:          {Name: "event_type", Type: types.IntType},
	fPersonID:           {Name: "id", Type: types.BigIntType},
	fPersonName:         {Name: "name", Type: types.StringType},
	fPersonEmail:        {Name: "emailAddress", Type: types.StringType},
	fPersonCreditCard:   {Name: "creditCard", Type: types.StringType},
	fPersonCity:         {Name: "city", Type: types.StringType},
	fPersonState:        {Name: "state", Type: types.StringType},
	fPersonDateTime:     {Name: "dateTime", Type: ts3},
	fPersonExtra:        {Name: "extra", Type: types.StringType},
	fAuctionID:          {Name: "id", Type: types.BigIntType},
	fAuctionItemName:    {Name: "itemName", Type: types.StringType},
	fAuctionDescription: {Name: "description", Type: types.StringType},
	fAuctionInitialBid:  {Name: "initialBid", Type: types.BigIntType},
	fAuctionReserve:     {Name: "reserve", Type: types.BigIntType},
	fAuctionDateTime:    {Name: "dateTime", Type: ts3},
	fAuctionExpires:     {Name: "expires", Type: ts3},
	fAuctionSeller:      {Name: "seller", Type: types.BigIntType},
	fAuctionCategory:    {Name: "category", Type: types.BigIntType},
	fAuctionExtra:       {Name: "extra", Type: types.StringType},
	fBidAuction:         {Name: "auction", Type: types.BigIntType},
	fBidBidder:          {Name: "bidder", Type: types.BigIntType},
	fBidPrice:           {Name: "price", Type: types.BigIntType},
	fBidChannel:         {Name: "channel", Type: types.StringType},
	fBidURL:             {Name: "url", Type: types.StringType},
	fBidDateTime:        {Name: "dateTime", Type: ts3},
	fBidExtra:           {Name: "extra", Type: types.StringType},
}

// column is a column of the nexmark table: event_type, or the ROW of an
// event kind with the fields first..last.
type column struct {
	name        string
	kind        int32 // -1: event_type
	first, last field
}

// columns are the table's physical columns, as in Flink nexmark's DDL.
var columns = [...]column{
	{name: "event_type", kind: -1, first: fEventType, last: fEventType},
	{name: "person", kind: PersonEvent, first: fPersonID, last: fPersonExtra},
	{name: "auction", kind: AuctionEvent, first: fAuctionID, last: fAuctionExtra},
	{name: "bid", kind: BidEvent, first: fBidAuction, last: fBidExtra},
}

func (c column) typ() types.T {
	if c.kind < 0 {
		return fields[c.first].Type
	}
	t := types.T{Kind: types.Row}
	for f := c.first; f <= c.last; f++ {
		t.Fields = append(t.Fields, fields[f])
	}
	return t
}

// Schema returns every column a nexmark table may declare, in Flink
// nexmark's order: event_type INT, person ROW<...>, auction ROW<...>,
// bid ROW<...>.
func Schema() types.Schema {
	var s types.Schema
	for _, c := range columns {
		s = append(s, types.Column{Name: c.name, Type: c.typ()})
	}
	return s
}

// bound is a declared column bound to the model: the column, and for a
// ROW the model's field behind each declared field, in declared order.
type bound struct {
	col    column
	decl   types.T
	fields []field
}

// bindColumns maps each declared column to a nexmark column and each field
// of a declared ROW to a field of the model's: names match without regard
// to case, a ROW may declare any of its fields in any order; a name that
// is not one, a type that differs, or NOT NULL on a column or field that
// can be NULL is an error naming it.
func bindColumns(schema types.Schema) ([]bound, error) {
	out := make([]bound, len(schema))
	for i, c := range schema {
		j := slices.IndexFunc(columns[:], func(m column) bool { return strings.EqualFold(m.name, c.Name) })
		if j < 0 {
			return nil, fmt.Errorf("nexmark has no column %s (its columns: %s)", c.Name, strings.Join(Schema().Names(), ", "))
		}
		m := columns[j]
		want := m.typ()
		if c.Type.Kind != want.Kind {
			return nil, fmt.Errorf("nexmark column %s must be %s, not %s", c.Name, want, c.Type)
		}
		if c.Type.NotNull && m.kind >= 0 {
			return nil, fmt.Errorf("nexmark column %s cannot be NOT NULL: it is NULL for events other than %ss", c.Name, kindNames[m.kind])
		}
		out[i].col, out[i].decl = m, c.Type
		if m.kind < 0 {
			continue
		}
		for _, f := range c.Type.Fields {
			k := -1
			for g := m.first; g <= m.last; g++ {
				if strings.EqualFold(fields[g].Name, f.Name) {
					k = int(g)
				}
			}
			if k < 0 {
				return nil, fmt.Errorf("nexmark column %s has no field %s (its fields: %s)", c.Name, f.Name, strings.Join(types.Schema(want.Fields).Names(), ", "))
			}
			ft := fields[k].Type
			if !f.Type.Equal(ft) {
				return nil, fmt.Errorf("nexmark field %s.%s must be %s, not %s", c.Name, f.Name, ft, f.Type)
			}
			out[i].fields = append(out[i].fields, field(k))
		}
	}
	return out, nil
}

var kindNames = [...]string{PersonEvent: "person", AuctionEvent: "auction", BidEvent: "bid"}
