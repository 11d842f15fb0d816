package redact

import (
	"math"
	"strings"
)

// Bounds of the high-entropy rule. Shorter runs are identifiers and short
// ids; much longer ones are data payloads (base64 images, blobs) whose
// removal would gut a tool result without hiding a credential.
const (
	minEntropyLen = 24
	maxEntropyLen = 512
)

// entropyRun marks the characters of a candidate run: [A-Za-z0-9_+/=-].
var entropyRun = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		t[c] = isLetter(b) || isDigit(b) || strings.IndexByte("_+/=-", b) >= 0
	}
	return t
}()

// findEntropy adds every maximal run of token characters that looks like a
// generated secret.
func findEntropy(s string, fs []finding) []finding {
	for i := 0; i < len(s); {
		if !entropyRun[s[i]] {
			i++
			continue
		}
		j := i
		for j < len(s) && entropyRun[s[j]] {
			j++
		}
		if j-i >= minEntropyLen {
			fs = entropyRunFindings(s, i, j, fs)
		}
		i = j
	}
	return fs
}

// entropyRunFindings judges the run s[start:end]. A name glued on by '='
// ("token=...") is cut off first, and a run that reads like a file path
// is judged segment by segment, so /home/Me/Projects2/app23 is not one
// opaque token.
func entropyRunFindings(s string, start, end int, fs []finding) []finding {
	run := s[start:end]
	if k := lastInnerEquals(run); k >= 0 {
		start += k + 1
		run = s[start:end]
	}
	if !strings.Contains(run, "/") || !pathLike(run) {
		if generated(run) {
			fs = append(fs, finding{start: start, end: end, prec: precEntropy, kind: kindEntropy})
		}
		return fs
	}
	for off := start; off < end; {
		seg := strings.IndexByte(s[off:end], '/')
		if seg < 0 {
			seg = end - off
		}
		if generated(s[off : off+seg]) {
			fs = append(fs, finding{start: off, end: off + seg, prec: precEntropy, kind: kindEntropy})
		}
		off += seg + 1
	}
	return fs
}

// lastInnerEquals is the index of the last '=' that is followed by
// something other than '=': base64 has '=' only as trailing padding, so an
// inner one separates a name from a value.
func lastInnerEquals(run string) int {
	trimmed := strings.TrimRight(run, "=")
	return strings.LastIndexByte(trimmed, '=')
}

// pathLike reports whether most '/'-separated segments of run read like
// words ("usr", "site-packages", "Projects"): a base64 secret that happens
// to contain '/' has segments of random mixed case instead.
func pathLike(run string) bool {
	segs := strings.Split(run, "/")
	words := 0
	for _, seg := range segs {
		if wordLike(seg) {
			words++
		}
	}
	return 2*words >= len(segs)
}

// wordLike: empty, short, or a letter followed by no upper case.
func wordLike(seg string) bool {
	if len(seg) <= 3 {
		return true
	}
	for i := 1; i < len(seg); i++ {
		if seg[i] >= 'A' && seg[i] <= 'Z' {
			return false
		}
	}
	return isLetter(seg[0])
}

// generated reports whether tok looks like a machine-made secret: long,
// both cases and digits, not hex (hashes, digests, UUIDs), not a checksum
// label, and with high Shannon entropy.
func generated(tok string) bool {
	n := len(tok)
	if n < minEntropyLen || n > maxEntropyLen {
		return false
	}
	var classes [4]int // by charClass
	for i := 0; i < n; i++ {
		classes[charClass(tok[i])]++
	}
	if classes[1] == 0 || classes[2] == 0 || classes[3] < 2 || hexLike(tok) || checksumLabel(tok) {
		return false
	}
	if classChangeRate(tok) < minClassChangeRate || wordCoverage(tok) >= maxWordCoverage {
		return false
	}
	return entropy(tok) >= entropyThreshold(n)
}

// Identifiers made of words ("ConvNeXtV2ForImageClassification",
// "FinalReport_2023_v12_APPROVED") reach the entropy of random strings but
// not their texture: random characters switch between upper case, lower
// case and digits at about 60% of positions (rarely below 40%), and seldom
// form word-shaped runs. Both limits were tuned on the test corpora.
const (
	minClassChangeRate = 0.35
	maxWordCoverage    = 0.6
)

// charClass is 1 for upper case, 2 for lower case, 3 for digits, 0 else.
func charClass(c byte) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return 1
	case c >= 'a' && c <= 'z':
		return 2
	case isDigit(c):
		return 3
	}
	return 0
}

// classChangeRate is the fraction of letters and digits whose class
// differs from the previous letter or digit.
func classChangeRate(tok string) float64 {
	prev, n, changes := 0, 0, 0
	for i := 0; i < len(tok); i++ {
		c := charClass(tok[i])
		if c == 0 {
			continue
		}
		if prev != 0 && c != prev {
			changes++
		}
		prev, n = c, n+1
	}
	return float64(changes) / float64(n)
}

// wordCoverage is the fraction of tok covered by word-shaped runs: an
// optional capital and at least three lower-case letters with a vowel
// ("Image"), or at least four capitals ("HTTP", "APPROVED"). Random text
// has lower-case runs too, but they are seldom pronounceable.
func wordCoverage(tok string) float64 {
	covered := 0
	for i := 0; i < len(tok); {
		if n := wordAt(tok, i); n > 0 {
			covered += n
			i += n
		} else {
			i++
		}
	}
	return float64(covered) / float64(len(tok))
}

// wordAt is the length of the word-shaped run starting at tok[i], or 0.
func wordAt(tok string, i int) int {
	j := i
	for j < len(tok) && charClass(tok[j]) == 1 {
		j++
	}
	if j-i >= 4 {
		return j - i
	}
	if j-i > 1 {
		return 0
	}
	k := j
	for k < len(tok) && charClass(tok[k]) == 2 {
		k++
	}
	if k-j >= 3 && strings.ContainsAny(tok[j:k], "aeiouy") {
		return k - i
	}
	return 0
}

// hexLike: hex digests, git hashes and UUIDs (even in mixed case) are
// public identifiers, whatever their entropy.
func hexLike(tok string) bool {
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if !(isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == '-') {
			return false
		}
	}
	return true
}

// checksumLabel: Subresource-Integrity style digests ("sha512-<base64>")
// in lock files are public.
func checksumLabel(tok string) bool {
	for _, p := range []string{"sha1-", "sha256-", "sha384-", "sha512-"} {
		if strings.HasPrefix(tok, p) {
			return true
		}
	}
	return false
}

// entropyThreshold grows with length: a string of n characters has at most
// log2(n) bits per character, and a random one comes close to that, while
// identifiers built from words stay well below. The fraction and the cap
// were tuned on testdata/ordinary.txt and testdata/secrets.txt.
func entropyThreshold(n int) float64 {
	return min(0.8*math.Log2(float64(n)), 4.6)
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	n := float64(len(s))
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
