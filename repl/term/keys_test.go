package term

import (
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// fakeKeys is a terminal for the pump: each piece is what one read finds
// waiting, the way a terminal delivers input in arbitrary chunks.
type fakeKeys struct {
	pieces chan []byte
	buf    []byte
	woke   chan struct{}
}

func (f *fakeKeys) readByte(idle func()) (byte, error) {
	if len(f.buf) == 0 {
		if idle != nil {
			idle()
		}
		select {
		case piece, ok := <-f.pieces:
			if !ok {
				return 0, io.EOF
			}
			f.buf = piece
		case <-f.woke:
			return 0, errWoken
		}
	}
	b := f.buf[0]
	f.buf = f.buf[1:]
	return b, nil
}

func (f *fakeKeys) readyByte() (byte, bool) {
	if len(f.buf) == 0 {
		return 0, false
	}
	b := f.buf[0]
	f.buf = f.buf[1:]
	return b, true
}

func (f *fakeKeys) wake() {
	select {
	case f.woke <- struct{}{}:
	default:
	}
}

func feed(t *testing.T, pieces ...string) *pump {
	t.Helper()
	f := &fakeKeys{pieces: make(chan []byte, len(pieces)), woke: make(chan struct{}, 1)}
	for _, s := range pieces {
		f.pieces <- []byte(s)
	}
	close(f.pieces)
	return newPump(f)
}

// readEditor collects what the line editor would read until the pump ends,
// taking each paste when the editor meets its marker and putting up a new
// prompt after each line, as the REPL does.
func readEditor(p *pump) (typed string, pastes []string) {
	p.setEditor(true)
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := editorReader{p}.Read(buf)
		b.Write(buf[:n])
		got := string(buf[:n])
		if strings.HasSuffix(got, string(pasteRune)) {
			s, ok := p.takePaste()
			if !ok {
				return b.String() + "<marker without paste>", pastes
			}
			pastes = append(pastes, s)
		}
		if strings.HasSuffix(got, string(pasteRune)) || strings.ContainsAny(got, "\r\n\x03") {
			p.setEditor(false)
			p.setEditor(true)
		}
		if err != nil {
			return b.String(), pastes
		}
	}
}

func TestPumpLiftsPastesOutOfTypedInput(t *testing.T) {
	cases := []struct {
		name   string
		pieces []string
		typed  string
		pastes []string
	}{
		{"whole", []string{"ab\x1b[200~x = 1\ry = 2\r\x1b[201~cd"}, "ab\ue000cd", []string{"x = 1\ny = 2\n"}},
		{"markers split across reads", []string{"a\x1b[20", "0~pas", "ted\x1b[2", "01~b"}, "a\ue000b", []string{"pasted"}},
		{"tab inside a paste is text", []string{"\x1b[200~\tx\x1b[201~"}, "\ue000", []string{"\tx"}},
		{"CRLF becomes LF", []string{"\x1b[200~a\r\nb\x1b[201~"}, "\ue000", []string{"a\nb"}},
		{"lone escape is typed", []string{"\x1b", "[A"}, "\x1b[A", nil},
		{"two pastes", []string{"\x1b[200~1\x1b[201~\x1b[200~2\x1b[201~"}, "\ue000\ue000", []string{"1", "2"}},
		{"keys right after a paste wait for it", []string{"\x1b[200~u = 1\x1b[201~\rlen\r"}, "\ue000\rlen\r", []string{"u = 1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := feed(t, tc.pieces...)
			got, pastes := readEditor(p)
			if got != tc.typed {
				t.Errorf("editor read %q, want %q", got, tc.typed)
			}
			if strings.Join(pastes, "|") != strings.Join(tc.pastes, "|") {
				t.Errorf("pastes %q, want %q", pastes, tc.pastes)
			}
		})
	}
}

// The keys chzyer/readline does not know reach it as keys it does
// (editorKeys), also when the link between the terminal and pyaichat cuts
// a key's sequence across two reads.
func TestPumpRewritesKeysSplitAcrossReads(t *testing.T) {
	cases := []struct {
		name   string
		pieces []string
		typed  string
	}{
		{"in one read", []string{"ab\x1b[1;5Dc\r"}, "ab\x1bbc\r"},
		{"Ctrl-Left in two reads", []string{"ab\x1b[1;", "5Dc\r"}, "ab\x1bbc\r"},
		{"Ctrl-Right a byte at a time", []string{"\x1b", "[", "1", ";", "5", "C", "\r"}, "\x1bf\r"},
		{"Home after its ESC", []string{"ab\x1b", "[1~\r"}, "ab\x01\r"},
		{"End (rxvt) and a paste", []string{"\x1b[8", "~\x1b[200~x\x1b[201~"}, "\x05\ue000"},
		{"a sequence the map does not have", []string{"\x1b[1", ";2C\r"}, "\x1b[1;2C\r"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := readEditor(feed(t, tc.pieces...)); got != tc.typed {
				t.Errorf("editor read %q, want %q", got, tc.typed)
			}
		})
	}
}

func TestPumpLargePasteIsOneEvent(t *testing.T) {
	big := strings.Repeat("a", 20000)
	pieces := []string{"\x1b[200~"}
	for i := 0; i < len(big); i += 4096 {
		pieces = append(pieces, big[i:min(i+4096, len(big))])
	}
	pieces = append(pieces, "\x1b[201~")
	p := feed(t, pieces...)
	got, pastes := readEditor(p)
	if got != "\ue000" {
		t.Fatalf("editor read %q, want the paste marker alone", got)
	}
	if len(pastes) != 1 || pastes[0] != big {
		t.Fatalf("%d pastes, want one of %d bytes", len(pastes), len(big))
	}
}

// Keys typed ahead of the line end stay in the terminal for whoever reads
// next (input(), pdb, a child program): the pump stops reading after Enter
// and reads again only for the next prompt.
func TestPumpLeavesTypeAheadInTheTerminal(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	defer slave.Close()
	raw := &rawMode{fd: int(slave.Fd())}
	if err := raw.enter(); err != nil {
		t.Fatal(err)
	}
	tty, err := newTTYReader(slave)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.close()
	p := newPump(tty)
	if _, err := master.Write([]byte("first\rsecond\r")); err != nil {
		t.Fatal(err)
	}
	p.setEditor(true)
	buf := make([]byte, 100)
	n, err := editorReader{p}.Read(buf)
	if got := string(buf[:n]); got != "first\r" || err != nil {
		t.Fatalf("editor read %q, %v; want %q", got, err, "first\r")
	}
	// readline asks for the next key at once; it must not get one.
	asked := make(chan string, 1)
	go func() {
		n, _ := editorReader{p}.Read(buf)
		asked <- string(buf[:n])
	}()
	time.Sleep(20 * time.Millisecond)
	p.setEditor(false)
	// What user code would read now.
	rest := make([]byte, 100)
	n, err = slave.Read(rest)
	if got := string(rest[:n]); got != "second\r" || err != nil {
		t.Fatalf("the terminal kept %q, %v; want %q", got, err, "second\r")
	}
	// The next prompt gets the next key.
	p.setEditor(true)
	master.Write([]byte("x"))
	select {
	case got := <-asked:
		if got != "x" {
			t.Fatalf("the next prompt read %q, want %q", got, "x")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the next prompt read nothing")
	}
}

// Taking the prompt down stops a read under way without taking a key.
func TestSetEditorOffStopsARead(t *testing.T) {
	f := &fakeKeys{pieces: make(chan []byte, 1), woke: make(chan struct{}, 1)}
	p := newPump(f)
	p.setEditor(true)
	done := make(chan struct{})
	go func() {
		editorReader{p}.Read(make([]byte, 10))
		close(done)
	}()
	for {
		p.mu.Lock()
		reading := p.reading
		p.mu.Unlock()
		if reading {
			break
		}
		time.Sleep(time.Millisecond)
	}
	p.setEditor(false)
	for {
		p.mu.Lock()
		reading := p.reading
		p.mu.Unlock()
		if !reading {
			break
		}
		time.Sleep(time.Millisecond)
	}
	f.pieces <- []byte("k")
	time.Sleep(20 * time.Millisecond)
	if len(f.pieces) != 1 {
		t.Fatal("a key was read with no prompt up")
	}
	p.setEditor(true)
	<-done
}

// Ctrl-Cs that arrive together are one, as SIGINTs that arrive before the
// first is handled are one to python3; keys typed before a later one of
// them are dropped, and keys after the last are kept.
func TestPumpMergesCtrlCsReadTogether(t *testing.T) {
	cases := []struct {
		name   string
		pieces []string
		typed  string
	}{
		{"five at once", []string{"\x03\x03\x03\x03\x03"}, "\x03"},
		{"then a line", []string{"\x03\x03\x03", "1+1\r"}, "\x03" + "1+1\r"},
		{"keys after the last are kept", []string{"ab\x03cd\x03ef\r"}, "ab\x03ef\r"},
		{"apart, each counts", []string{"\x03", "\x03", "x\r"}, "\x03\x03x\r"},
		{"reading stops at a line end", []string{"\x03x\r\x03y\r"}, "\x03x\r\x03y\r"},
		{"inside a paste it is text", []string{"\x03\x1b[200~a\x03b\x1b[201~\x03"}, "\x03\ue000\x03"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := feed(t, tc.pieces...)
			got, _ := readEditor(p)
			if got != tc.typed {
				t.Errorf("editor read %q, want %q", got, tc.typed)
			}
		})
	}
}

// The keys read along after a Ctrl-C are the next prompt's: the editor,
// whose line the Ctrl-C ended, does not get them until a prompt is up
// again (readline, which reads on, took them into the line it was ending).
func TestPumpKeepsKeysAfterCtrlCForTheNextPrompt(t *testing.T) {
	p := feed(t, "half\x03next")
	p.setEditor(true)
	buf := make([]byte, 64)
	n, err := editorReader{p}.Read(buf)
	if err != nil || string(buf[:n]) != "half\x03" {
		t.Fatalf("first read %q, %v", buf[:n], err)
	}
	blocked := make(chan struct{})
	var once sync.Once
	p.mu.Lock()
	p.editorWaits = func(waiting bool) {
		if waiting {
			once.Do(func() { close(blocked) })
		}
	}
	p.mu.Unlock()
	got := make(chan string, 1)
	go func() {
		n, _ := editorReader{p}.Read(buf)
		got <- string(buf[:n])
	}()
	select {
	case s := <-got:
		t.Fatalf("the ended line's editor read %q", s)
	case <-blocked: // it waits, the keys kept
	}
	// The REPL ends the prompt and puts up the next.
	p.setEditor(false)
	p.setEditor(true)
	if s := <-got; s != "next" {
		t.Errorf("the next prompt read %q, want %q", s, "next")
	}
}

// A printable key is offered for echo as soon as it is read only when it
// is the editor's next: nothing queued or pasting before it, and every key
// handed over already seen by the editor's filter.
func TestPumpOffersKeysAtRest(t *testing.T) {
	f := &fakeKeys{pieces: make(chan []byte, 8), woke: make(chan struct{}, 1)}
	p := newPump(f)
	var offered []byte
	p.echo = func(b byte) { offered = append(offered, b) }
	p.setEditor(true)
	read := func(piece string) string {
		t.Helper()
		f.pieces <- []byte(piece)
		buf := make([]byte, 64)
		n, err := editorReader{p}.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		return string(buf[:n])
	}

	// At rest: the first key of a read is offered, not the ones after it.
	if got := read("ab"); got != "ab" || string(offered) != "a" {
		t.Fatalf("read %q, offered %q; want \"ab\", \"a\"", got, offered)
	}
	// "ab" was handed and the filter has not seen it: not at rest.
	read("c")
	if string(offered) != "a" {
		t.Fatalf("offered %q while keys were on their way, want just \"a\"", offered)
	}
	p.seen.Add(3) // the filter saw a, b and c
	read("d")
	if string(offered) != "ad" {
		t.Fatalf("offered %q, want \"ad\"", offered)
	}
	p.seen.Add(1)
	// A key that is not printable is not offered, nor is the text of a
	// paste whose end has not come yet.
	read("\t")
	p.seen.Store(p.handed.Load())
	f.pieces <- []byte("\x1b[200~x")
	f.pieces <- []byte("y\x1b[201~")
	buf := make([]byte, 64)
	if n, err := (editorReader{p}).Read(buf); err != nil || string(buf[:n]) != string(pasteRune) {
		t.Fatalf("read %q, %v; want the paste marker", buf[:n], err)
	}
	if s, ok := p.takePaste(); !ok || s != "xy" {
		t.Fatalf("paste %q, %v; want \"xy\"", s, ok)
	}
	if string(offered) != "ad" {
		t.Fatalf("offered %q, want still \"ad\"", offered)
	}
	// A new prompt starts the count again.
	p.setEditor(false)
	p.setEditor(true)
	read("e")
	if string(offered) != "ade" {
		t.Fatalf("offered %q at a new prompt, want \"ade\"", offered)
	}
}

// readline takes the byte after ESC [ (or ESC O) and any digits and
// semicolons as the end of an escape sequence, Enter and Ctrl-C included.
// A Ctrl-C there comes after a byte that ends the sequence as one readline
// does nothing for, so that readline sees the Ctrl-C the pump stopped
// reading at; elsewhere the bytes go as they came.
func TestPumpEndsAnEscapeSequenceBeforeCtrlC(t *testing.T) {
	cases := []struct {
		name   string
		pieces []string
		typed  string
	}{
		{"after ESC [", []string{"x = 1\x1b[", "\x03"}, "x = 1\x1b[Z\x03"},
		{"after its digits, in one read", []string{"x\x1b[1;5\x03\x03"}, "x\x1b[1;5Z\x03"},
		{"after ESC O", []string{"\x1bO\x03"}, "\x1bOZ\x03"},
		{"after a lone ESC", []string{"\x1b\x03"}, "\x1b\x03"},
		{"after a whole sequence", []string{"\x1b[A\x03"}, "\x1b[A\x03"},
		{"after a paste", []string{"\x1b[200~a\x1b[201~\x03"}, "\ue000\x03"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := readEditor(feed(t, tc.pieces...))
			if got != tc.typed {
				t.Errorf("editor read %q, want %q", got, tc.typed)
			}
		})
	}
}

// An Enter that readline takes as the end of an escape sequence ends no
// line (as in GNU readline), so the pump reads on to the Enter that does;
// stopping at the first, it waited for a line that readline never ended.
func TestPumpReadsOnPastAnEnterInsideAnEscapeSequence(t *testing.T) {
	p := feed(t, "1+1\x1b[\r\r")
	p.setEditor(true)
	got := make(chan string, 1)
	go func() {
		var b strings.Builder
		buf := make([]byte, 64)
		for strings.Count(b.String(), "\r") < 2 {
			n, err := editorReader{p}.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		got <- b.String()
	}()
	select {
	case s := <-got:
		if want := "1+1\x1b[\r\r"; s != want {
			t.Errorf("editor read %q, want %q", s, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the pump stopped at the Enter inside the escape sequence: the editor never got the one that ends the line")
	}
}

// ESC then a key is how a terminal sends Meta (Alt) with it. readline
// inserts the key itself for the ones it binds to nothing, where python3's
// GNU readline does what it binds or nothing; the pump hands a marker
// that names the key in its place (which the editor carries out or
// drops), whether the key came in the same read as the ESC or later, and
// leaves the keys readline binds, sequences and pastes alone.
func TestPumpMarksMetaKeysReadlineDoesNotBind(t *testing.T) {
	marker := func(key rune) string { return string(metaRune + key) }
	cases := []struct {
		name   string
		pieces []string
		typed  string
		paste  string
	}{
		{"in one read", []string{"1+1\x1b.\r"}, "1+1\x1b" + marker('.') + "\r", ""},
		{"in two reads", []string{"1\x1b", "u\r"}, "1\x1b" + marker('u') + "\r", ""},
		{"M-b, M-f and M-d", []string{"a b\x1bb\x1bf\x1bd\r"}, "a b\x1bb\x1bf\x1bd\r", ""},
		{"an arrow key", []string{"\x1b[A\x1bOA\r"}, "\x1b[A\x1bOA\r", ""},
		{"Meta with Backspace", []string{"ab\x1b\x7f\r"}, "ab\x1b\x7f\r", ""},
		{"M-C-]", []string{"ab\x1b\x1da\r"}, "ab\x1b" + marker(ctrlBracket) + "a\r", ""},
		{"an ESC inside a paste", []string{"\x1b[200~\x1bx\x1b[201~"}, "\ue000", "\x1bx"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, pastes := readEditor(feed(t, tc.pieces...))
			if got != tc.typed {
				t.Errorf("editor read %q, want %q", got, tc.typed)
			}
			if tc.paste != "" && (len(pastes) != 1 || pastes[0] != tc.paste) {
				t.Errorf("pastes %q, want %q", pastes, tc.paste)
			}
		})
	}
}
