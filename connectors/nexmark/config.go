package nexmark

import (
	"fmt"
	"math"
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

// col identifies a column of the nexmark table.
type col uint8

const (
	colEventType col = iota
	colPersonID
	colPersonName
	colPersonEmail
	colPersonCreditCard
	colPersonCity
	colPersonState
	colPersonDateTime
	colPersonExtra
	colAuctionID
	colAuctionItemName
	colAuctionDescription
	colAuctionInitialBid
	colAuctionReserve
	colAuctionDateTime
	colAuctionExpires
	colAuctionSeller
	colAuctionCategory
	colAuctionExtra
	colBidAuction
	colBidBidder
	colBidPrice
	colBidChannel
	colBidURL
	colBidDateTime
	colBidExtra
	colDateTime
	numCols
)

var ts3 = types.TimestampOf(3)

// columns is the nexmark table's schema: Flink's event_type and person,
// auction and bid rows flattened (ROW types do not exist yet), each field
// NULL when the event is of another kind, and the event time.
var columns = [numCols]types.Column{
	colEventType:          {Name: "event_type", Type: types.IntType},
	colPersonID:           {Name: "person_id", Type: types.BigIntType},
	colPersonName:         {Name: "person_name", Type: types.StringType},
	colPersonEmail:        {Name: "person_email_address", Type: types.StringType},
	colPersonCreditCard:   {Name: "person_credit_card", Type: types.StringType},
	colPersonCity:         {Name: "person_city", Type: types.StringType},
	colPersonState:        {Name: "person_state", Type: types.StringType},
	colPersonDateTime:     {Name: "person_date_time", Type: ts3},
	colPersonExtra:        {Name: "person_extra", Type: types.StringType},
	colAuctionID:          {Name: "auction_id", Type: types.BigIntType},
	colAuctionItemName:    {Name: "auction_item_name", Type: types.StringType},
	colAuctionDescription: {Name: "auction_description", Type: types.StringType},
	colAuctionInitialBid:  {Name: "auction_initial_bid", Type: types.BigIntType},
	colAuctionReserve:     {Name: "auction_reserve", Type: types.BigIntType},
	colAuctionDateTime:    {Name: "auction_date_time", Type: ts3},
	colAuctionExpires:     {Name: "auction_expires", Type: ts3},
	colAuctionSeller:      {Name: "auction_seller", Type: types.BigIntType},
	colAuctionCategory:    {Name: "auction_category", Type: types.BigIntType},
	colAuctionExtra:       {Name: "auction_extra", Type: types.StringType},
	colBidAuction:         {Name: "bid_auction", Type: types.BigIntType},
	colBidBidder:          {Name: "bid_bidder", Type: types.BigIntType},
	colBidPrice:           {Name: "bid_price", Type: types.BigIntType},
	colBidChannel:         {Name: "bid_channel", Type: types.StringType},
	colBidURL:             {Name: "bid_url", Type: types.StringType},
	colBidDateTime:        {Name: "bid_date_time", Type: ts3},
	colBidExtra:           {Name: "bid_extra", Type: types.StringType},
	colDateTime:           {Name: "date_time", Type: ts3},
}

// Schema returns every column a nexmark table may declare, in the order
// of docs/DIALECT.md.
func Schema() types.Schema { return append(types.Schema(nil), columns[:]...) }

// kind is the event kind whose events have a value in column c (-1: every
// event has one).
func (c col) kind() int32 {
	switch {
	case c >= colPersonID && c <= colPersonExtra:
		return PersonEvent
	case c >= colAuctionID && c <= colAuctionExtra:
		return AuctionEvent
	case c >= colBidAuction && c <= colBidExtra:
		return BidEvent
	}
	return -1
}

// bindColumns maps each declared column to a nexmark column: a name that
// is not one, a type that differs, or NOT NULL on a column that is NULL
// for some events is an error naming the column.
func bindColumns(schema types.Schema) ([]col, error) {
	out := make([]col, len(schema))
	for i, c := range schema {
		found := false
		for j := range columns {
			if !strings.EqualFold(columns[j].Name, c.Name) {
				continue
			}
			want := columns[j].Type
			if c.Type.Kind != want.Kind || (want.Kind == types.Timestamp && c.Type.Precision != want.Precision) {
				return nil, fmt.Errorf("nexmark column %s must be %s, not %s", c.Name, want, c.Type)
			}
			if c.Type.NotNull && col(j).kind() >= 0 {
				return nil, fmt.Errorf("nexmark column %s cannot be NOT NULL: it is NULL for events other than %ss", c.Name, kindNames[col(j).kind()])
			}
			out[i], found = col(j), true
			break
		}
		if !found {
			return nil, fmt.Errorf("nexmark has no column %s (its columns: %s)", c.Name, strings.Join(Schema().Names(), ", "))
		}
	}
	return out, nil
}

var kindNames = [...]string{PersonEvent: "person", AuctionEvent: "auction", BidEvent: "bid"}
