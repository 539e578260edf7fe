package generated

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/pflag"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli/helmcmd"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// UserDocsWordBudget is how many words the user documentation (README.md
// and docs/*.md, not docs/dev) may have, counted as wc -w counts them: a
// user reads the pages of one job, and each page says what to run, what
// it gives and its limits; design, measurements and tests go to docs/dev.
const UserDocsWordBudget = 15000

// userDocs are the pages of the user documentation, relative to the
// repository's top.
func userDocs(t *testing.T) []string {
	t.Helper()
	root := testtools.Root()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs := []string{"README.md"}
	for _, p := range pages {
		rel, _ := filepath.Rel(root, p)
		docs = append(docs, filepath.ToSlash(rel))
	}
	if len(docs) < 10 {
		t.Fatalf("%d user docs: the glob finds too few", len(docs))
	}
	return docs
}

// words counts as wc -w does: maximal runs of non-space bytes.
func words(b []byte) int { return len(bytes.Fields(b)) }

// TestWords: words counts as wc -w.
func TestWords(t *testing.T) {
	for text, want := range map[string]int{"": 0, "  ": 0, "a": 1, " a  b\n\tc ": 3, "`x`|y — z\n": 3, "é,ü ß": 2} {
		if got := words([]byte(text)); got != want {
			t.Errorf("words(%q) = %d, want %d", text, got, want)
		}
	}
}

// TestUserDocsWordBudget: the user documentation stays within
// UserDocsWordBudget words.
func TestUserDocsWordBudget(t *testing.T) {
	total := 0
	var each []string
	for _, d := range userDocs(t) {
		b, err := os.ReadFile(filepath.Join(testtools.Root(), d))
		if err != nil {
			t.Fatal(err)
		}
		n := words(b)
		total += n
		each = append(each, d+" "+strconv.Itoa(n))
	}
	if total > UserDocsWordBudget {
		t.Errorf("the user docs have %d words, over the budget of %d (move design, measurements and tests to docs/dev):\n%s",
			total, UserDocsWordBudget, strings.Join(each, "\n"))
	}
	t.Logf("%d words of %d", total, UserDocsWordBudget)
}

// TestUserDocsNameNoTest: the user documentation names no test (a test
// function, an e2e/ package, "the e2e test"): a user reads what a command
// does, and docs/dev which test shows it. HTML comments, the markers tests
// find their sections by, are not shown.
func TestUserDocsNameNoTest(t *testing.T) {
	comment := regexp.MustCompile(`(?s)<!--.*?-->`)
	test := regexp.MustCompile(`\bTest[A-Z]\w+|\be2e/|\be2e tests?\b`)
	for _, d := range userDocs(t) {
		b, err := os.ReadFile(filepath.Join(testtools.Root(), d))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range test.FindAllString(comment.ReplaceAllString(string(b), ""), -1) {
			t.Errorf("%s names a test: %q", d, m)
		}
	}
}

// otherPrograms are the programs the user docs may run besides the
// renderer and the tools TestDocCommands runs, each with why no test runs
// it here.
var otherPrograms = map[string]string{
	"awk":       "POSIX text tool, filters a command's output",
	"cat":       "POSIX",
	"cut":       "POSIX text tool",
	"diff":      "POSIX text tool, compares two outputs",
	"grep":      "POSIX text tool",
	"head":      "POSIX text tool",
	"sort":      "POSIX text tool",
	"uniq":      "POSIX text tool",
	"tee":       "POSIX",
	"[":         "the shell's test",
	"mkdir":     "POSIX",
	"tar":       "unpacks a release archive",
	"sha256sum": "GNU coreutils: verifies a release's checksums",
	"jq":        "JSON filter of a command's -o json output",
	"systemctl": "restarts the distribution's service on a node",
	"kubeadm":   "kubeadm's own commands, printed by plan and run against real nodes by e2e/leadermigration",
	"make":      "the Makefile's targets, run by CI",
	"git":       "the user's own repository",
	"crane":     "go-containerregistry's CLI, copies images by digest",
	"skopeo":    "copies images by digest",
	"cosign":    "sigstore's CLI: verifies the release's signatures; hack/sign's tests verify the same bundles with sigstore-go, the verifier cosign runs for them",
	"gpg":       "exports the key that verifies signatures",
	"tr":        "POSIX text tool",
	"curl":      "downloads a release's files",
	"go":        "go install of a release's tag",
	"aws":       "the AWS CLI: reads the user's account (check --aws reads the same, tested against moto in e2e/awsccm)",
}

// coveredByRunbook are the documents whose commands e2e/fleet's
// TestGitOpsRunbook runs, in order, against real clusters: a program of
// theirs not run here is run there.
var coveredByRunbook = map[string]bool{"docs/gitops.md": true}

// TestDocCommands: every command of the user docs' shell blocks is run or
// parsed. aws-ccm-renderer's (and aws-ccm-renderer-helm's, and helm
// aws-ccm's, and the --post-renderer-args of a helm command that runs the
// renderer) are parsed by the program's own cobra commands: an unknown
// command or flag, a missing argument or a value outside a flag's fixed
// values fails. helm, kubectl, kustomize and helmfile run with the doc's
// arguments and --help, which they parse before printing help. Any other
// program must be one of otherPrograms.
func TestDocCommands(t *testing.T) {
	root := testtools.Root()
	var all []docCommand
	for _, d := range userDocs(t) {
		b, err := os.ReadFile(filepath.Join(root, d))
		if err != nil {
			t.Fatal(err)
		}
		cmds, err := docCommands(d, string(b))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, cmds...)
	}
	if len(all) < 50 {
		t.Fatalf("%d commands in the user docs: the extraction finds too few", len(all))
	}
	tools := toolRunner{t: t, seen: map[string]error{}}
	counts := map[string]int{}
	for _, c := range all {
		prog := c.words[0]
		if strings.HasPrefix(prog, "bin/") {
			prog = strings.TrimPrefix(prog, "bin/") // the tools make builds
		}
		args := c.words[1:]
		switch {
		case prog == "aws-ccm-renderer" || prog == "aws-ccm-renderer-helm":
			counts["parsed"]++
			if err := parseRendererArgs(args); err != nil {
				t.Errorf("%s: %v", c, err)
			}
		case prog == "helm" && len(args) > 0 && args[0] == "aws-ccm":
			counts["parsed"]++
			if err := parseRendererArgs(args[1:]); err != nil {
				t.Errorf("%s: %v", c, err)
			}
		case prog == "helm" || prog == "helm4" || prog == "kubectl" || prog == "kustomize" || prog == "helmfile":
			counts["run"]++
			run := args
			if prog == "helm" || prog == "helm4" {
				var err error
				if run, err = withoutPostRenderer(args); err != nil {
					t.Errorf("%s: %v", c, err)
				}
			}
			if err := tools.parse(prog, run); err != nil {
				t.Errorf("%s: %v", c, err)
			}
			if prog == "helm" || prog == "helm4" {
				if pr := postRendererArgs(args); pr != nil {
					counts["parsed"]++
					if err := parseRendererArgs(pr); err != nil {
						t.Errorf("%s: its --post-renderer-args: %v", c, err)
					}
				}
			}
		case otherPrograms[prog] != "":
			counts["allowed"]++
		case coveredByRunbook[c.doc]:
			counts["runbook"]++
		default:
			t.Errorf("%s: %s is neither run nor parsed by a test: run it in TestDocCommands, or add it to otherPrograms with the reason", c, prog)
		}
	}
	t.Logf("%d commands: %v", len(all), counts)
}

// withoutPostRenderer returns a helm command's arguments without its
// --post-renderer, which Helm resolves while it parses the flag (Helm 3
// looks the program up on $PATH, Helm 4 the plugin among those installed),
// after checking that it names the renderer: its program (by name or path)
// or its Helm 4 plugin, aws-ccm.
func withoutPostRenderer(args []string) ([]string, error) {
	var out []string
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(args[i], "=")
		if name != "--post-renderer" {
			out = append(out, args[i])
			continue
		}
		if !hasValue && i+1 < len(args) {
			i++
			value = args[i]
		}
		if value != "aws-ccm" && value != "aws-ccm-renderer" && !strings.HasSuffix(value, "/aws-ccm-renderer") {
			return out, errorString("--post-renderer " + value + " is neither aws-ccm-renderer nor its Helm 4 plugin aws-ccm")
		}
	}
	return out, nil
}

// postRendererArgs are the --post-renderer-args of a helm command whose
// post-renderer is the renderer (by its name or its path), or nil.
func postRendererArgs(args []string) []string {
	var out []string
	renderer := false
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(args[i], "=")
		if !hasValue && i+1 < len(args) && (name == "--post-renderer" || name == "--post-renderer-args") {
			i++
			value = args[i]
		}
		switch name {
		case "--post-renderer":
			renderer = strings.HasSuffix(value, "aws-ccm-renderer") || value == "aws-ccm"
		case "--post-renderer-args":
			out = append(out, value)
		}
	}
	if !renderer {
		return nil
	}
	return append([]string{}, out...)
}

// placeholder is a value the docs leave to the reader: a variable, an
// upper-case name (DISTRO), an ellipsis or a <...>.
var placeholder = regexp.MustCompile(`\$|\.\.\.|…|<|^[A-Z][A-Z0-9_]*$`)

// openValues are flags whose completion lists a suggestion, not every
// value they take.
var openValues = map[string]bool{"kube-version": true}

// parseRendererArgs parses a command line of aws-ccm-renderer against the
// commands of aws-ccm-renderer-helm (the program that runs every one of
// them): the command it names, its flags, its arguments, and each flag
// whose completion is a fixed list against that list.
func parseRendererArgs(args []string) error {
	s := cli.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}
	root := cli.NewRootCommand(s, helmcmd.Commands)
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if cmd.DisableFlagParsing {
		return nil
	}
	if err := cmd.ParseFlags(rest); errors.Is(err, pflag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}
	if help, _ := cmd.Flags().GetBool("help"); help {
		return nil
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return err
	}
	var bad error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if bad != nil || openValues[f.Name] {
			return
		}
		complete, ok := cmd.GetFlagCompletionFunc(f.Name)
		if !ok || f.Value.Type() != "string" {
			return
		}
		values, _ := complete(cmd, nil, "")
		v := f.Value.String()
		if len(values) == 0 || placeholder.MatchString(v) || slices.Contains(values, v) {
			return
		}
		for _, c := range values {
			if name, _, _ := strings.Cut(c, "\t"); name == v {
				return
			}
		}
		bad = &flagValueError{flag: f.Name, value: v, values: values}
	})
	return bad
}

type flagValueError struct {
	flag, value string
	values      []string
}

func (e *flagValueError) Error() string {
	return "--" + e.flag + " " + e.value + ": not one of " + strings.Join(e.values, ", ")
}

// toolRunner runs the real tools with a command's arguments and --help,
// each distinct command once.
type toolRunner struct {
	t    *testing.T
	env  []string
	seen map[string]error
}

// parse runs the tool with args and --help: cobra parses the flags before
// it prints the help, so exit 0 means that the command and its flags are
// the tool's (TestToolHelpParsesFlags shows it of each tool).
func (r *toolRunner) parse(prog string, args []string) error {
	key := prog + "\x00" + strings.Join(args, "\x00")
	if err, ok := r.seen[key]; ok {
		return err
	}
	err := r.run(prog, append(slices.Clone(args), "--help"))
	r.seen[key] = err
	return err
}

func (r *toolRunner) run(prog string, args []string) error {
	if r.env == nil {
		r.env = toolEnv(r.t)
	}
	var bins []string
	switch prog {
	case "helm":
		// Either Helm: the docs' helm commands are Helm 3's or Helm 4's.
		bins = []string{testtools.Helm3(r.t), testtools.Helm4(r.t)}
	case "helm4":
		bins = []string{testtools.Helm4(r.t)}
	case "kubectl":
		bins = []string{testtools.Kubectl(r.t)}
	case "kustomize":
		bins = []string{testtools.Kustomize(r.t)}
	case "helmfile":
		bins = []string{testtools.Helmfile(r.t)}
	}
	var msgs []string
	for _, bin := range bins {
		cmd := exec.Command(bin, args...)
		cmd.Env = r.env
		cmd.Dir = testtools.Root()
		out, err := cmd.CombinedOutput()
		if err == nil {
			return nil
		}
		msgs = append(msgs, filepath.Base(bin)+": "+firstLine(out))
	}
	return errorString(strings.Join(msgs, "; "))
}

// toolEnv is Helm's test environment with the renderer on $PATH, which
// Helm 3 looks a --post-renderer up in while it parses the flag.
func toolEnv(t *testing.T) []string {
	env := testtools.HelmEnv(t)
	dir := filepath.Dir(testtools.Renderer(t))
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + dir + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
			return env
		}
	}
	return append(env, "PATH="+dir)
}

func firstLine(b []byte) string {
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimFunc(l, unicode.IsSpace); l != "" {
			return l
		}
	}
	return "(no output)"
}

type errorString string

func (e errorString) Error() string { return string(e) }

// TestToolHelpParsesFlags: what TestDocCommands rests on: each tool with
// --help exits 0 for its own flags and fails for a flag it does not have
// or a command it does not know.
func TestToolHelpParsesFlags(t *testing.T) {
	r := toolRunner{t: t, seen: map[string]error{}}
	for _, c := range []struct {
		prog string
		good []string
		bad  [][]string
	}{
		{"helm", []string{"template", "x", "y", "--namespace", "kube-system"}, [][]string{{"template", "x", "y", "--no-such-flag"}, {"no-such-command"}}},
		{"helm4", []string{"template", "x", "y", "--namespace", "kube-system"}, [][]string{{"template", "--no-such-flag"}}},
		{"kubectl", []string{"get", "nodes", "-o", "wide"}, [][]string{{"get", "nodes", "--no-such-flag"}, {"no-such-command"}}},
		{"kustomize", []string{"build", "--enable-alpha-plugins", "."}, [][]string{{"build", "--no-such-flag"}}},
		{"helmfile", []string{"template", "--skip-deps"}, [][]string{{"template", "--no-such-flag"}}},
	} {
		if err := r.parse(c.prog, c.good); err != nil {
			t.Errorf("%s %v --help: %v", c.prog, c.good, err)
		}
		for _, bad := range c.bad {
			if err := r.parse(c.prog, bad); err == nil {
				t.Errorf("%s %v --help passed: help does not parse the flags", c.prog, bad)
			}
		}
	}
}

// TestParseRendererArgs: the renderer's command lines fail for an unknown
// command, an unknown flag, a missing argument and a value outside a fixed
// list, and pass for placeholders and open values.
func TestParseRendererArgs(t *testing.T) {
	for _, args := range [][]string{
		{"--distro=rke2", "--mode=migrate"},
		{"plan", "--distro", "kubeadm", "--from", "none", "--kube-version", "v1.34.2"},
		{"plan", "--distro", "DISTRO", "--step", "ID"},
		{"check", "--release", "aws-ccm", "-n", "kube-system", "-o", "json"},
		{"template", "aws-ccm", "aws-cloud-controller-manager", "--distro=detect"},
		{"overlays", "--help"},
	} {
		if err := parseRendererArgs(args); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	for _, args := range [][]string{
		{"--distro=rke3"},
		{"--no-such-flag"},
		{"plan", "--distro", "rke2", "--phase", "later"},
		{"no-such-command"},
		{"plan", "--distro", "rke2", "extra"},
		{"check", "extra"},
	} {
		if err := parseRendererArgs(args); err == nil {
			t.Errorf("%v parsed", args)
		}
	}
}

// TestWithoutPostRenderer: the renderer as post-renderer is taken out of
// a helm command, in both spellings; another program is an error.
func TestWithoutPostRenderer(t *testing.T) {
	got, err := withoutPostRenderer([]string{"template", "a", "--post-renderer", "aws-ccm", "--post-renderer-args=--distro=rke2", "--post-renderer=/opt/bin/aws-ccm-renderer", "-n", "x"})
	if want := []string{"template", "a", "--post-renderer-args=--distro=rke2", "-n", "x"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("%q, %v; want %q", got, err, want)
	}
	if _, err := withoutPostRenderer([]string{"install", "--post-renderer", "kustomize"}); err == nil {
		t.Error("--post-renderer kustomize taken for the renderer")
	}
	if pr := postRendererArgs([]string{"install", "--post-renderer", "other", "--post-renderer-args", "--distro=rke"}); pr != nil {
		t.Errorf("the args of another post-renderer: %q", pr)
	}
	if pr := postRendererArgs([]string{"install", "--post-renderer", "aws-ccm", "--post-renderer-args", "--distro=rke", "--post-renderer-args=--mode=migrate"}); !slices.Equal(pr, []string{"--distro=rke", "--mode=migrate"}) {
		t.Errorf("post-renderer args %q", pr)
	}
}

// TestDocCommandsExtraction: the shell blocks of a document give the
// commands the shell would run.
func TestDocCommandsExtraction(t *testing.T) {
	doc := "text\n\n```sh\n# a comment\nhelm install a b \\\n  --set x=1   # the value\nVAR=1 sudo kubectl get nodes -o 'jsonpath={.items[*]}' | awk '{print $1}' > out.txt 2>&1\n" +
		"gen=$(kubectl get cm x -o name)\ncat <<EOF | kubectl apply -f -\nkind: X\nEOF\n[ -n \"$f\" ] && echo \"a $(date) b\"\n```\n\n```yaml\nkind: X\n```\n\n" +
		"```console\n$ aws-ccm-renderer check\n  ✓ node  fine\n$ aws-ccm-renderer plan \\\n    --distro rke2\nChecklist\n```\n"
	got, err := docCommands("d.md", doc)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range got {
		lines = append(lines, c.String())
	}
	want := []string{
		"d.md:5: helm install a b --set x=1",
		"d.md:7: kubectl get nodes -o jsonpath={.items[*]}",
		"d.md:7: awk {print $1}",
		"d.md:8: kubectl get cm x -o name",
		"d.md:9: cat",
		"d.md:9: kubectl apply -f -",
		"d.md:12: [ -n $f ]",
		"d.md:12: date",
		"d.md:12: echo a $(date) b",
		"d.md:20: aws-ccm-renderer check",
		"d.md:22: aws-ccm-renderer plan --distro rke2",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("commands:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	for _, bad := range []string{"```sh\necho 'open\n```\n", "```sh\necho \"open\n```\n", "```sh\ncat <<EOF\nnever closed\n```\n", "```sh\necho $(date\n```\n"} {
		if _, err := docCommands("d.md", bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
