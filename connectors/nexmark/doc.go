// Package nexmark is the source of the Nexmark benchmark (Flink nexmark's
// 'connector' = 'nexmark'): a stream of people, auctions and bids of an
// online auction house, generated from the event number alone. It builds
// each batch's columns in Arrow builders with no per-event allocation, and
// only the columns and ROW fields the plan reads (the fields of an event
// kind no read field needs are not even generated).
//
// Columns (Flink nexmark's table): event_type INT and the ROW columns
// person, auction and bid, each NULL when the event is of another kind
// (docs/DIALECT.md lists their fields). A table declares the columns it
// wants, in any order, and any of a row's fields, in any order: the
// planner declares only the fields a query reads (catalog.Connector
// ReadsRowFields), and a kind whose rows are read for their dateTime
// alone is not generated at all. A name that is not one, another type, or
// NOT NULL on a column that can be NULL is an error at CREATE TABLE. Each
// row is written straight into its struct builder's field builders, its
// validity for the whole batch first: strings event by event, fixed-width
// fields a batch at a time, event_type and dateTime from the kinds and
// event times of the batch's events, which are stepped through without a
// division per event. The event time dateTime is a computed column of the
// table (bench/nexmark/ddl.sql), as in Flink.
//
// Options (Flink nexmark's names and defaults; any other key is an error):
//
//	first-event.rate    events per second of event time, 1 to 2^31-1,
//	                    default 10000
//	next-event.rate     the same for the second half of each 600 s rate
//	                    period, default 10000. Flink's generator accepts the
//	                    option but keeps first-event.rate throughout; we
//	                    follow the Nexmark model's square rate shape. With
//	                    both equal (Flink nexmark's DDL sets both) the event
//	                    times are the same.
//	events.num          the events of the whole table, default 0: unbounded
//	person.proportion   the mix of kinds: of every p+a+b consecutive event
//	auction.proportion  numbers, the first p are people, the next a
//	bid.proportion      auctions, the last b bids; defaults 1, 3, 46
//	                    (people and auctions at least 1, bids may be 0)
//	max-emit-speed      'true' (default): as fast as possible; 'false':
//	                    each subtask emits an event once the wall clock
//	                    since it started has passed the event's time since
//	                    its first, so the table flows at its event rate
//
// The model (Beam's and Flink's Nexmark generators, written from their
// description): event n's kind is n mod (p+a+b) against the proportions,
// its time is BaseTime (2024-01-01 00:00:00 UTC; Flink starts at the wall
// clock) plus n events at the rate. Person and auction ids count from
// 1000 in creation order. A bid is for the hot auction (the first of the
// latest 100) one time in 2, else for one of the latest 100 auctions or
// up to 10 past the last; its bidder is the hot bidder (the second of the
// latest 100 people) 3 times in 4, else one of the latest 1000 people or
// up to 10 past the last; an auction's seller is the hot seller (the
// first of the latest 100 people) 3 times in 4, else drawn the same way.
// Prices are log-uniform between 100 and 10^8 cents; the reserve is the
// initial bid plus another price; an auction expires at a random time up
// to twice the time 100 more auctions take to be created; categories are
// 10 to 14. Half the bids come from the channels Google, Facebook, Baidu
// and Apple, the others from "channel-0" to "channel-9999", each with a
// URL https://www.nexmark.com/<a>/<b>/<c>/item.htm?query=1, nine in ten
// of the latter with &channel_id=<the channel's number, bits reversed>.
// Names, emails, credit card numbers, cities and states are drawn from
// small lists and random letters; the extra column pads each event to
// about 200 (person), 500 (auction) or 100 (bid) bytes, ±20%.
//
// Determinism: event n is a function of the options and n only (a
// splitmix64 stream seeded from n). Generator.Event produces any event on
// its own, which is how the tests compute a query's expected results.
//
// Splits and checkpoints: subtask i of P emits events i, i+P, i+2P, ...,
// so the event time of every subtask advances together; the snapshot
// lists each split's next event number and stride, so a restore resumes
// at exactly the next event. A restore at another parallelism
// (exec.Rescalable) deals the old splits round-robin to the new subtasks,
// which read theirs in turns, a batch each, each with its own watermark
// (exec.SplitSource, named "first/stride").
package nexmark
