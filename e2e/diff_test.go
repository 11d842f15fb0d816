package e2e

import (
	"fmt"
	"strings"
)

// lineDiff returns a readable line diff of a (want) and b (got): lines only
// in a start with "-", lines only in b with "+", common lines with " ".
// Lines are shown quoted so that trailing spaces and control characters are
// visible. It is a plain LCS, fine for the short outputs of these tests.
func lineDiff(a, b string) string {
	x, y := strings.SplitAfter(a, "\n"), strings.SplitAfter(b, "\n")
	if len(x) > 0 && x[len(x)-1] == "" {
		x = x[:len(x)-1]
	}
	if len(y) > 0 && y[len(y)-1] == "" {
		y = y[:len(y)-1]
	}
	if len(x)*len(y) > 4_000_000 {
		return fmt.Sprintf("(outputs too long to diff: %d and %d lines)\n", len(x), len(y))
	}
	// lcs[i][j] = length of the LCS of x[i:] and y[j:]
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var sb strings.Builder
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			fmt.Fprintf(&sb, "  %q\n", x[i])
			i++
			j++
		case j < len(y) && (i == len(x) || lcs[i][j+1] >= lcs[i+1][j]):
			fmt.Fprintf(&sb, "+ %q\n", y[j])
			j++
		default:
			fmt.Fprintf(&sb, "- %q\n", x[i])
			i++
		}
	}
	return sb.String()
}
