package plan

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// quote returns word as a POSIX shell reads it back: unchanged when it holds
// only characters the shell leaves alone, else in single quotes.
func quote(word string) string {
	if word == "" {
		return "''"
	}
	if expandsDigest(word) {
		return `"` + word + `"`
	}
	safe := true
	for _, r := range word {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@+%^", r)) {
			safe = false
			break
		}
	}
	if safe {
		return word
	}
	return "'" + strings.ReplaceAll(word, "'", `'\''`) + "'"
}

// lineWidth is where shellLine breaks a command line.
const lineWidth = 88

// shellLine joins argv into one command line, quoted, continued with a
// backslash before a flag that would run past lineWidth.
func shellLine(argv []string) string {
	var b strings.Builder
	col := 0
	for i, w := range argv {
		q := quote(w)
		if i > 0 {
			// A flag and the value after it stay on one line.
			need := len(q)
			if strings.HasPrefix(w, "-") && !strings.Contains(w, "=") && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
				need += 1 + len(quote(argv[i+1]))
			}
			if col+1+need > lineWidth && strings.HasPrefix(w, "-") {
				b.WriteString(" \\\n    ")
				col = 4
			} else {
				b.WriteByte(' ')
				col++
			}
		}
		b.WriteString(q)
		col += len(q)
	}
	return b.String()
}

// expandsDigest tells whether word is one that pinned made with
// $CCM_DIGEST_<tag>, which the shell expands in double quotes: the other
// characters of such a word are ones the shell leaves alone.
func expandsDigest(word string) bool {
	before, name, ok := strings.Cut(word, "@$"+digestPrefix)
	return ok && quote(before) == before && name != "" && strings.Trim(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == ""
}

// run is a command that is one program invocation; one that expands
// $CCM_DIGEST_<tag> is a script (no Argv: the shell makes that argument).
func run(kind, where, description string, argv ...string) Command {
	if slices.ContainsFunc(argv, expandsDigest) {
		return Command{Description: description, Kind: kind, Where: where, Shell: shellLine(argv)}
	}
	return Command{Description: description, Kind: kind, Where: where, Argv: argv, Shell: shellLine(argv)}
}

// script is a command that needs a shell (pipes, loops, variables).
func script(kind, where, description, shell string) Command {
	return Command{Description: description, Kind: kind, Where: where, Shell: strings.TrimSpace(shell)}
}

// Where commands run.
const (
	atWorkstation  = "a workstation with kubectl and helm for the cluster"
	atRancher      = "a workstation with kubectl for Rancher's local cluster"
	atRKE          = "the workstation that holds cluster.yml and cluster.rkestate"
	atControlPlane = "each control-plane node, one at a time"
	atFirstServer  = "the first server"
	atEveryNode    = "every node, control-plane nodes first, one at a time"
	atThatAgent    = "that agent, once its Node is deleted"
	atAWS          = "a workstation with the AWS CLI for the cluster's account"
)

// lazyRegexp compiles a pattern the first time it is used, not when the
// program starts: the post-renderer links this package for its plan
// command and pays nothing for it otherwise.
func lazyRegexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
