// Command toolsalign keeps the modules that build from one compile of their
// shared packages at the same versions: the root module (the programs and
// their tests), the e2e module and the 1.37 tool module (e2e/tools/kube:
// the control plane, kubeadm, kubectl, the AWS CCM, Helm 3 and 4 and
// kustomize). Go's build cache keys a package by its dependencies'
// compiles, so one differing version of a low package (golang.org/x/sys)
// makes every package above it compile once per module.
//
//	go run ./hack/toolsalign          # raise each module to the highest version any of them uses
//	go run ./hack/toolsalign -check   # exit 1, naming the go get to run, if they differ
//
// A module that one of them replaces is left alone there, and reported
// when its version differs.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/semver"
)

// dirs are the modules kept aligned, relative to the repository's root,
// and patterns are what each builds: the programs and the tests, the e2e
// tests, the tools.
var (
	dirs     = []string{".", "e2e", "e2e/tools/kube"}
	patterns = [][]string{{"-test", "./..."}, {"-test", "./..."}, {"tool", "./..."}}
)

// module is a module's version in one build list, and whether that module
// file replaces it (then go get cannot change what is used).
type module struct {
	version  string
	replaced bool
}

// used lists the modules whose packages a module's patterns build, at the
// version they are built at.
func used(dir string, patterns []string) (map[string]module, error) {
	args := append([]string{"list", "-deps", "-f", "{{with .Module}}{{.Path}} {{with .Replace}}{{.Version}} r{{else}}{{.Version}}{{end}}{{end}}"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps in %s: %v: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	mods := map[string]module{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[1] == "" {
			continue // the main module, or a replacement by a directory
		}
		mods[f[0]] = module{version: f[1], replaced: len(f) == 3}
	}
	return mods, sc.Err()
}

// compare finds, for each module more than one of the lists uses, the
// highest version among them, and returns by list index the module@version
// arguments of the go get that raises that list to it; a list that
// replaces the module (go get cannot change it) is a problem instead.
func compare(lists []map[string]module) (map[int][]string, []string) {
	highest := map[string]string{}
	count := map[string]int{}
	for _, l := range lists {
		for p, m := range l {
			count[p]++
			if v, ok := highest[p]; !ok || semver.Compare(m.version, v) > 0 {
				highest[p] = m.version
			}
		}
	}
	gets := map[int][]string{}
	var problems []string
	for p, v := range highest {
		if count[p] < 2 {
			continue
		}
		for i, l := range lists {
			m, ok := l[p]
			if !ok || m.version == v {
				continue
			}
			if m.replaced {
				problems = append(problems, fmt.Sprintf("%s: %s replaces %s with %s, another module uses %s", dirs[i], dirs[i], p, m.version, v))
				continue
			}
			gets[i] = append(gets[i], p+"@"+v)
		}
	}
	for i := range gets {
		sort.Strings(gets[i])
	}
	sort.Strings(problems)
	return gets, problems
}

func main() {
	check := flag.Bool("check", false, "only report the modules whose versions differ (exit 1 if any)")
	flag.Parse()
	lists := make([]map[string]module, len(dirs))
	for i, d := range dirs {
		m, err := used(d, patterns[i])
		if err != nil {
			fmt.Fprintln(os.Stderr, "toolsalign:", err)
			os.Exit(2)
		}
		lists[i] = m
	}
	byIndex, problems := compare(lists)
	gets := map[string][]string{}
	for i, g := range byIndex {
		gets[dirs[i]] = g
	}
	sort.Strings(problems)
	for _, d := range dirs {
		if len(gets[d]) == 0 {
			continue
		}
		if *check {
			problems = append(problems, fmt.Sprintf("%s: behind the other modules; run go run ./hack/toolsalign (it runs: cd %s && go get %s)", d, d, strings.Join(gets[d], " ")))
			continue
		}
		cmd := exec.Command("go", append([]string{"get"}, gets[d]...)...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = d, os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "toolsalign: go get in %s: %v\n", d, err)
			os.Exit(2)
		}
		tidy := exec.Command("go", "mod", "tidy")
		tidy.Dir, tidy.Stdout, tidy.Stderr = d, os.Stderr, os.Stderr
		if err := tidy.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "toolsalign: go mod tidy in %s: %v\n", d, err)
			os.Exit(2)
		}
		fmt.Fprintf(os.Stderr, "toolsalign: %s: %d modules raised (run again until it raises none)\n", filepath.Clean(d), len(gets[d]))
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, "toolsalign:", p)
		}
		os.Exit(1)
	}
}
