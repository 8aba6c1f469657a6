package udf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/internal/testenv"
	"github.com/streamsql/streamsql/types"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveUDFModules()
	os.Exit(code)
}

func load(t *testing.T, name string, opts Options) *Module {
	t.Helper()
	return loadOpts(t, name, opts)
}

func loadB(b *testing.B, name string) *Module { return loadOpts(b, name, Options{}) }

func loadOpts(t testing.TB, name string, opts Options) *Module {
	t.Helper()
	dir, err := testenv.UDFModules()
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(filepath.Join(dir, name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if opts == (Options{}) {
		opts = Options{MemoryLimit: MemoryLimitOption.Default(), CallTimeout: CallTimeoutOption.Default()}
	}
	m, err := Load(name, wasm, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func strings_(t *testing.T, mem memory.Allocator, vals ...any) functions.Vec {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
		} else {
			b.Append(v.(string))
		}
	}
	return functions.ArrayVec(types.T{Kind: types.String}, b.NewArray())
}

func int64s(mem memory.Allocator, vals ...any) functions.Vec {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
		} else {
			b.Append(int64(v.(int)))
		}
	}
	return functions.ArrayVec(types.T{Kind: types.BigInt}, b.NewArray())
}

func show(v functions.Vec, n int) string {
	var out []string
	for i := 0; i < n; i++ {
		x := v.ValueAt(i)
		if x == nil {
			out = append(out, "NULL")
		} else {
			out = append(out, fmt.Sprint(x))
		}
	}
	return strings.Join(out, " ")
}

func TestSignatures(t *testing.T) {
	for name, want := range map[string]string{
		"count_char": "(STRING, STRING) RETURNS BIGINT CALLED ON NULL INPUT",
		"str_len":    "(STRING) RETURNS BIGINT RETURNS NULL ON NULL INPUT",
		"trap":       "(BIGINT) RETURNS BIGINT RETURNS NULL ON NULL INPUT",
	} {
		if got := load(t, name, Options{}).Signature().String(); got != want {
			t.Errorf("%s: signature %q, want %q", name, got, want)
		}
	}
}

func TestCall(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	m := load(t, "count_char", Options{})
	inst, err := m.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release(inst)
	s := strings_(t, mem, "abcc", nil, "", "ccc", "héc")
	defer s.Release()
	// a batch sliced from a larger one has offsets that do not start at 0
	sl := functions.ArrayVec(s.Type, array.NewSlice(s.Array, 1, 5))
	defer sl.Release()
	for _, tc := range []struct {
		args []functions.Vec
		n    int
		want string
	}{
		{[]functions.Vec{s, functions.ConstVec(s.Type, "c")}, 5, "2 0 0 3 1"},
		{[]functions.Vec{sl, functions.ConstVec(s.Type, "c")}, 4, "0 0 3 1"},
		{[]functions.Vec{s, functions.ConstVec(s.Type, "é")}, 5, "0 0 0 0 1"},
	} {
		out, err := inst.Call(mem, tc.args, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		if got := show(out, tc.n); got != tc.want {
			t.Errorf("count_char: %s, want %s", got, tc.want)
		}
		out.Release()
	}

	// not called on NULL: str_len of NULL is NULL, and the other rows are right
	sm := load(t, "str_len", Options{})
	si, err := sm.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer sm.Release(si)
	out, err := si.Call(mem, []functions.Vec{s}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := show(out, 5), "4 NULL 0 3 3"; got != want {
		t.Errorf("str_len: %s, want %s", got, want)
	}
	out.Release()
}

// TestTrap: a panic of the function names the function, the row and its
// arguments; a NULL row is never sent to a function not called on NULL
// (trap's 100 / x would fail on it).
func TestTrap(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	m := load(t, "trap", Options{})
	inst, err := m.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release(inst)
	x := int64s(mem, 5, nil, 50)
	out, err := inst.Call(mem, []functions.Vec{x}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := show(out, 3), "20 NULL 2"; got != want {
		t.Errorf("trap: %s, want %s", got, want)
	}
	out.Release()
	x.Release()
	x = int64s(mem, 5, nil, 0, 1)
	defer x.Release()
	_, err = inst.Call(mem, []functions.Vec{x}, 4)
	if err == nil || !errors.Is(err, ErrCall) {
		t.Fatalf("got %v, want an error", err)
	}
	want := "function trap at row 3 of the batch (0): runtime error: integer divide by zero"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("got %q, want it to hold %q", err, want)
	}
	// the instance goes on
	out, err = inst.Call(mem, []functions.Vec{functions.ConstVec(x.Type, int64(4))}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := show(out, 2), "25 25"; got != want {
		t.Errorf("trap: %s, want %s", got, want)
	}
	out.Release()
}

// TestCrash: a module that dies (the Go runtime's fatal error) is an error
// naming the function, the row and the runtime's message.
func TestCrash(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	m := load(t, "crash", Options{})
	inst, err := m.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release(inst)
	x := int64s(mem, 1, -1)
	defer x.Release()
	_, err = inst.Call(mem, []functions.Vec{x}, 2)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"function crash at row 2 of the batch", "stack overflow"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("got %q, want it to hold %q", err, want)
		}
	}
	if _, err := inst.Call(mem, []functions.Vec{x}, 1); err == nil || !strings.Contains(err.Error(), "function crash") {
		t.Errorf("a dead instance called again: %v", err)
	}
}

// TestTimeout: a call that never returns is stopped at its time limit,
// with an error naming the function.
func TestTimeout(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	m := load(t, "loop", Options{MemoryLimit: MemoryLimitOption.Default(), CallTimeout: 100 * time.Millisecond})
	inst, err := m.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release(inst)
	x := int64s(mem, 0, 3)
	defer x.Release()
	_, err = inst.Call(mem, []functions.Vec{x}, 2)
	if err == nil || !strings.Contains(err.Error(), "function loop: a call ran past its 'call-timeout'") {
		t.Fatalf("got %v", err)
	}
}

// TestMemoryLimit: a module whose memory the limit does not hold does not
// start, with an error naming the function.
func TestMemoryLimit(t *testing.T) {
	dir, err := testenv.UDFModules()
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(filepath.Join(dir, "str_len.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Load("small", wasm, Options{MemoryLimit: 1 << 20, CallTimeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "function small: the module's memory at its start is more than its 'memory-limit' (1 mb)") {
		t.Fatalf("got %v", err)
	}
}

// TestPool: instances go back to the module's pool and are taken again; an
// instance a failed call stopped is dropped, not pooled.
func TestPool(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	m := load(t, "trap", Options{})
	a, err := m.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Fatal("one instance given twice")
	}
	m.Release(a)
	if c, _ := m.Acquire(); c != a {
		t.Error("a released instance was not taken again")
	}
	// b traps in the runtime (not a panic the module recovers) and is dropped.
	crash := load(t, "crash", Options{})
	d, err := crash.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	x := int64s(mem, -1)
	defer x.Release()
	if _, err := d.Call(mem, []functions.Vec{x}, 1); err == nil {
		t.Fatal("no error")
	}
	crash.Release(d)
	if e, _ := crash.Acquire(); e == d {
		t.Error("a stopped instance was pooled")
	}
	m.Release(b)
}
