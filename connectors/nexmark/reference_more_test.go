package nexmark_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// sltMorePath is the suite of q10, q12, q13 and q14, over the same events
// as sltPath.
const sltMorePath = "../../tests/sqllogic/testdata/nexmark_more.slt"

// refMoreQueries compute each labelled query of nexmark_more.slt in plain
// Go, as rows of the engine's text.
var refMoreQueries = map[string]func(ev refEvents) [][]string{
	"nexmark_q14": func(ev refEvents) (rows [][]string) {
		for _, b := range ev.bids {
			// 0.908 * price in thousandths: between 1,000,000 and 50,000,000 exclusive.
			m := b.price * 908
			if m <= 1_000_000_000 || m >= 50_000_000_000 {
				continue
			}
			h := time.UnixMilli(b.ts).UTC().Hour()
			kind := "otherTime"
			switch {
			case h >= 8 && h <= 18:
				kind = "dayTime"
			case h <= 6 || h >= 20:
				kind = "nightTime"
			}
			rows = append(rows, []string{itoa(b.auction), itoa(b.bidder), fmt.Sprintf("%d.%03d", m/1000, m%1000),
				kind, tsText(b.ts), itoa(int64(strings.Count(b.extra, "c")))})
		}
		return rows
	},
	"nexmark_q12_bidders": func(ev refEvents) (rows [][]string) {
		n := map[int64]int64{}
		for _, b := range ev.bids {
			n[b.bidder]++
		}
		for k, v := range n {
			rows = append(rows, []string{itoa(k), itoa(v)})
		}
		return rows
	},
	"nexmark_q13": func(ev refEvents) (rows [][]string) {
		// side_input holds the lines "i,i" for i in [0, 10000).
		for _, b := range ev.bids {
			rows = append(rows, []string{itoa(b.auction), itoa(b.bidder), itoa(b.price), tsText(b.ts), itoa(b.auction % 10000)})
		}
		return rows
	},
	"nexmark_q13_left": func(ev refEvents) [][]string {
		// Against the even keys only: every bid, those of even auctions matched.
		var even int64
		for _, b := range ev.bids {
			if b.auction%2 == 0 {
				even++
			}
		}
		return [][]string{{itoa(int64(len(ev.bids))), itoa(even)}}
	},
	"nexmark_q10": func(ev refEvents) (rows [][]string) {
		// The rows read back from the partitioned files, with the
		// partition directories' values.
		for _, b := range ev.bids {
			t := time.UnixMilli(b.ts).UTC()
			rows = append(rows, []string{itoa(b.auction), itoa(b.bidder), itoa(b.price), tsText(b.ts), b.extra,
				t.Format("2006-01-02"), t.Format("15:04")})
		}
		return rows
	},
}

// TestReferenceMore: every labelled query of nexmark_more.slt expects what
// the Go reference computes from the same events; NEXMARK_REWRITE=1
// writes the reference's results into the suite instead.
func TestReferenceMore(t *testing.T) {
	checkSuite(t, sltMorePath, refMoreQueries)
}
