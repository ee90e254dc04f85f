package schema

import (
	"strings"
	"unicode/utf8"
)

// suggest returns the candidate the unknown name most likely misspells: one
// equal to it but for case, else the closest within an edit distance of 2
// (and closer than the candidate's own length, so that short names are not
// matched with anything). Ties go to the first candidate.
func suggest(name string, candidates []string) (string, bool) {
	for _, c := range candidates {
		if strings.EqualFold(c, name) {
			return c, true
		}
	}
	best, bestDist := "", 3
	n := utf8.RuneCountInString(name)
	for _, c := range candidates {
		if diff := n - utf8.RuneCountInString(c); diff >= bestDist || -diff >= bestDist {
			continue // the distance is at least the difference in length
		}
		d := levenshtein(name, c)
		if d < bestDist && d < len([]rune(c)) {
			best, bestDist = c, d
		}
	}
	return best, best != ""
}

// levenshtein returns the edit distance between a and b, in runes.
func levenshtein(a, b string) int {
	ar, br := []rune(a), []rune(b)
	prev := make([]int, len(br)+1)
	cur := make([]int, len(br)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ar); i++ {
		cur[0] = i
		for j := 1; j <= len(br); j++ {
			cost := 1
			if ar[i-1] == br[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(br)]
}
