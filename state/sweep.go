package state

// Sweeper walks the entries of one key space a bounded number at a time,
// each walk resuming after the entry where the previous one stopped and
// starting over after the last key group, and deletes those an operator
// says have expired. It is how a state TTL reaches entries that nobody
// reads again: an operator's cache drops rows no longer used (to bound its
// memory), and those would otherwise stay in the store for ever (Flink's
// incremental cleanup; Pebble has no compaction filter).
//
// A Sweeper reads and writes the store directly. The operator must flush
// what its cache changed before a Sweep, and an entry its cache still
// holds must expire there by the same rule (the cache then writes nothing
// for it, or a newer version after the delete): then the two agree.
//
// Used by one goroutine (the subtask's).
type Sweeper struct {
	space          *KeySpace
	kgStart, kgEnd int
	kg             int
	// after is the last key visited in kg, with the space's prefix (nil:
	// kg from its start).
	after []byte
	batch WriteBatch
	start []byte
}

// NewSweeper returns a Sweeper of space over the key groups [kgStart,
// kgEnd] (the subtask's).
func NewSweeper(space *KeySpace, kgStart, kgEnd int) *Sweeper {
	return &Sweeper{space: space, kgStart: kgStart, kgEnd: kgEnd, kg: kgStart}
}

// errSweepLimit ends a scan at the sweep's limit.
type sweepLimit struct{}

func (sweepLimit) Error() string { return "sweep limit" }

// Sweep visits up to limit entries of the space (all of them if there are
// fewer), calls expired for each (key without the space's prefix; neither
// slice may be kept), deletes those it reports, and returns the number
// visited and deleted.
func (s *Sweeper) Sweep(limit int, expired func(kg int, key, value []byte) bool) (visited, deleted int, err error) {
	if limit <= 0 || s.kgEnd < s.kgStart {
		return 0, 0, nil
	}
	store := s.space.Store()
	prefix := s.space.prefix
	end := PrefixEnd(prefix)
	s.batch.Reset()
	// Each key group is visited at most once per call, plus the one it
	// started in a second time from its start when the walk wraps.
	for steps := 0; steps <= s.kgEnd-s.kgStart+1 && visited < limit; steps++ {
		s.start = append(s.start[:0], prefix...)
		if s.after != nil {
			// The first key after s.after.
			s.start = append(append(s.start[:0], s.after...), 0)
		}
		kg := s.kg
		err = store.ScanRange(kg, s.start, end, func(k, v []byte) error {
			if visited == limit {
				return sweepLimit{}
			}
			visited++
			s.after = append(s.after[:0], k...)
			if expired(kg, k[len(prefix):], v) {
				s.batch.Delete(kg, k)
				deleted++
			}
			return nil
		})
		if _, ok := err.(sweepLimit); ok {
			err = nil
			break
		}
		if err != nil {
			return visited, 0, err
		}
		if visited == limit {
			break
		}
		// kg is done: the next one, or the first again.
		s.after = nil
		if s.kg++; s.kg > s.kgEnd {
			s.kg = s.kgStart
		}
	}
	if s.batch.Len() > 0 {
		if err := store.Apply(&s.batch); err != nil {
			return visited, 0, err
		}
	}
	return visited, deleted, nil
}
