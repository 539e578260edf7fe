package cli

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// unifiedDiff returns a unified diff of two texts by lines, with context
// lines around each change, or "" when they are equal.
func unifiedDiff(fromName, toName, from, to string, context int) string {
	if from == to {
		return ""
	}
	a, b := splitLines(from), splitLines(to)
	ops := diffLines(a, b)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", fromName, toName)
	// Group the edit script into hunks.
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-context, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*context {
				end = min(end+context, len(ops))
				break
			}
			end = run
		}
		aStart, bStart, aLen, bLen := ops[start].a, ops[start].b, 0, 0
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				aLen++
			}
			if op.kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		for _, op := range ops[start:end] {
			out.WriteByte(op.kind)
			out.WriteString(op.line)
			out.WriteByte('\n')
		}
		i = end
	}
	return out.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

type diffOp struct {
	kind byte // ' ', '-', '+'
	line string
	a, b int // line indexes (0-based) in a and b where the op stands
}

// diffLines computes an edit script with the longest common subsequence of
// lines (common prefix and suffix trimmed first; manifests are small).
func diffLines(a, b []string) []diffOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	// lcs[i][j]: the LCS length of ma[i:] and mb[j:].
	lcs := make([][]int32, len(ma)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(mb)+1)
	}
	for i := len(ma) - 1; i >= 0; i-- {
		for j := len(mb) - 1; j >= 0; j-- {
			if ma[i] == mb[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []diffOp
	for k := 0; k < pre; k++ {
		ops = append(ops, diffOp{' ', a[k], k, k})
	}
	i, j := 0, 0
	for i < len(ma) || j < len(mb) {
		switch {
		case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
			ops = append(ops, diffOp{' ', ma[i], pre + i, pre + j})
			i, j = i+1, j+1
		case i < len(ma) && (j == len(mb) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, diffOp{'-', ma[i], pre + i, pre + j})
			i++
		default:
			ops = append(ops, diffOp{'+', mb[j], pre + i, pre + j})
			j++
		}
	}
	for k := 0; k < suf; k++ {
		ops = append(ops, diffOp{' ', a[len(a)-suf+k], len(a) - suf + k, len(b) - suf + k})
	}
	return ops
}

// colorize colours a unified diff for a terminal.
func colorize(diff string) string {
	var out strings.Builder
	for _, line := range strings.SplitAfter(diff, "\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "---"), strings.HasPrefix(line, "+++"):
			out.WriteString("\x1b[1m" + strings.TrimSuffix(line, "\n") + "\x1b[0m\n")
		case strings.HasPrefix(line, "@@"):
			out.WriteString("\x1b[36m" + strings.TrimSuffix(line, "\n") + "\x1b[0m\n")
		case line[0] == '-':
			out.WriteString("\x1b[31m" + strings.TrimSuffix(line, "\n") + "\x1b[0m\n")
		case line[0] == '+':
			out.WriteString("\x1b[32m" + strings.TrimSuffix(line, "\n") + "\x1b[0m\n")
		default:
			out.WriteString(line)
		}
	}
	return out.String()
}

// redactSalt makes the redaction tags differ from run to run, so they tell
// whether a value changed within one diff and nothing more.
var redactSalt = func() []byte {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return b
}()

// redactSecrets replaces the values under data and stringData of every
// Secret with a tag, so a diff never prints secret data.
func redactSecrets(stream string) string {
	if !strings.Contains(stream, "Secret") {
		return stream
	}
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(stream), OmitReaderAnnotations: true}).Read()
	if err != nil {
		// Not parseable: show nothing of it rather than risk a secret.
		return "# (manifests not shown: " + err.Error() + ")\n"
	}
	changed := false
	for _, n := range nodes {
		if n.GetKind() != "Secret" {
			continue
		}
		for _, field := range []string{"data", "stringData"} {
			m := n.Field(field)
			if m == nil || m.Value.YNode().Kind != yaml.MappingNode {
				continue
			}
			c := m.Value.YNode().Content
			for i := 1; i < len(c); i += 2 {
				h := sha256.Sum256(append(append([]byte{}, redactSalt...), c[i].Value...))
				c[i].Value, c[i].Style, c[i].Tag = "(redacted "+hex.EncodeToString(h[:4])+")", 0, yaml.NodeTagString
				changed = true
			}
		}
	}
	if !changed {
		return stream
	}
	var out strings.Builder
	if err := (kio.ByteWriter{Writer: &out}).Write(nodes); err != nil {
		return "# (manifests not shown: " + err.Error() + ")\n"
	}
	return out.String()
}
