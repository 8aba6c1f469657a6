package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

var udfModules struct {
	once sync.Once
	dir  string
	err  error
}

// UDFModules builds the example functions of examples/udf (count_char,
// str_len, loop, trap, crash...) with examples/udf/build.sh, once per test
// binary, and returns the directory of their .wasm files. The Go build
// cache is the user's, so a warm one makes it quick. RemoveUDFModules, in
// a TestMain, removes the directory.
func UDFModules() (string, error) {
	udfModules.once.Do(func() {
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			udfModules.err = fmt.Errorf("go env GOMOD: %v", err)
			return
		}
		mod := strings.TrimSpace(string(out))
		if mod == "" || mod == os.DevNull {
			udfModules.err = errors.New("not inside the streamsql module")
			return
		}
		dir, err := os.MkdirTemp("", "streamsql-udf-")
		if err != nil {
			udfModules.err = err
			return
		}
		build := exec.Command("sh", filepath.Join(filepath.Dir(mod), "examples", "udf", "build.sh"), dir)
		if out, err := build.CombinedOutput(); err != nil {
			os.RemoveAll(dir)
			udfModules.err = fmt.Errorf("examples/udf/build.sh: %v\n%s", err, out)
			return
		}
		udfModules.dir = dir
	})
	return udfModules.dir, udfModules.err
}

// RemoveUDFModules removes what UDFModules built, if anything.
func RemoveUDFModules() {
	if udfModules.dir != "" {
		os.RemoveAll(udfModules.dir)
	}
}
