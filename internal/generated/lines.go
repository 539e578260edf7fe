package generated

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// generatedLine is a generated value inside a hand-written file: the
// value its regexp's group 2 matches, else what follows group 1 to the
// end of the match.
type generatedLine struct {
	what    string
	re      *regexp.Regexp
	value   string
	missing string
}

// marker is what a hand-written file says beside each fragment that make
// generate writes: on the fragment's line or on one of the markerLines
// lines above it (a comment, or a JSON Schema "$comment").
const (
	marker      = "make generate"
	markerLines = 6
)

// rewriteLines puts each line's value in the file's text b (named file):
// the new text and a problem for each value that differed, saying it is
// not source's (run make generate). A line the text lacks, or a fragment
// without the marker beside it, is an error.
func rewriteLines(file string, b []byte, lines []generatedLine, source string) ([]byte, []string, error) {
	var problems []string
	out := b
	for _, g := range lines {
		m := g.re.FindSubmatchIndex(out)
		if m == nil {
			return nil, nil, fmt.Errorf("%s: %s", file, g.missing)
		}
		from, to := m[3], m[1]
		if len(m) > 4 && m[4] >= 0 {
			from, to = m[4], m[5]
		}
		if !marked(out, from) {
			return nil, nil, fmt.Errorf("%s: %s carries no marker: write %q on its line or in the %d lines above it", file, g.what, marker, markerLines)
		}
		if string(out[from:to]) == g.value {
			continue
		}
		problems = append(problems, file+": "+g.what+" is not "+source+" (run make generate)")
		out = append(append(append([]byte{}, out[:from]...), g.value...), out[to:]...)
	}
	return out, problems, nil
}

// rewriteFile checks the lines of file (a path under root) against their
// values, or with write puts the values there; it returns the problems,
// none when it wrote.
func rewriteFile(root, file string, lines []generatedLine, source string, write bool) ([]string, error) {
	path := filepath.Join(root, filepath.FromSlash(file))
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out, problems, err := rewriteLines(file, b, lines, source)
	if err != nil || !write || len(problems) == 0 {
		return problems, err
	}
	return nil, os.WriteFile(path, out, 0o644)
}

// DistroLine is a list of distributions inside a hand-written file, made
// from the distributions' records (distros.Records): a schema's enum, a
// plugin's tooltip, a comment naming Rancher's providers.
type DistroLine struct {
	File, What string
	// Re's group 1 is what comes before the list, group 2 the list.
	Re    *regexp.Regexp
	Value func([]distros.Record) string
}

// DistroLines are the distribution lists of hand-written files.
var DistroLines = []DistroLine{
	{"docs/plan.schema.json", "the distro enum", regexp.MustCompile(`("distro": \{"enum": )(\[[^\]\n]*\])`),
		func(recs []distros.Record) string { return jsonList(distros.Values(distros.Named(recs))) }},
	{"docs/check.schema.json", "the detected enum", regexp.MustCompile(`("detected": \{"enum": )(\[[^\]\n]*\])`),
		func(recs []distros.Record) string {
			return jsonList(append(distros.Values(distros.Named(recs)), "mixed", "unknown"))
		}},
	{"docs/check.schema.json", "the rendered description", regexp.MustCompile(`("the --distro the workload was rendered for: )([^"\n]*?)( when its placement fits)`),
		func(recs []distros.Record) string {
			return strings.Join(distros.Values(recs), ", ") + ", or " + strings.Join(SharedPlacements(recs), " or ")
		}},
	{"examples/argocd/plugin.yaml", "the distro parameter's tooltip", regexp.MustCompile(`(?m)(^\s+tooltip: )(.*)( \(auto matches every distribution's control-plane label\)$)`),
		func(recs []distros.Record) string { return distros.Alternatives(distros.Values(recs), "or") }},
	{"examples/argocd/applicationset.yaml", "the provider.cattle.io values", regexp.MustCompile(`(provider\.cattle\.io label names \()([^;]*)(;)`),
		func(recs []distros.Record) string {
			return distros.Alternatives(rancherProviders(recs, false), "or")
		}},
	{"examples/fleet/fleet.yaml", "the provider.cattle.io values", regexp.MustCompile(`(?m)(^# provider\.cattle\.io=)(.*)(, \.\.\.$)`),
		func(recs []distros.Record) string { return strings.Join(rancherProviders(recs, true), ", ") }},
	{"plugin.yaml", "the description's distributions", regexp.MustCompile(`(fitted to )(.*)(:\n  helm aws-ccm )`),
		func(recs []distros.Record) string {
			return distros.Alternatives(distros.DisplayNames(distros.Named(recs)), "and")
		}},
	{"charts/aws-ccm-rancher/Chart.yaml", "the description's distributions", regexp.MustCompile(`(work on\n  )(.*)( clusters, for places)`),
		func(recs []distros.Record) string { return distros.RancherNames(recs) }},
	{"charts/aws-ccm-rancher/Chart.yaml", "the keywords", regexp.MustCompile(`(?m)(^keywords: \[aws, cloud-controller-manager, )(.*)(\]$)`),
		func(recs []distros.Record) string {
			return strings.Join(append([]string{"rancher"}, rancherProviders(recs, false)...), ", ")
		}},
}

// jsonList writes strings as a JSON array on one line.
func jsonList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = fmt.Sprintf("%q", v)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// rancherProviders are the provider.cattle.io values of the distributions
// Rancher provisions, with their names where more than their case.
func rancherProviders(recs []distros.Record, named bool) []string {
	var out []string
	for _, p := range recs {
		if p.RancherProvider == "" {
			continue
		}
		v := p.RancherProvider
		if named && !strings.EqualFold(v, p.Name) {
			v += " (" + p.Name + ")"
		}
		out = append(out, v)
	}
	return out
}

// SharedPlacements are the distributions whose profiles place the CCM
// alike, each group as check reports it ("rke2/k3s").
func SharedPlacements(recs []distros.Record) []string {
	var out []string
	done := map[distros.Distro]bool{}
	for i, p := range recs {
		if p.NodeSelector == nil || done[p.Distro] {
			continue
		}
		group := []string{string(p.Distro)}
		for _, q := range recs[i+1:] {
			if q.NodeSelector != nil && fmt.Sprint(q.NodeSelector, q.Tolerations) == fmt.Sprint(p.NodeSelector, p.Tolerations) {
				group = append(group, string(q.Distro))
				done[q.Distro] = true
			}
		}
		if len(group) > 1 {
			out = append(out, strings.Join(group, "/"))
		}
	}
	return out
}

// DistroPins checks the distribution lists of DistroLines against the
// records (recs), or with write rewrites them; it returns the problems.
func DistroPins(root string, recs []distros.Record, write bool) ([]string, error) {
	var problems []string
	for _, file := range distroFiles() {
		var lines []generatedLine
		for _, l := range DistroLines {
			if l.File == file {
				lines = append(lines, generatedLine{l.What, l.Re, l.Value(recs), "no " + l.What})
			}
		}
		p, err := rewriteFile(root, file, lines, "the distributions' records'", write)
		if err != nil {
			return nil, err
		}
		problems = append(problems, p...)
	}
	return problems, nil
}

// distroFiles are the files of DistroLines, each once, in order.
func distroFiles() []string {
	var files []string
	for _, l := range DistroLines {
		if len(files) == 0 || files[len(files)-1] != l.File {
			files = append(files, l.File)
		}
	}
	return files
}

// marked says whether the fragment at offset at has the marker on its line
// or on one of the markerLines lines above it.
func marked(b []byte, at int) bool {
	end := bytes.IndexByte(b[at:], '\n')
	if end < 0 {
		end = len(b)
	} else {
		end += at
	}
	start := at
	for i := 0; i <= markerLines && start > 0; i++ {
		start = bytes.LastIndexByte(b[:start-1], '\n') + 1
	}
	return bytes.Contains(b[start:end], []byte(marker))
}
