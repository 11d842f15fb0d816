package serve

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// Command makes the command a new session runs; it is not started yet.
// serve's is pyaichat itself with serve's arguments; tests use others.
type Command func() *exec.Cmd

// shell is one child program in its own PTY. It outlives the
// connections that show it: it ends when the child exits, when a client
// closes it, or when no client has been attached for the idle timeout.
type shell struct {
	id        string
	ptmx      *os.File
	cmd       *exec.Cmd
	out       *output
	uploadDir string
	done      chan struct{} // closed once the child has exited and been reaped

	mu        sync.Mutex
	exitCode  int
	paste     bool   // the child asked for bracketed paste (ESC[?2004h)
	tail      []byte // the last bytes of output, for a mode sequence split across reads
	attached  int
	idle      *time.Timer
	closeOnce sync.Once
	// uploaded is the bytes of uploads stored or being stored, against
	// the upload limit; uploadsShut, set as the child's end is handled,
	// refuses uploads from then on, so none outlives the session.
	uploaded    int64
	uploadsShut bool
	// endReason says why the server ended the session, if it did (its
	// exit message carries it); empty when the child exited by itself.
	endReason string
	// cols and rows are the terminal's size, which every page showing
	// the session is told of (resized), so that only the page last used
	// sets it.
	cols, rows uint16
}

var (
	pasteOn  = []byte("\x1b[?2004h")
	pasteOff = []byte("\x1b[?2004l")
)

// startShell starts cmd in a new PTY of the given size.
func startShell(cmd *exec.Cmd, cols, rows uint16, replay int, uploadRoot string) (*shell, error) {
	id, err := randomHex(8)
	if err != nil {
		return nil, err
	}
	started, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: cols, Rows: rows})
	if err != nil {
		return nil, fmt.Errorf("starting %s in a PTY: %w", cmd.Path, err)
	}
	ptmx, err := pollable(started)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, err
	}
	s := &shell{
		id: id, ptmx: ptmx, cmd: cmd, out: newOutput(replay),
		uploadDir: filepath.Join(uploadRoot, id),
		done:      make(chan struct{}),
		cols:      cols, rows: rows,
	}
	go s.pump()
	return s, nil
}

// pollable makes the PTY's descriptor non-blocking, so that reads wait in
// Go's poller and can end at a deadline. (pty.StartWithSize hands it back
// blocking: it took the descriptor with Fd to size the window.)
func pollable(f *os.File) (*os.File, error) {
	defer f.Close()
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("duplicating the PTY: %w", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("making the PTY non-blocking: %w", err)
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// drainGrace is how long output is still read after the child has exited.
// The PTY reports its end only once every process holding it has closed
// it, and one the child left running (nohup, a daemon) may never do so.
const drainGrace = 500 * time.Millisecond

// pump copies the PTY's output into the replay buffer until the child
// has gone, then reaps it.
func (s *shell) pump() {
	reaped := make(chan struct{})
	go func() {
		s.cmd.Wait() // its status is in ProcessState
		close(reaped)
		s.ptmx.SetReadDeadline(time.Now().Add(drainGrace))
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := s.ptmx.Read(buf)
		if n > 0 {
			s.notePasteMode(buf[:n])
			s.out.write(buf[:n])
		}
		if err != nil { // EIO once every process closed the PTY, or the drain deadline
			break
		}
	}
	<-reaped
	s.mu.Lock()
	s.exitCode = exitStatus(s.cmd.ProcessState)
	s.uploadsShut = true
	s.mu.Unlock()
	s.ptmx.Close()
	os.RemoveAll(s.uploadDir)
	close(s.done)
	s.out.end()
}

// exitStatus is the child's status as a shell reports it: 128+N for a
// death by signal N.
func exitStatus(st *os.ProcessState) int {
	if st == nil {
		return -1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// notePasteMode follows the child's bracketed-paste mode, so that
// injected paths are pasted the way a terminal would paste them.
func (s *shell) notePasteMode(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := len(pasteOn) - 1
	on, off := bytes.LastIndex(p, pasteOn), bytes.LastIndex(p, pasteOff)
	if on < 0 && off < 0 { // perhaps one split between the last read and this
		joint := append(append([]byte(nil), s.tail...), p[:min(len(p), keep)]...)
		on, off = bytes.LastIndex(joint, pasteOn), bytes.LastIndex(joint, pasteOff)
	}
	if on >= 0 || off >= 0 {
		s.paste = on > off
	}
	s.tail = append(s.tail, p[max(0, len(p)-keep):]...)
	s.tail = s.tail[max(0, len(s.tail)-keep):]
}

// exited says whether the child is gone, and its status.
func (s *shell) exited() (bool, int) {
	select {
	case <-s.done:
		s.mu.Lock()
		defer s.mu.Unlock()
		return true, s.exitCode
	default:
		return false, 0
	}
}

// input writes keys to the child.
func (s *shell) input(p []byte) error {
	if done, _ := s.exited(); done {
		return errors.New("the session has exited")
	}
	_, err := s.ptmx.Write(p)
	return err
}

// pasteText writes text as a terminal pastes it: inside bracketed-paste
// markers when the child asked for them.
func (s *shell) pasteText(text string) error {
	s.mu.Lock()
	bracketed := s.paste
	s.mu.Unlock()
	if bracketed {
		text = "\x1b[200~" + text + "\x1b[201~"
	}
	return s.input([]byte(text))
}

func (s *shell) resize(cols, rows uint16) error {
	if done, _ := s.exited(); done {
		return errors.New("the session has exited")
	}
	// Not pty.Setsize: it takes the descriptor with Fd, which would make
	// it blocking again.
	rc, err := s.ptmx.SyscallConn()
	if err != nil {
		return err
	}
	var ioErr error
	err = rc.Control(func(fd uintptr) {
		ioErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols})
	})
	if err != nil {
		return err
	}
	if ioErr != nil {
		return ioErr
	}
	s.mu.Lock()
	s.cols, s.rows = cols, rows
	s.mu.Unlock()
	s.out.poke() // the pumps tell their pages
	return nil
}

// size is the terminal's size.
func (s *shell) size() (cols, rows uint16) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cols, s.rows
}

// terminate ends the child as closing a terminal window does: SIGHUP to
// its process group, then SIGKILL if it is still there after grace.
func (s *shell) terminate(grace time.Duration) {
	s.closeOnce.Do(func() {
		if done, _ := s.exited(); done {
			return // reaped: its pid may be another process's by now
		}
		pid := s.cmd.Process.Pid
		syscall.Kill(-pid, syscall.SIGHUP)
		go func() {
			select {
			case <-s.done:
			case <-time.After(grace):
				syscall.Kill(-pid, syscall.SIGKILL)
			}
		}()
	})
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("reading random bytes: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func (s *shell) info() sessionInfo {
	exited, code := s.exited()
	s.mu.Lock()
	defer s.mu.Unlock()
	return sessionInfo{ID: s.id, Attached: s.attached, Exited: exited, Code: code}
}

// endedBecause records why the server ends the session, unless its child
// has exited already (that exit is what ended it), and returns the
// reason to remember: why, or the child's exit status.
func (s *shell) endedBecause(why string) string {
	if done, code := s.exited(); done {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.endReason != "" {
			return s.endReason
		}
		return fmt.Sprintf("pyaichat exited with status %d", code)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.endReason == "" {
		s.endReason = why
	}
	return s.endReason
}

// exitReason is why the server ended the session, if it did.
func (s *shell) exitReason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endReason
}
