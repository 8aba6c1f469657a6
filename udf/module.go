package udf

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/streamsql/streamsql/internal/config"
)

// ABIVersion is the version of the ABI (docs/UDF.md) the engine speaks; a
// module declares its own with the streamsql_udf_abi export.
const ABIVersion = 1

// The exports of ABI version 1.
const (
	exportABI       = "streamsql_udf_abi"
	exportSignature = "streamsql_udf_signature"
	exportState     = "streamsql_udf_state"
	exportBuffer    = "streamsql_udf_buffer"
	exportCall      = "streamsql_udf_call"
)

// cache compiles a module's code once per process, whatever the runtime
// (each function has its own, for its memory limit).
var cache = wazero.NewCompilationCache()

// Module is one compiled function. It is safe for concurrent use; its
// Instances are not.
type Module struct {
	name string
	sig  Signature
	opts Options
	rt   wazero.Runtime
	cm   wazero.CompiledModule

	mu   sync.Mutex
	idle []*Instance

	// failedRows counts the rows whose call failed and that
	// 'ignore-errors' made NULL.
	failedRows atomic.Int64
}

// FailedRows is the number of rows whose call failed and that
// 'ignore-errors' made NULL, in this process.
func (m *Module) FailedRows() int64 { return m.failedRows.Load() }

// Name is the function's name, as errors give it.
func (m *Module) Name() string { return m.name }

// Signature is what the module declares.
func (m *Module) Signature() Signature { return m.sig }

// Options are the function's sandbox limits.
func (m *Module) Options() Options { return m.opts }

type loadKey struct {
	name string
	sum  [sha256.Size]byte
	opts Options
}

var (
	loadMu sync.Mutex
	loaded = map[loadKey]*Module{}
)

// Load returns the module of function name compiled from wasm with opts:
// compiled the first time, the same Module after (a process compiles each
// module once). An error names the function; it wraps ErrBadModule when
// wasm is not a function of ABI version 1.
func Load(name string, wasm []byte, opts Options) (*Module, error) {
	k := loadKey{name: name, sum: sha256.Sum256(wasm), opts: opts}
	loadMu.Lock()
	defer loadMu.Unlock()
	if m := loaded[k]; m != nil {
		return m, nil
	}
	m, err := compile(name, wasm, opts)
	if err != nil {
		return nil, err
	}
	loaded[k] = m
	return m, nil
}

func compile(name string, wasm []byte, opts Options) (*Module, error) {
	ctx := context.Background()
	cfg := wazero.NewRuntimeConfig().
		WithCompilationCache(cache).
		WithMemoryLimitPages(opts.pages()).
		WithCloseOnContextDone(opts.CallTimeout > 0)
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	fail := func(err error) (*Module, error) {
		rt.Close(ctx)
		return nil, err
	}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return fail(fmt.Errorf("function %s: %w", name, err))
	}
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil && strings.Contains(err.Error(), "over limit") {
		return fail(fmt.Errorf("function %s: the module's memory at its start is more than its 'memory-limit' (%s): %v", name,
			config.FormatBytes(opts.MemoryLimit), err))
	}
	if err != nil {
		return fail(fmt.Errorf("function %s: %w: %v", name, ErrBadModule, err))
	}
	exports := cm.ExportedFunctions()
	for _, e := range []string{exportABI, exportSignature, exportState, exportBuffer, exportCall} {
		if _, ok := exports[e]; !ok {
			return fail(fmt.Errorf("function %s: %w: the module does not export %s (a module built with the Go package sdk/udf, "+
				"GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared, exports it; docs/UDF.md)", name, ErrBadModule, e))
		}
	}
	m := &Module{name: name, opts: opts, rt: rt, cm: cm}
	inst, err := m.instantiate()
	if err != nil {
		return fail(err)
	}
	abi, err := inst.call0(ctx, exportABI)
	if err != nil {
		return fail(err)
	}
	if int32(abi) != ABIVersion {
		return fail(fmt.Errorf("function %s: %w: the module speaks ABI version %d, the engine %d", name, ErrBadModule, int32(abi), ABIVersion))
	}
	packed, err := inst.call0(ctx, exportSignature)
	if err != nil {
		return fail(err)
	}
	text, ok := inst.mod.Memory().Read(uint32(packed>>32), uint32(packed))
	if !ok {
		return fail(fmt.Errorf("function %s: %w: its signature is outside its memory", name, ErrBadModule))
	}
	if m.sig, err = ParseSignature(string(text)); err != nil {
		return fail(fmt.Errorf("function %s: %w", name, err))
	}
	inst.init()
	m.idle = append(m.idle, inst)
	return m, nil
}

// Acquire returns an instance for one goroutine's use: an idle one, or a
// new one.
func (m *Module) Acquire() (*Instance, error) {
	m.mu.Lock()
	if n := len(m.idle); n > 0 {
		inst := m.idle[n-1]
		m.idle = m.idle[:n-1]
		m.mu.Unlock()
		return inst, nil
	}
	m.mu.Unlock()
	inst, err := m.instantiate()
	if err != nil {
		return nil, err
	}
	inst.init()
	return inst, nil
}

// Release gives inst back: kept idle for the next Acquire (as many as
// there are CPUs), else closed. An instance a failed call closed is
// dropped.
func (m *Module) Release(inst *Instance) {
	if inst == nil {
		return
	}
	if inst.dead {
		inst.Close()
		return
	}
	m.mu.Lock()
	if len(m.idle) < runtime.GOMAXPROCS(0) {
		m.idle = append(m.idle, inst)
		m.mu.Unlock()
		return
	}
	m.mu.Unlock()
	inst.Close()
}

func (m *Module) instantiate() (*Instance, error) {
	inst := &Instance{m: m, stderr: &stderr{}}
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions("_initialize").
		WithStderr(inst.stderr)
	mod, err := m.rt.InstantiateModule(context.Background(), m.cm, cfg)
	if err != nil {
		return nil, m.callError(inst, fmt.Errorf("starting the module: %w", err), -1)
	}
	inst.mod = mod
	inst.call = mod.ExportedFunction(exportCall)
	inst.buffer = mod.ExportedFunction(exportBuffer)
	return inst, nil
}

// callError is the error of a failed call, naming the function and, when
// row >= 0, the row of the batch.
func (m *Module) callError(inst *Instance, err error, row int) error {
	where := ""
	if row >= 0 {
		where = fmt.Sprintf(" at row %d of the batch", row+1)
	}
	msg, _, _ := strings.Cut(err.Error(), "\n") // a trap's first line, not its stack
	if tail := inst.stderr.last(); tail != "" {
		msg += ": " + tail
	}
	return fmt.Errorf("%w: function %s%s: %s", ErrCall, m.name, where, msg)
}

func (i *Instance) call0(ctx context.Context, name string) (uint64, error) {
	res, err := i.mod.ExportedFunction(name).Call(ctx)
	if err != nil {
		return 0, i.m.callError(i, err, -1)
	}
	if len(res) != 1 {
		return 0, fmt.Errorf("function %s: %w: %s returns %d values", i.m.name, ErrBadModule, name, len(res))
	}
	return res[0], nil
}

// Close frees the module's instances and its runtime. It is for tests and
// a process that is done with the function.
func (m *Module) Close() {
	m.mu.Lock()
	m.idle = nil
	m.mu.Unlock()
	m.rt.Close(context.Background())
}

// stderr keeps the first bytes a module wrote to its standard error since
// it was last read (the Go runtime's message when it crashes).
type stderr struct {
	mu  sync.Mutex
	buf []byte
}

const stderrKeep = 2048

func (s *stderr) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if room := stderrKeep - len(s.buf); room > 0 {
		s.buf = append(s.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// last returns the line of what was written since the previous call that
// says why the module stopped (a Go crash's "fatal error: ..." or "panic:
// ...", else the first line), and forgets it all.
func (s *stderr) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	text := string(s.buf)
	s.buf = s.buf[:0]
	first := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "fatal error:") || strings.HasPrefix(line, "panic:") {
			return line
		}
		if first == "" {
			first = line
		}
	}
	return first
}

// MaxModuleSize bounds the file of a module (a Go module is a few MiB).
const MaxModuleSize = 256 << 20

// ReadModule reads the module file at path: a regular file of at most
// MaxModuleSize bytes (not a device or a pipe that never ends).
func ReadModule(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > MaxModuleSize {
		return nil, fmt.Errorf("%s has %d bytes, more than a module may have (%d MiB)", path, fi.Size(), MaxModuleSize>>20)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxModuleSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxModuleSize {
		return nil, fmt.Errorf("%s has more bytes than a module may have (%d MiB)", path, MaxModuleSize>>20)
	}
	return b, nil
}
