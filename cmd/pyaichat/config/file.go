package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// MaxConfigBytes bounds the config file: a few dozen lines in practice.
const MaxConfigBytes = 1 << 20

// readFile reads the config file at path, which must be a regular
// file (openRegular) of at most MaxConfigBytes: a symlink to /dev/zero
// would otherwise fill memory. A missing file is fs.ErrNotExist.
func readFile(path string) ([]byte, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > MaxConfigBytes {
		return nil, fmt.Errorf("%d bytes, over the %d-byte limit of a config file", size, MaxConfigBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxConfigBytes {
		return nil, errors.New("grew past the 1 MiB limit of a config file while it was read")
	}
	return data, nil
}

// openRegular opens a file pyaichat reads at start (its config, the
// instructions), with its size, if it is a regular file: a FIFO would
// hang start-up until something wrote to it. It is opened without
// blocking, so a FIFO is refused at once.
func openRegular(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file (%s)", fileKind(st.Mode()))
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// fileKind names what a non-regular file is, for the error.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return m.Type().String()
}

var modelLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\s*model\s*=.*$`) })

// SaveModel sets model = "name" in the config file at path, leaving its
// other lines (comments included) as they are, or creates it (0600).
func SaveModel(path, name string) error {
	if path == "" {
		return fmt.Errorf("no config directory (set XDG_CONFIG_HOME or HOME)")
	}
	old, err := readFile(path)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("%s: %w", path, err)
	}
	line := "model = " + strconv.Quote(name)
	var next string
	switch {
	case modelLine().Match(old):
		next = modelLine().ReplaceAllLiteralString(string(old), line)
	case len(old) > 0 && !strings.HasSuffix(string(old), "\n"):
		next = string(old) + "\n" + line + "\n"
	default:
		next = string(old) + line + "\n"
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(next), 0o600)
}
