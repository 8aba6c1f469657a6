package exec

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"unsafe"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// TestJoinRowsExpire: with a TTL a stored row that nobody wrote for
// longer is dropped, counted with its multiplicity, when its key is read
// or at a checkpoint's sweep, and deleted from the store; a write (a
// second equal row, a changed match count) keeps a row alive.
func TestJoinRowsExpire(t *testing.T) {
	store := state.NewMemory()
	st := newJoinSideState(state.NewKeySpace(store, spaceJoinLeft, "left rows"), planner.NoUniqueKey, false, false, "test", true)
	st.ttl = 1000
	key := []byte("k1")
	k, err := st.lookup(0, key, true)
	if err != nil {
		t.Fatal(err)
	}
	st.now = 10_000
	st.add(k, []byte("a"), []byte("a"), 0)
	st.add(k, []byte("a"), []byte("a"), 0) // a second equal row
	st.add(k, []byte("b"), []byte("b"), 0)
	st.now = 10_800
	st.touchRow(k, st.find(k, []byte("b"))) // b written again
	if err := st.flush(); err != nil {
		t.Fatal(err)
	}
	if got := countStored(t, store); got != 2 {
		t.Fatalf("stored rows after the flush: %d, want 2", got)
	}

	st.now = 11_001 // a expired (written at 10000), b not (10800)
	if live := st.live(k); len(live) != 1 || string(st.idOf(k, &live[0])) != "b" {
		t.Fatalf("live rows: %v, want only b", ids(st, k))
	}
	if st.expired != 2 {
		t.Errorf("expired: %d, want 2 (a was there twice)", st.expired)
	}
	st.now = 12_000 // b expires too; nobody reads the key: the sweep finds it
	st.sweep()
	if st.expired != 3 {
		t.Errorf("expired after the sweep: %d, want 3", st.expired)
	}
	if err := st.flush(); err != nil {
		t.Fatal(err)
	}
	if got := countStored(t, store); got != 0 {
		t.Errorf("stored rows after expiry: %d, want 0", got)
	}
	if len(st.keys) != 0 || st.nkeys != 0 {
		t.Errorf("keys in memory after expiry: %d, want 0", st.nkeys)
	}

	// Without a TTL nothing expires.
	st2 := newJoinSideState(state.NewKeySpace(state.NewMemory(), spaceJoinLeft, "left rows"), planner.NoUniqueKey, true, false, "test", true)
	k2, _ := st2.lookup(0, key, true)
	st2.add(k2, nil, []byte("x"), 0)
	st2.now = 1 << 40
	st2.sweep()
	if live := st2.live(k2); len(live) != 1 || st2.expired != 0 {
		t.Errorf("without a TTL: %d live rows, %d expired; want 1 and 0", len(live), st2.expired)
	}
}

// TestJoinRowExpiresOnce: a row exactly the TTL old is live both in
// memory and in the store, so a checkpoint at that millisecond (sweep,
// flush, sweepStore) keeps it, and one a millisecond later drops it,
// counted once, on an append-only side (runs) and on one with a unique
// key (an entry per row).
func TestJoinRowExpiresOnce(t *testing.T) {
	for _, c := range []struct {
		name       string
		spec       planner.JoinInputSpec
		appendOnly bool
	}{{"runs", planner.NoUniqueKey, true}, {"rows", planner.HasUniqueKey, false}} {
		t.Run(c.name, func(t *testing.T) {
			store := state.NewMemory()
			st := newJoinSideState(state.NewKeySpace(store, spaceJoinLeft, "left rows"), c.spec, c.appendOnly, false, "test", true)
			st.ttl = 1000
			k, err := st.lookup(0, []byte("k1"), true)
			if err != nil {
				t.Fatal(err)
			}
			st.now = 10_000
			st.add(k, []byte("a"), []byte("a"), 0)
			checkpoint := func(now int64) {
				t.Helper()
				st.now = now
				st.sweep()
				if err := st.flush(); err != nil {
					t.Fatal(err)
				}
				if err := st.sweepStore(0, 1); err != nil {
					t.Fatal(err)
				}
			}
			checkpoint(10_000)
			checkpoint(11_000) // exactly the TTL old: live
			if got := countStored(t, store); st.expired != 0 || got != 1 {
				t.Fatalf("at the TTL: %d expired, %d stored; want 0 and 1", st.expired, got)
			}
			checkpoint(11_001)
			checkpoint(12_000)
			if got := countStored(t, store); st.expired != 1 || got != 0 {
				t.Fatalf("past the TTL: %d expired, %d stored; want 1 and 0", st.expired, got)
			}
		})
	}
}

func countStored(t *testing.T, s state.Store) int {
	t.Helper()
	n := 0
	if err := s.Scan(func(int, []byte, []byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

func ids(st *joinSideState, k *joinKey) []string {
	var out []string
	for i := range k.rows {
		out = append(out, string(st.idOf(k, &k.rows[i])))
	}
	return out
}

// TestJoinRuns: an append-only side writes a key's new rows as one run
// entry per flush; a change of a stored row (its match count) rewrites the
// key as one run in place of its entries; a restart reads the runs and the
// older per-row entries back with their counts, matches and columns.
func TestJoinRuns(t *testing.T) {
	store := state.NewMemory()
	space := state.NewKeySpace(store, spaceJoinLeft, "left rows")
	st := newJoinSideState(space, planner.NoUniqueKey, true, true, "test", true)
	key := []byte("k1")
	k, err := st.lookup(0, key, true)
	if err != nil {
		t.Fatal(err)
	}
	st.now = 5
	st.add(k, nil, []byte("a"), 0)
	st.add(k, nil, []byte("b"), 2)
	if err := st.flush(); err != nil {
		t.Fatal(err)
	}
	st.add(k, nil, []byte("c"), 0)
	if err := st.flush(); err != nil {
		t.Fatal(err)
	}
	if got := countStored(t, store); got != 2 {
		t.Fatalf("entries after two flushes of new rows: %d, want 2 (one run each)", got)
	}
	// A row of the older per-row form (stateVersion): count, matches, time, row.
	old := checkpoint.AppendStateHeader(nil, stateVersion)
	old = binary.AppendVarint(old, 1)
	old = binary.AppendVarint(old, 7)
	old = binary.AppendVarint(old, 3)
	old = appendBytes(old, []byte("old"))
	var b state.WriteBatch
	space.Put(&b, 0, append(append([]byte(nil), key...), "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"...), old)
	if err := store.Apply(&b); err != nil {
		t.Fatal(err)
	}

	restored := func() *joinKey {
		t.Helper()
		st = newJoinSideState(space, planner.NoUniqueKey, true, true, "test", false)
		k, err := st.lookup(0, key, false)
		if err != nil || k == nil {
			t.Fatalf("lookup after a restart: %v, %v", k, err)
		}
		return k
	}
	k = restored()
	if got, want := runRows(k), "a/0/5 b/2/5 c/0/5 old/7/3"; got != want {
		t.Fatalf("rows read back: %s, want %s", got, want)
	}
	st.now = 9
	for i := range k.rows {
		if r := &k.rows[i]; string(k.cols(r)) == "b" {
			r.matches--
			st.touchRow(k, i)
		}
	}
	if err := st.flush(); err != nil {
		t.Fatal(err)
	}
	if got := countStored(t, store); got != 1 {
		t.Fatalf("entries after a stored row changed: %d, want 1 (the key rewritten)", got)
	}
	if got, want := runRows(restored()), "a/0/5 b/1/9 c/0/5 old/7/3"; got != want {
		t.Fatalf("rows read back after the rewrite: %s, want %s", got, want)
	}
}

// runRows lists k's rows as row/matches/time, sorted.
func runRows(k *joinKey) string {
	var out []string
	for i := range k.rows {
		r := &k.rows[i]
		if r.n != 1 {
			return fmt.Sprintf("row %q with count %d", k.cols(r), r.n)
		}
		out = append(out, fmt.Sprintf("%s/%d/%d", k.cols(r), r.matches, r.ts))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// TestJoinSideStateModel: random adds and removes of rows over a few keys
// (enough rows per key to index them and to compact their data), with
// flushes, drops and restarts from the store in between, leave a side
// holding exactly the rows of a plain model, in memory and after a
// restart, for each kind of identity.
func TestJoinSideStateModel(t *testing.T) {
	for _, spec := range []planner.JoinInputSpec{planner.NoUniqueKey, planner.HasUniqueKey, planner.JoinKeyContainsUniqueKey} {
		t.Run(fmt.Sprint(spec), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(spec)))
			store := state.NewMemory()
			space := state.NewKeySpace(store, spaceJoinLeft, "left rows")
			st := newJoinSideState(space, spec, false, false, "test", true)
			type row struct {
				cols string
				n    int64
			}
			model := map[string]map[string]row{} // key -> identity -> row
			keys := []string{"k0", "k1", "k2"}
			check := func(when string) {
				t.Helper()
				for _, key := range keys {
					k, err := st.lookup(0, []byte(key), false)
					if err != nil {
						t.Fatal(err)
					}
					got := map[string]row{}
					if k != nil {
						for i := range k.rows {
							r := &k.rows[i]
							got[string(st.idOf(k, r))] = row{string(k.cols(r)), r.n}
							if j := st.find(k, st.idOf(k, r)); j != i {
								t.Fatalf("%s: key %s: row %d found at %d", when, key, i, j)
							}
						}
					}
					if want := model[key]; fmt.Sprint(got) != fmt.Sprint(want) && len(got)+len(want) > 0 {
						t.Fatalf("%s: key %s holds %v, want %v", when, key, got, want)
					}
				}
			}
			for step := 0; step < 20000; step++ {
				key := keys[rng.IntN(len(keys))]
				k, err := st.lookup(0, []byte(key), true)
				if err != nil {
					t.Fatal(err)
				}
				u := fmt.Sprint(rng.IntN(40))
				cols := fmt.Sprintf("%s-%d", u, rng.IntN(3))
				if spec == planner.NoUniqueKey {
					cols = u
				}
				id := []byte(u)
				switch spec {
				case planner.NoUniqueKey:
					id = []byte(cols)
				case planner.JoinKeyContainsUniqueKey:
					id = nil
				}
				m := model[key]
				if m == nil {
					m = map[string]row{}
					model[key] = m
				}
				if rng.IntN(2) == 0 {
					st.add(k, id, []byte(cols), 0)
					r := m[string(id)]
					if spec == planner.NoUniqueKey {
						r.n++
					} else {
						r.n = 1
					}
					r.cols = cols
					m[string(id)] = r
				} else {
					r, held := m[string(id)]
					if got := st.remove(k, id); got != held {
						t.Fatalf("step %d: remove of %q: %v, want %v", step, id, got, held)
					}
					if r.n--; r.n > 0 {
						m[string(id)] = r
					} else {
						delete(m, string(id))
					}
				}
				switch rng.IntN(500) {
				case 0:
					if err := st.flush(); err != nil {
						t.Fatal(err)
					}
				case 1:
					if err := st.evict(0, 0); err != nil {
						t.Fatal(err)
					}
				case 2:
					if err := st.flush(); err != nil {
						t.Fatal(err)
					}
					st = newJoinSideState(space, spec, false, false, "test", false)
				}
				if step%97 == 0 {
					check(fmt.Sprintf("step %d", step))
				}
			}
			check("the end")
			if err := st.flush(); err != nil {
				t.Fatal(err)
			}
			st = newJoinSideState(space, spec, false, false, "test", false)
			check("a restart")
		})
	}
}

// TestJoinKeyRecordSize guards joinKey's layout: a record of at most 192
// bytes is allocated on a cache line boundary, so its first two lines hold
// what a joined row reads.
func TestJoinKeyRecordSize(t *testing.T) {
	if n := unsafe.Sizeof(joinKey{}); n > 192 {
		t.Fatalf("joinKey is %d bytes, more than 192", n)
	}
	if off := unsafe.Offsetof(joinKey{}.data); off+24 > 128 {
		t.Fatalf("joinKey.data ends at byte %d, past the second line", off+24)
	}
}

// scanCounter is a store that counts the prefix scans made of it.
type scanCounter struct {
	state.Store
	scans int
}

func (s *scanCounter) ScanPrefix(kg int, prefix []byte, fn func(key, value []byte) error) error {
	s.scans++
	return s.Store.ScanPrefix(kg, prefix, fn)
}

// TestJoinLazySide: an append-only side whose rows count no matches adds
// rows to a key that is not in memory without reading the store (the key
// is partial); the other side joining with the key reads its stored rows,
// in the order they were written, before the new ones; evict writes back
// and drops the keys not used since its last pass first.
func TestJoinLazySide(t *testing.T) {
	store := &scanCounter{Store: state.NewMemory()}
	space := state.NewKeySpace(store, spaceJoinLeft, "left rows")
	st := newJoinSideState(space, planner.NoUniqueKey, true, false, "test", true)
	if !st.lazy {
		t.Fatal("an append-only side without matches is not lazy")
	}
	add := func(key, row string) {
		t.Helper()
		k, err := st.lookup(0, []byte(key), true)
		if err != nil {
			t.Fatal(err)
		}
		st.add(k, nil, []byte(row), 0)
	}
	rows := func(key string) string {
		t.Helper()
		k, err := st.lookup(0, []byte(key), false)
		if err != nil {
			t.Fatal(err)
		}
		if k == nil {
			return ""
		}
		var out []string
		for i := range k.rows {
			out = append(out, string(k.cols(&k.rows[i])))
		}
		return strings.Join(out, " ")
	}
	add("k1", "a")
	add("k1", "b")
	add("k2", "x")
	if err := st.evict(0, 0); err != nil {
		t.Fatal(err)
	}
	if st.nkeys != 0 || st.bytes() != 0 {
		t.Fatalf("after evicting all: %d keys, %d bytes; want none", st.nkeys, st.bytes())
	}
	add("k1", "c")
	if store.scans != 0 {
		t.Fatalf("adding a row to a key not in memory read the store %d times, want 0", store.scans)
	}
	if err := st.flush(); err != nil {
		t.Fatal(err)
	}
	add("k1", "d")
	if got, want := rows("k1"), "a b c d"; got != want {
		t.Fatalf("k1's rows when joined with: %q, want %q", got, want)
	}
	if store.scans != 1 {
		t.Fatalf("joining with a partial key read the store %d times, want 1", store.scans)
	}
	if err := st.flush(); err != nil {
		t.Fatal(err)
	}
	if got := countStored(t, store.Store); got != 4 {
		t.Fatalf("stored entries: %d, want 4 (a run per flush: a+b, x, c, d)", got)
	}
	// Of two keys in memory, the one used since the last pass stays.
	add("k3", "y")
	for _, head := range st.keys {
		for k := head; k != nil; k = k.next {
			k.ref = false // as a pass leaves them
		}
	}
	rows("k3")
	if err := st.evict(1<<40, 1); err != nil {
		t.Fatal(err)
	}
	if st.nkeys != 1 || inChain(st.keys[joinKeyHash([]byte("k3"))], []byte("k3")) == nil {
		t.Fatalf("after evicting to one key: %d keys, k3 kept: %v; want k3 only", st.nkeys,
			inChain(st.keys[joinKeyHash([]byte("k3"))], []byte("k3")) != nil)
	}
	if got, want := rows("k1"), "a b c d"; got != want {
		t.Fatalf("k1's rows read back after eviction: %q, want %q", got, want)
	}
	if got, want := rows("k2"), "x"; got != want {
		t.Fatalf("k2's rows read back after eviction: %q, want %q", got, want)
	}
}
