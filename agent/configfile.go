package agent

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// MaxConfigBytes bounds the config file: a few dozen lines in practice.
const MaxConfigBytes = 1 << 20

// readConfigFile reads the config file at path, which must be a regular
// file of at most MaxConfigBytes: a FIFO would hang start-up until
// something wrote to it, and a symlink to /dev/zero would fill memory.
// It is opened without blocking, so a FIFO is refused at once; a missing
// file is fs.ErrNotExist.
func readConfigFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fileKind(st.Mode()))
	}
	if st.Size() > MaxConfigBytes {
		return nil, fmt.Errorf("%d bytes, over the %d-byte limit of a config file", st.Size(), MaxConfigBytes)
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
