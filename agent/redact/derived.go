package redact

import (
	"encoding/base64"
	"slices"
	"sync"
	"unicode/utf8"
)

// A secret the session knows (the configured key, a wiped variable's
// value, a value the filter has already redacted) can come back
// transformed by an expression the model asked for: spaced out, reversed,
// as hex or base64, cut into slices, as a list of code points. The known
// set holds every slice of gramLen bytes of each secret, of its reversal
// and of its letters and digits alone; a text is scanned for them as it
// is, with only its letters and digits, and decoded where it holds runs of
// numbers, hex or base64.

// gramLen is the shortest slice of a known secret that is looked for.
const gramLen = 6

// maxLearned bounds the values the filter learns from what it redacts.
const maxLearned = 512

const gramMask = 1<<(8*gramLen) - 1

// bloomBits is the size of the bitmap that settles most positions of a
// text without a map lookup: kept sparse for some hundred secrets.
const bloomBits = 1 << 20

type gramInfo struct {
	secret int32 // index into knownSet.kinds
	strong bool  // mixes character classes
	// need is the shortest match it may be part of: a secret shorter than
	// LongSecretLen is found only whole, and as a whole token, as its
	// exact value is (a slice of "sk-abc12345" is in "sk-abc123456").
	need int32
	// form is the length of the form it was cut from: a match made only of
	// slices of one character class ("passwo", "123456") must be that
	// long, since shorter ones are ordinary words and numbers.
	form int32
}

// knownSet is the secrets whose transformed forms are looked for. It is
// safe for concurrent use; learning adds to it under the lock.
type knownSet struct {
	mu      sync.RWMutex
	kinds   []string
	seen    map[string]bool
	learned int
	grams   map[uint64]gramInfo
	bloom   []uint64 // bloomBits bits, made on the first add
}

func newKnownSet() *knownSet {
	return &knownSet{seen: map[string]bool{}, grams: map[uint64]gramInfo{}}
}

func bloomIndex(key uint64) uint32 { return uint32((key * 0x9E3779B97F4A7C15) >> (64 - 20)) }

// add makes v known; learned values count against maxLearned.
func (k *knownSet) add(kind, v string, learned bool) {
	if len(v) < minSecretLen {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.seen[v] || learned && k.learned >= maxLearned {
		return
	}
	k.seen[v] = true
	if learned {
		k.learned++
	}
	if k.bloom == nil {
		k.bloom = make([]uint64, bloomBits/64)
	}
	id := int32(len(k.kinds))
	k.kinds = append(k.kinds, kind)
	skel := skeleton(v)
	for _, form := range []string{v, reverseRunes(v), skel, reverseRunes(skel)} {
		need := 0
		if len(v) < LongSecretLen {
			need = len(form)
		}
		k.addGrams(form, id, need)
	}
}

func (k *knownSet) addGrams(form string, id int32, need int) {
	var key uint64
	for i := 0; i < len(form); i++ {
		key = (key<<8 | uint64(form[i])) & gramMask
		if i < gramLen-1 {
			continue
		}
		if _, ok := k.grams[key]; ok {
			continue
		}
		k.grams[key] = gramInfo{secret: id, strong: mixedClasses(form[i-gramLen+1 : i+1]), need: int32(need), form: int32(len(form))}
		b := bloomIndex(key)
		k.bloom[b>>6] |= 1 << (b & 63)
	}
}

func (k *knownSet) empty() bool {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return len(k.kinds) == 0
}

// mixedClasses reports whether g holds two of lower case, upper case and
// digits: a slice of a generated secret, not of a word or a number.
func mixedClasses(g string) bool {
	var lower, upper, digit int
	for i := 0; i < len(g); i++ {
		switch c := g[i]; {
		case c >= 'a' && c <= 'z':
			lower = 1
		case c >= 'A' && c <= 'Z':
			upper = 1
		case c >= '0' && c <= '9':
			digit = 1
		}
	}
	return lower+upper+digit >= 2
}

func asciiAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// skeleton is s's ASCII letters and digits alone.
func skeleton(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if asciiAlnum(s[i]) {
			b = append(b, s[i])
		}
	}
	return string(b)
}

func reverseRunes(s string) string {
	b := make([]byte, 0, len(s))
	for i := len(s); i > 0; {
		_, n := utf8.DecodeLastRuneInString(s[:i])
		b = append(b, s[i-n:i]...)
		i -= n
	}
	return string(b)
}

// findDerived adds the spans of s that hold a known secret transformed.
func (f *Filter) findDerived(s string, fs []finding) []finding {
	k := f.known
	if k == nil || len(s) < gramLen || k.empty() {
		return fs
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	d := derivedScan{k: k, s: s, fs: fs}
	scanText(k, s, func(a, b int, kind string, whole bool) { d.add(a, b, kind, whole) })
	d.skeleton()
	d.codePoints()
	d.hexRuns()
	d.base64Runs()
	return d.fs
}

// derivedScan looks for known secrets in the views of one text: as it
// is, its letters and digits alone, and its runs decoded.
type derivedScan struct {
	k   *knownSet
	s   string
	buf []byte // the view being scanned, reused
	fs  []finding
}

// add records s[start:end] as a derived finding, if a secret that must be
// a whole token is one there.
func (d *derivedScan) add(start, end int, kind string, whole bool) {
	if !whole || wholeToken(d.s, start, end) {
		d.fs = append(d.fs, finding{start: start, end: end, prec: precDerived, kind: "derived from " + kind})
	}
}

// scanText calls found for each run of overlapping known slices in t that
// is long enough or mixes character classes; whole says it must stand as
// a whole token. The caller holds the read lock.
func scanText[T string | []byte](k *knownSet, t T, found func(a, b int, kind string, whole bool)) {
	start, last, strong, kind, need, form := -1, -1, false, "", 0, 0
	flush := func() {
		if n := last + gramLen - start; start >= 0 && n >= need && (strong || n >= form) {
			found(start, start+n, kind, need > 0)
		}
		start = -1
	}
	var key uint64
	for i := 0; i < len(t); i++ {
		key = (key<<8 | uint64(t[i])) & gramMask
		if i < gramLen-1 {
			continue
		}
		if b := bloomIndex(key); k.bloom[b>>6]&(1<<(b&63)) == 0 {
			continue
		}
		g, ok := k.grams[key]
		if !ok {
			continue
		}
		// A match is a run of slices at consecutive places: a text that
		// repeats a few of them ("0123456789" over and over) is not one
		// long match.
		p := i - gramLen + 1
		if start >= 0 && p == last+1 {
			last, strong = p, strong || g.strong
			need, form = max(need, int(g.need)), max(form, int(g.form))
			continue
		}
		flush()
		start, last, strong, kind, need, form = p, p, g.strong, k.kinds[g.secret], int(g.need), int(g.form)
	}
	flush()
}

// skeleton scans s's letters and digits alone: a secret spaced out,
// joined with commas or listed as characters is whole again there. A
// match is mapped back by counting, which only a rare match pays for.
func (d *derivedScan) skeleton() {
	d.buf = d.buf[:0]
	for i := 0; i < len(d.s); i++ {
		if asciiAlnum(d.s[i]) {
			d.buf = append(d.buf, d.s[i])
		}
	}
	if len(d.buf) == len(d.s) {
		return // the text itself, already scanned
	}
	scanText(d.k, d.buf, func(a, b int, kind string, whole bool) {
		start, end, n := -1, -1, 0
		for i := 0; i < len(d.s) && end < 0; i++ {
			if !asciiAlnum(d.s[i]) {
				continue
			}
			if n == a {
				start = i
			}
			if n == b-1 {
				end = i + 1
			}
			n++
		}
		d.add(start, end, kind, whole)
	})
}

// numberAt reads a decimal or 0x number standing alone at s[i].
func numberAt(s string, i int) (val, end int, ok bool) {
	if i > 0 && continuesNumber(s[i-1]) {
		return 0, i, false
	}
	base, digits := numberBase(s, i)
	val, end = digitsValue(s, digits, base)
	if end == digits || end < len(s) && continuesNumber(s[end]) {
		return 0, end, false
	}
	return val, end, val > 0 && val <= utf8.MaxRune
}

// continuesNumber reports whether c next to a number makes it part of a
// word or of a decimal fraction, so not a number standing alone.
func continuesNumber(c byte) bool { return asciiAlnum(c) || c == '.' }

// numberBase reads the 0x of a number at s[i]: its base and where its
// digits start.
func numberBase(s string, i int) (base, digits int) {
	if i+2 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') {
		return 16, i + 2
	}
	return 10, i
}

// digitsValue reads the digits of base at s[j:], stopping once the value
// is past the last code point (it can be none then).
func digitsValue(s string, j, base int) (val, end int) {
	for ; j < len(s) && val <= utf8.MaxRune; j++ {
		d := hexDigit(s[j])
		if d < 0 || d >= base {
			break
		}
		val = val*base + d
	}
	return val, j
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// listGap reports whether s[a:b] separates two items of a list: a few
// commas, semicolons, spaces and quotes (['0x73', '0x6b']).
func listGap(s string, a, b int) bool {
	if b-a > 6 {
		return false
	}
	for i := a; i < b; i++ {
		if c := s[i]; c != ',' && c != ' ' && c != ';' && c != '\t' && c != '\n' && c != '\'' && c != '"' {
			return false
		}
	}
	return true
}

// codePoints decodes lists of gramLen or more numbers, each a code point
// or a byte ([115, 107, ...] or 0x73 0x6b ...), and scans them.
func (d *derivedScan) codePoints() {
	s := d.s
	var spans [][2]int32 // the number each decoded byte came from
	d.buf = d.buf[:0]
	lastEnd := -1
	done := func() {
		if len(d.buf) >= gramLen {
			scanText(d.k, d.buf, func(a, b int, kind string, whole bool) {
				d.add(int(spans[a][0]), int(spans[b-1][1]), kind, whole)
			})
		}
		d.buf, spans = d.buf[:0], spans[:0]
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			continue
		}
		val, end, ok := numberAt(s, i)
		if !ok {
			done()
			lastEnd, i = -1, end
			continue
		}
		if lastEnd < 0 || !listGap(s, lastEnd, i) {
			done()
		}
		n := len(d.buf)
		if val < 0x100 {
			d.buf = append(d.buf, byte(val)) // a list of bytes
		} else {
			d.buf = utf8.AppendRune(d.buf, rune(val))
		}
		for ; n < len(d.buf); n++ {
			spans = append(spans, [2]int32{int32(i), int32(end)})
		}
		lastEnd, i = end, end-1
	}
	done()
}

// byteClass is a set of bytes, for runs.
type byteClass [256]bool

func classOf(in func(byte) bool) *byteClass {
	var c byteClass
	for i := range c {
		c[i] = in(byte(i))
	}
	return &c
}

var (
	hexClass    = classOf(func(c byte) bool { return hexDigit(c) >= 0 })
	base64Class = classOf(func(c byte) bool { return asciiAlnum(c) || c == '+' || c == '/' || c == '-' || c == '_' })
)

// runs calls each for every maximal run of bytes in class, at least min
// long.
func runs(s string, class *byteClass, min int, each func(a, b int)) {
	for i := 0; i < len(s); {
		if !class[s[i]] {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && class[s[j]] {
			j++
		}
		if j-i >= min {
			each(i, j)
		}
		i = j
	}
}

// hexRuns decodes runs of hex digits (bytes.hex()), from both places a
// byte can start, and scans them.
func (d *derivedScan) hexRuns() {
	runs(d.s, hexClass, 2*gramLen, func(a, b int) {
		for off := 0; off < 2 && a+off+2*gramLen <= b; off++ {
			at := a + off
			d.buf = d.buf[:0]
			for p := at; p+1 < b; p += 2 {
				d.buf = append(d.buf, byte(hexDigit(d.s[p])<<4|hexDigit(d.s[p+1])))
			}
			scanText(d.k, d.buf, func(i, j int, kind string, whole bool) {
				d.add(at+2*i, at+2*j, kind, whole)
			})
		}
	})
}

// base64Runs decodes runs of base64 (either alphabet) from each of the
// four places a quantum can start, so that a prefix glued to the run does
// not hide it, and scans them.
func (d *derivedScan) base64Runs() {
	var run []byte
	runs(d.s, base64Class, 8, func(a, b int) {
		if !mixedClasses(d.s[a:b]) {
			return // a word or a number: base64 of a secret mixes cases
		}
		for off := 0; off < 4 && a+off+8 <= b; off++ {
			at := a + off
			q := (b - at) / 4 * 4
			run = append(run[:0], d.s[at:at+q]...)
			for i, c := range run { // one alphabet: the URL-safe one's two letters
				switch c {
				case '-':
					run[i] = '+'
				case '_':
					run[i] = '/'
				}
			}
			d.buf = slices.Grow(d.buf[:0], q)[:q/4*3]
			n, err := base64.RawStdEncoding.Decode(d.buf, run)
			if err != nil || n < gramLen {
				continue
			}
			scanText(d.k, d.buf[:n], func(i, j int, kind string, whole bool) {
				d.add(at+i*4/3, min(at+(j*4+2)/3, b), kind, whole)
			})
		}
	})
}
