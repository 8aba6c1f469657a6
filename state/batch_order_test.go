package state

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestApplyLaterWins applies random batches whose keys share long
// prefixes (past the 16 bytes Apply sorts by first), differ in length
// (one a prefix of another, the empty key) and repeat within a batch, with
// values that shrink and grow on rewrite, to both backends: each store's
// Scan must be the model's, a map where a batch's later operation on a key
// wins.
func TestApplyLaterWins(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	keys := []string{""}
	for _, base := range []string{"", "k", "0123456789abcdef", "0123456789abcdef0", "0123456789abcdefgh"} {
		for i := 0; i < 6; i++ {
			keys = append(keys, base+strings.Repeat("\x00", i%2)+string(rune('a'+i)))
		}
		keys = append(keys, base)
	}
	pb, err := PebbleBackend{}.Open(filepath.Join(t.TempDir(), "p"))
	if err != nil {
		t.Fatal(err)
	}
	defer pb.Close()
	stores := map[string]Store{"memory": NewMemory(), "pebble": pb}
	type mk struct {
		kg  int
		key string
	}
	model := map[mk]string{}
	for step := 0; step < 40; step++ {
		var b WriteBatch
		for j, n := 0, rng.Intn(200); j < n; j++ {
			k := mk{rng.Intn(3) * 300, keys[rng.Intn(len(keys))]}
			if rng.Intn(4) == 0 {
				b.Delete(k.kg, []byte(k.key))
				delete(model, k)
				continue
			}
			v := fmt.Sprintf("%d.%d%s", step, j, strings.Repeat("v", rng.Intn(30)))
			b.Put(k.kg, []byte(k.key), []byte(v))
			model[k] = v
		}
		var ks []mk
		for k := range model {
			ks = append(ks, k)
		}
		sort.Slice(ks, func(i, j int) bool {
			if ks[i].kg != ks[j].kg {
				return ks[i].kg < ks[j].kg
			}
			return ks[i].key < ks[j].key
		})
		var want []string
		for _, k := range ks {
			want = append(want, fmt.Sprintf("%05d %q=%q", k.kg, k.key, model[k]))
		}
		for name, s := range stores {
			if err := s.Apply(&b); err != nil {
				t.Fatal(err)
			}
			var got []string
			if err := s.Scan(func(kg int, key, value []byte) error {
				got = append(got, fmt.Sprintf("%05d %q=%q", kg, key, value))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
				t.Fatalf("step %d, %s: got\n%s\nwant\n%s", step, name, g, w)
			}
		}
	}
}
