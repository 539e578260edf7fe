package renderer

import (
	"strings"
)

// Suggest returns the candidates a mistyped word most likely meant: those
// nearest to it by edit distance (case aside), within a third of its length
// (at least 1, at most 2); among those as near, the ones that begin the
// word or that it begins ("rke1" is nearest to rke and rke2, and means
// rke). None when nothing is near enough.
func Suggest(word string, candidates []string) []string {
	w := strings.ToLower(word)
	limit := min(max(len(w)/3, 1), 2)
	best, out := limit+1, []string(nil)
	for _, c := range candidates {
		d := distance(w, strings.ToLower(c))
		switch {
		case d > limit || d > best:
		case d < best:
			best, out = d, []string{c}
		default:
			out = append(out, c)
		}
	}
	return out
}

// DidYouMean is " (did you mean X?)" for the suggestions of a mistyped
// word, each spelled by spell, or "" when there are none.
func DidYouMean(word string, candidates []string, spell func(string) string) string {
	s := Suggest(word, candidates)
	if len(s) == 0 {
		return ""
	}
	for i := range s {
		s[i] = spell(s[i])
	}
	return " (did you mean " + strings.Join(s, " or ") + "?)"
}

// distance is the edit distance of two strings, by byte: insertions,
// deletions, substitutions and swaps of neighbours ("nmae" is one from
// "name"), each one edit (the optimal string alignment distance).
func distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// UnknownValue is the usage error of an option given a value it does not
// take: the values it takes, and the ones the value most likely meant,
// spelled as the option is ("--distro=rke", "distro: rke"). aliases are
// other names of values ("rke1" for rke).
func UnknownValue(opt Opt, value string, values []string, aliases map[string]string) error {
	meant := Suggest(value, values)
	if v, ok := aliases[strings.ToLower(value)]; ok {
		meant = []string{v}
	}
	format, args := "%q is unknown", []any{value}
	if len(meant) > 0 {
		format += " (did you mean " + strings.TrimSuffix(strings.Repeat("%s or ", len(meant)), " or ") + "?)"
		for _, m := range meant {
			args = append(args, OptValue{opt, m})
		}
	}
	return usageErrorf(opt, format+": use one of %s", append(args, strings.Join(values, ", "))...)
}
