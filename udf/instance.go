package udf

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/types"
)

// Instance is one instantiated module: its memory, its exports, and the
// scratch of its calls. One goroutine uses it at a time.
type Instance struct {
	m      *Module
	mod    api.Module
	call   api.Function
	buffer api.Function
	stderr *stderr

	statePtr uint32 // the module's fixed state descriptor
	bufPtr   uint32 // the module's input buffer
	bufCap   uint32
	stack    [2]uint64
	sel      []int32 // the rows sent, when not every row is
	dead     bool    // a failed call closed the module
}

// The words of the state descriptor (docs/UDF.md).
const (
	stStatus = iota
	stRow
	stValid
	stValues
	stValuesLen
	stOffsets
	stErr
	stErrLen
	stWords
)

func (i *Instance) init() {
	if res, err := i.mod.ExportedFunction(exportState).Call(context.Background()); err == nil && len(res) == 1 {
		i.statePtr = uint32(res[0])
	}
}

// Close frees the instance.
func (i *Instance) Close() {
	i.dead = true
	i.mod.Close(context.Background())
}

func width(k types.Kind) int {
	switch k {
	case types.BigInt, types.Double:
		return 8
	case types.Int:
		return 4
	case types.Boolean:
		return 1
	}
	return 0 // STRING: its bytes
}

func align8(n int) int { return (n + 7) &^ 7 }

func isNull(v functions.Vec, r int) bool {
	if v.Const {
		return v.Value == nil
	}
	return v.Array.IsNull(r)
}

// Call computes the function over n rows of args (of the signature's
// argument types) and returns a column of n results that the caller
// releases. A row with a NULL argument of a function not called on NULL
// is not sent: its result is NULL.
func (i *Instance) Call(mem memory.Allocator, args []functions.Vec, n int) (functions.Vec, error) {
	sig := &i.m.sig
	if i.dead {
		return functions.Vec{}, fmt.Errorf("%w: function %s: its instance was stopped by an earlier failure", ErrCall, i.m.name)
	}
	if len(args) != len(sig.Args) {
		return functions.Vec{}, fmt.Errorf("function %s takes %d arguments, called with %d", i.m.name, len(sig.Args), len(args))
	}
	// Which rows go to the module.
	i.sel = i.sel[:0]
	all := true
	if !sig.CalledOnNull {
		for _, a := range args {
			if a.IsNull() {
				return functions.ConstVec(sig.Ret.Nullable(), nil), nil
			}
			if !a.Const && a.Array.NullN() > 0 {
				all = false
			}
		}
		if !all {
			for r := 0; r < n; r++ {
				ok := true
				for _, a := range args {
					if isNull(a, r) {
						ok = false
						break
					}
				}
				if ok {
					i.sel = append(i.sel, int32(r))
				}
			}
		}
	}
	for {
		m := n
		if !all {
			m = len(i.sel)
		}
		row := func(k int) int { // the batch's row of the k-th row sent
			if all {
				return k
			}
			return int(i.sel[k])
		}
		if m == 0 {
			return i.result(mem, n, 0, row, all)
		}
		failed, timeout, err := i.send(args, m, all, row)
		if err == nil {
			return i.result(mem, n, m, row, all)
		}
		if !i.m.opts.IgnoreErrors || failed < 0 || timeout {
			return functions.Vec{}, err
		}
		// 'ignore-errors': the failing row's result is NULL; the batch
		// goes again without it (on a new instance if this one stopped).
		i.m.failedRows.Add(1)
		if i.dead {
			if err := i.restart(); err != nil {
				return functions.Vec{}, err
			}
		}
		if all {
			i.sel = i.sel[:0]
			for r := 0; r < n; r++ {
				i.sel = append(i.sel, int32(r))
			}
			all = false
		}
		for k, r := range i.sel {
			if int(r) == failed {
				i.sel = append(i.sel[:k], i.sel[k+1:]...)
				break
			}
		}
	}
}

// send lays out the m rows row(0..m-1) of args in the module's buffer and
// calls the module. On failure it returns the batch's row that failed (-1
// when unknown) and whether the call ran out of time.
func (i *Instance) send(args []functions.Vec, m int, all bool, row func(int) int) (failed int, timeout bool, err error) {
	sig := &i.m.sig
	// The layout: the header, then each argument's validity, values and
	// offsets, 8-aligned.
	size := 16 * len(args)
	for k, a := range args {
		if sig.CalledOnNull {
			size = align8(size) + m
		}
		if w := width(sig.Args[k].Kind); w > 0 {
			size = align8(size) + w*m
		} else {
			size = align8(size) + 4*(m+1)
			size = align8(size) + stringBytes(a, m, row)
		}
	}
	if uint32(size) > i.bufCap || i.bufPtr == 0 {
		i.stack[0] = uint64(size)
		if err := i.buffer.CallWithStack(context.Background(), i.stack[:]); err != nil {
			return -1, false, i.fail(err, -1)
		}
		i.bufPtr, i.bufCap = uint32(i.stack[0]), uint32(size)
	}
	buf, ok := i.mod.Memory().Read(i.bufPtr, uint32(size))
	if !ok {
		return -1, false, fmt.Errorf("%w: function %s: its buffer of %d bytes is outside its memory", ErrBadModule, i.m.name, size)
	}
	at := 16 * len(args)
	for k, a := range args {
		hdr := buf[16*k : 16*k+16]
		clear(hdr)
		if sig.CalledOnNull {
			at = align8(at)
			binary.LittleEndian.PutUint32(hdr[0:], i.bufPtr+uint32(at))
			v := buf[at : at+m]
			for j := range v {
				v[j] = 1
				if isNull(a, row(j)) {
					v[j] = 0
				}
			}
			at += m
		}
		at = align8(at)
		if w := width(sig.Args[k].Kind); w > 0 {
			binary.LittleEndian.PutUint32(hdr[4:], i.bufPtr+uint32(at))
			binary.LittleEndian.PutUint32(hdr[8:], uint32(w*m))
			writeFixed(buf[at:at+w*m], a, sig.Args[k].Kind, m, all, i.sel)
			at += w * m
			continue
		}
		offs := buf[at : at+4*(m+1)]
		binary.LittleEndian.PutUint32(hdr[12:], i.bufPtr+uint32(at))
		at = align8(at + 4*(m+1))
		nb := writeStrings(offs, buf[at:size], a, m, row)
		binary.LittleEndian.PutUint32(hdr[4:], i.bufPtr+uint32(at))
		binary.LittleEndian.PutUint32(hdr[8:], uint32(nb))
		at += nb
	}
	ctx, cancel := context.Background(), context.CancelFunc(nil)
	if i.m.opts.CallTimeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, i.m.opts.CallTimeout)
	}
	i.stack[0], i.stack[1] = uint64(i.bufPtr), uint64(m)
	err = i.call.CallWithStack(ctx, i.stack[:])
	if cancel != nil {
		cancel()
	}
	if err != nil {
		r := -1
		if st, ok := i.mod.Memory().ReadUint32Le(i.statePtr + 4*stRow); ok && int(st) < m {
			r = row(int(st))
		}
		var exit *sys.ExitError
		timeout = errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeDeadlineExceeded
		return r, timeout, i.fail(err, r)
	}
	if uint32(i.stack[0]) != 0 {
		st, _ := i.mod.Memory().Read(i.statePtr, 4*stWords)
		r := row(min(int(binary.LittleEndian.Uint32(st[4*stRow:])), m-1))
		msg, _ := i.mod.Memory().Read(binary.LittleEndian.Uint32(st[4*stErr:]), binary.LittleEndian.Uint32(st[4*stErrLen:]))
		return r, false, fmt.Errorf("%w: function %s at row %d of the batch%s: %s", ErrCall, i.m.name, r+1,
			argsText(args, r), string(msg))
	}
	return -1, false, nil
}

// restart replaces the instance's stopped module by a new one.
func (i *Instance) restart() error {
	fresh, err := i.m.instantiate()
	if err != nil {
		return err
	}
	fresh.init()
	i.mod, i.call, i.buffer, i.statePtr, i.stderr = fresh.mod, fresh.call, fresh.buffer, fresh.statePtr, fresh.stderr
	i.bufPtr, i.bufCap, i.dead = 0, 0, false
	return nil
}

// argsText is the arguments of row r, for an error.
func argsText(args []functions.Vec, r int) string {
	var b strings.Builder
	b.WriteString(" (")
	for k, a := range args {
		if k > 0 {
			b.WriteString(", ")
		}
		v := a.ValueAt(r)
		if v == nil {
			b.WriteString("NULL")
			continue
		}
		s := types.Format(a.Type, v)
		if a.Type.Kind == types.String {
			if len(s) > 40 {
				s = s[:40] + "..."
			}
			s = "'" + s + "'"
		}
		b.WriteString(s)
	}
	b.WriteString(")")
	return b.String()
}

// fail is the error of a call that did not return: a trap, an exit of the
// module (a Go runtime's fatal error), the time limit.
func (i *Instance) fail(err error, r int) error {
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		i.dead = true
		switch exit.ExitCode() {
		case sys.ExitCodeDeadlineExceeded:
			return fmt.Errorf("%w: function %s: a call ran past its 'call-timeout' (%s) and was stopped", ErrCall, i.m.name,
				formatDuration(i.m.opts))
		case sys.ExitCodeContextCanceled:
			return fmt.Errorf("%w: function %s: the call was cancelled", ErrCall, i.m.name)
		}
		err = fmt.Errorf("the module exited with code %d", exit.ExitCode())
	} else {
		// A trap leaves the module's state undefined: it is not called again.
		i.dead = true
		i.mod.Close(context.Background())
	}
	e := i.m.callError(i, err, r)
	if strings.Contains(e.Error(), "out of memory") {
		e = fmt.Errorf("%w (its 'memory-limit' is %d MiB)", e, i.m.opts.MemoryLimit>>20)
	}
	return e
}

func stringBytes(a functions.Vec, m int, row func(int) int) int {
	if a.Const {
		s, _ := a.Value.(string)
		return len(s) * m
	}
	s := a.Array.(*array.String)
	if m == a.Array.Len() && row(m-1) == m-1 {
		return len(s.ValueBytes())
	}
	total := 0
	for k := 0; k < m; k++ {
		total += s.ValueLen(row(k))
	}
	return total
}

// writeStrings writes m rows of a as offsets and bytes, and returns how many
// bytes.
func writeStrings(offs, data []byte, a functions.Vec, m int, row func(int) int) int {
	if a.Const {
		s, _ := a.Value.(string)
		at := 0
		for k := 0; k < m; k++ {
			binary.LittleEndian.PutUint32(offs[4*k:], uint32(at))
			at += copy(data[at:], s)
		}
		binary.LittleEndian.PutUint32(offs[4*m:], uint32(at))
		return at
	}
	s := a.Array.(*array.String)
	if m == a.Array.Len() && row(m-1) == m-1 {
		src := s.ValueOffsets()
		base := src[0]
		dst := unsafe.Slice((*int32)(unsafe.Pointer(&offs[0])), m+1)
		for k, o := range src {
			dst[k] = o - base
		}
		return copy(data, s.ValueBytes())
	}
	at := 0
	for k := 0; k < m; k++ {
		binary.LittleEndian.PutUint32(offs[4*k:], uint32(at))
		at += copy(data[at:], s.Value(row(k)))
	}
	binary.LittleEndian.PutUint32(offs[4*m:], uint32(at))
	return at
}

// writeFixed writes m values of a fixed-width type.
func writeFixed(dst []byte, a functions.Vec, k types.Kind, m int, all bool, sel []int32) {
	if a.Const {
		var w [8]byte
		switch v := a.Value.(type) {
		case int64:
			binary.LittleEndian.PutUint64(w[:], uint64(v))
		case int32:
			binary.LittleEndian.PutUint32(w[:], uint32(v))
		case float64:
			binary.LittleEndian.PutUint64(w[:], math.Float64bits(v))
		case bool:
			if v {
				w[0] = 1
			}
		}
		n := width(k)
		for j := 0; j < m; j++ {
			copy(dst[n*j:], w[:n])
		}
		return
	}
	var src []byte
	switch x := a.Array.(type) {
	case *array.Int64:
		src = bytesOf(x.Int64Values())
	case *array.Int32:
		src = bytesOf(x.Int32Values())
	case *array.Float64:
		src = bytesOf(x.Float64Values())
	case *array.Boolean:
		for j := 0; j < m; j++ {
			r := j
			if !all {
				r = int(sel[j])
			}
			dst[j] = 0
			if x.Value(r) {
				dst[j] = 1
			}
		}
		return
	}
	w := width(k)
	if all {
		copy(dst, src[:w*m])
		return
	}
	for j, r := range sel {
		copy(dst[w*j:w*j+w], src[w*int(r):])
	}
}

func bytesOf[T int64 | int32 | float64](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// result reads the module's results of the m rows sent back into a column
// of n rows (NULL at the rows not sent).
func (i *Instance) result(mem memory.Allocator, n, m int, row func(int) int, all bool) (functions.Vec, error) {
	ret := i.m.sig.Ret
	var st []byte
	if m > 0 {
		var ok bool
		if st, ok = i.mod.Memory().Read(i.statePtr, 4*stWords); !ok {
			return functions.Vec{}, fmt.Errorf("%w: function %s: its state is outside its memory", ErrBadModule, i.m.name)
		}
	}
	word := func(w int) uint32 { return binary.LittleEndian.Uint32(st[4*w:]) }
	read := func(ptr, size uint32) ([]byte, error) {
		if size == 0 {
			return nil, nil
		}
		b, ok := i.mod.Memory().Read(ptr, size)
		if !ok {
			return nil, fmt.Errorf("%w: function %s: its result is outside its memory", ErrBadModule, i.m.name)
		}
		return b, nil
	}
	var gvalid []byte
	if m > 0 && word(stValid) != 0 {
		var err error
		if gvalid, err = read(word(stValid), uint32(m)); err != nil {
			return functions.Vec{}, err
		}
	}
	// validity: the rows sent whose result the module did not make NULL.
	nulls := n - m
	for j := range gvalid {
		if gvalid[j] == 0 {
			nulls++
		}
	}
	var valid *memory.Buffer
	if nulls > 0 {
		valid = memory.NewResizableBuffer(mem)
		valid.Resize(int(bitutil.BytesForBits(int64(n))))
		vb := valid.Bytes()
		clear(vb)
		for j := 0; j < m; j++ {
			if gvalid == nil || gvalid[j] != 0 {
				bitutil.SetBit(vb, row(j))
			}
		}
	}
	var buffers []*memory.Buffer
	if w := width(ret.Kind); w > 0 {
		vals := memory.NewResizableBuffer(mem)
		if ret.Kind == types.Boolean {
			vals.Resize(int(bitutil.BytesForBits(int64(n))))
		} else {
			vals.Resize(w * n)
		}
		vb := vals.Bytes()
		clear(vb)
		src, err := read(word(stValues), uint32(w*m))
		if err != nil && m > 0 {
			vals.Release()
			return functions.Vec{}, err
		}
		switch {
		case ret.Kind == types.Boolean:
			for j := 0; j < m; j++ {
				if src[j] != 0 {
					bitutil.SetBit(vb, row(j))
				}
			}
		case all:
			copy(vb, src)
		default:
			for j := 0; j < m; j++ {
				copy(vb[w*row(j):w*row(j)+w], src[w*j:w*j+w])
			}
		}
		buffers = []*memory.Buffer{valid, vals}
	} else {
		var goffs []byte
		var data []byte
		if m > 0 {
			var err error
			if goffs, err = read(word(stOffsets), uint32(4*(m+1))); err != nil {
				return functions.Vec{}, err
			}
			if data, err = read(word(stValues), word(stValuesLen)); err != nil {
				return functions.Vec{}, err
			}
		}
		offs := memory.NewResizableBuffer(mem)
		offs.Resize(4 * (n + 1))
		ob := unsafe.Slice((*int32)(unsafe.Pointer(&offs.Bytes()[0])), n+1)
		vals := memory.NewResizableBuffer(mem)
		vals.Resize(len(data))
		copy(vals.Bytes(), data)
		g := func(j int) int32 { return int32(binary.LittleEndian.Uint32(goffs[4*j:])) }
		if all {
			for j := 0; j <= n; j++ {
				ob[j] = g(j)
			}
		} else {
			// rows not sent are empty: each row's end is the last end.
			at, j := int32(0), 0
			ob[0] = 0
			for r := 0; r < n; r++ {
				if j < m && row(j) == r {
					at = g(j + 1)
					j++
				}
				ob[r+1] = at
			}
		}
		if int(ob[n]) > len(data) {
			offs.Release()
			vals.Release()
			if valid != nil {
				valid.Release()
			}
			return functions.Vec{}, fmt.Errorf("%w: function %s: its string results end past their bytes", ErrBadModule, i.m.name)
		}
		buffers = []*memory.Buffer{valid, offs, vals}
	}
	data := array.NewData(ret.ArrowType(), n, buffers, nil, nulls, 0)
	for _, b := range buffers {
		if b != nil {
			b.Release()
		}
	}
	arr := array.MakeFromData(data)
	data.Release()
	return functions.ArrayVec(ret.Nullable(), arr), nil
}

var _ arrow.Array

func formatDuration(o Options) string { return o.CallTimeout.String() }
