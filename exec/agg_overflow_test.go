package exec

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

var (
	max128 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 127), big.NewInt(1))
	min128 = new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 127))
)

// randNum is a random 128-bit value, often near the ends of the range.
func randNum(r *rand.Rand) decimal128.Num {
	switch r.IntN(4) {
	case 0:
		return decimal128.FromI64(r.Int64N(2000) - 1000)
	case 1:
		return decimal128.MaxDecimal128.Sub(decimal128.FromI64(r.Int64N(10)))
	}
	return decimal128.New(int64(r.Uint64()), r.Uint64())
}

// addDecimal detects exactly the sums that leave 128 bits.
func TestAddDecimal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		a, x := randNum(r), randNum(r)
		for _, sign := range []int64{1, -1} {
			want := new(big.Int)
			if sign > 0 {
				want.Add(a.BigInt(), x.BigInt())
			} else {
				want.Sub(a.BigInt(), x.BigInt())
			}
			fits := want.Cmp(max128) <= 0 && want.Cmp(min128) >= 0
			got, ok := addDecimal(a, x, sign)
			if ok != fits || (ok && got.BigInt().Cmp(want) != 0) {
				t.Fatalf("addDecimal(%s, %s, %d) = %s, %v; want %s, %v", a.BigInt(), x.BigInt(), sign, got.BigInt(), ok, want, fits)
			}
		}
	}
}

// avgDecimal is sum*10^k/n rounded half up, checked against precision.
func TestAvgDecimal(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil)
	for i := range 100000 {
		sum := randNum(r)
		if i == 0 {
			sum = decimal128.New(-1<<63, 0) // -2^127
		}
		n := r.Int64N(10) + 1
		if r.IntN(3) == 0 {
			n = r.Int64N(1<<62) + 1
		}
		k := r.IntN(7)
		num := new(big.Int).Mul(sum.BigInt(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil))
		// Half up, away from zero: (2|num| + n) / 2n with the sign of num.
		q := new(big.Int).Abs(num)
		q.Mul(q, big.NewInt(2)).Add(q, big.NewInt(n)).Quo(q, big.NewInt(2*n))
		if num.Sign() < 0 {
			q.Neg(q)
		}
		fits := new(big.Int).Abs(q).Cmp(limit) < 0
		got, ok := avgDecimal(sum, n, k, 38)
		if ok != fits || (ok && got.BigInt().Cmp(q) != 0) {
			t.Fatalf("avgDecimal(%s, %d, %d) = %s, %v; want %s, %v", sum.BigInt(), n, k, got.BigInt(), ok, q, fits)
		}
	}
}
