package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/streamsql/streamsql/connectors/nexmark"
)

// TestNexmarkJavaGeneratorMatchesGo: the Java port of the generator that
// feeds Flink (bench/peers, Generator.java) produces the same
// first 10,000 events as connectors/nexmark, at the rate and mix of
// bench/nexmark/ddl.sql: both print them as the same CSV lines. It needs
// Java and Maven (the first build resolves Flink from Maven Central).
func TestNexmarkJavaGeneratorMatchesGo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds bench/peers with Maven")
	}
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to build and run bench/peers (./test.sh installs it)", tool)
		}
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	peer, err := buildNexmarkPeer(repo)
	if err != nil {
		t.Fatal(err)
	}
	const n = 10_000
	c := nexmark.DefaultConfig
	c.FirstEventRate, c.NextEventRate = 10_000_000, 10_000_000
	cmd := peer.command("256m", t.TempDir(), "csv", fmt.Sprint(n), fmt.Sprint(c.FirstEventRate), fmt.Sprint(c.NextEventRate),
		fmt.Sprint(c.PersonProportion), fmt.Sprint(c.AuctionProportion), fmt.Sprint(c.BidProportion))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	g := nexmark.NewGenerator(c)
	var e nexmark.Event
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	i, bad := uint64(0), 0
	for ; sc.Scan(); i++ {
		if i == n {
			t.Fatalf("Java printed more than %d events", n)
		}
		g.Event(i, &e)
		if want := csvEvent(i, &e); sc.Text() != want {
			bad++
			if bad <= 5 {
				t.Errorf("event %d:\n Java: %s\n   Go: %s", i, sc.Text(), want)
			}
		}
	}
	if i != n {
		t.Errorf("Java printed %d events, want %d", i, n)
	}
	if bad > 0 {
		t.Errorf("%d of %d events differ", bad, n)
	}
}

// csvEvent is event n as NexmarkSql csv prints it: number, kind, time in
// ms, the kind's fields, its extra column.
func csvEvent(n uint64, e *nexmark.Event) string {
	b := fmt.Appendf(nil, "%d,%d,%d", n, e.Type, e.DateTime)
	field := func(v any) {
		b = append(b, ',')
		switch v := v.(type) {
		case int64:
			b = strconv.AppendInt(b, v, 10)
		case []byte:
			b = append(b, v...)
		}
	}
	var extra []byte
	switch e.Type {
	case nexmark.PersonEvent:
		p := &e.Person
		for _, v := range []any{p.ID, p.Name, p.EmailAddress, p.CreditCard, p.City, p.State} {
			field(v)
		}
		extra = p.Extra
	case nexmark.AuctionEvent:
		a := &e.Auction
		for _, v := range []any{a.ID, a.ItemName, a.Description, a.InitialBid, a.Reserve, a.Expires, a.Seller, a.Category} {
			field(v)
		}
		extra = a.Extra
	default:
		d := &e.Bid
		for _, v := range []any{d.Auction, d.Bidder, d.Price, d.Channel, d.URL} {
			field(v)
		}
		extra = d.Extra
	}
	field(extra)
	return string(b)
}
