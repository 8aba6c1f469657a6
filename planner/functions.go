package planner

import (
	"sort"

	"github.com/streamsql/streamsql/functions"
)

// internalFunctions are the names of the function registry that the
// binder calls itself and a query cannot.
var internalFunctions = map[string]bool{"NEG": true, "SINGLE_VALUE_CHECK": true}

// FunctionNames lists, sorted and in upper case, every function and
// operator a query can call (SHOW FUNCTIONS): the scalar functions and
// operators, the aggregate functions, the window functions of OVER, the
// window table functions, CAST and TRY_CAST, and PROCTIME.
func FunctionNames() []string {
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if !seen[n] && !internalFunctions[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, n := range functions.Names() {
		if f, _ := functions.Lookup(n); !f.Refused {
			add(n)
		}
	}
	for _, a := range []AggFunc{AggCount, AggSum, AggMin, AggMax, AggAvg, AggStddevPop, AggStddevSamp,
		AggVarPop, AggVarSamp, AggBoolAnd, AggBoolOr, AggFirstValue, AggLastValue, AggListAgg, AggJSONArrayAgg, AggJSONObjectAgg} {
		add(string(a))
	}
	add("STRING_AGG")
	for _, w := range []WindowFunc{WinRowNumber, WinRank, WinDenseRank, WinPercentRank, WinCumeDist, WinNtile, WinLag, WinLead} {
		add(string(w))
	}
	for _, n := range []string{"TUMBLE", "HOP", "CUMULATE", "SESSION", "CAST", "TRY_CAST", "PROCTIME"} {
		add(n)
	}
	sort.Strings(out)
	return out
}
