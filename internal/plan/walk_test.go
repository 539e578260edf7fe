package plan_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// The defect classes TestWalk looks for.
const (
	walkVar     = "variable used before it is set"
	walkFile    = "file read before it is written"
	walkHint    = "--step hint that prints another step"
	walkFlagIn  = "flag said to be in a step that lacks it"
	walkTest    = "a test named in user-visible text"
	walkVersion = "another minor's version claim"
	walkHead    = "input not named at the plan's head"
	walkAbsent  = "a read of one object that fails when it is absent"
)

var walkClasses = []string{walkVar, walkFile, walkHead, walkHint, walkFlagIn, walkTest, walkVersion, walkAbsent}

// wellKnownEnv are the variables a shell has without the plan.
var wellKnownEnv = map[string]bool{"PATH": true, "HOME": true, "USER": true, "PWD": true, "SHELL": true, "TMPDIR": true,
	"KUBECONFIG": true, "AWS_PROFILE": true, "AWS_REGION": true, "AWS_DEFAULT_REGION": true}

// walkPlans are the plans TestWalk walks: those of plans(), and every
// distribution × --from (none given, and each value) × minor 1.20–1.37
// that Build takes, each distinct plan once.
func walkPlans(t *testing.T) map[string]*plan.Plan {
	t.Helper()
	out := map[string]*plan.Plan{}
	seen := map[[32]byte]bool{}
	add := func(name string, p *plan.Plan) {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if h := sha256.Sum256(b); !seen[h] {
			seen[h] = true
			out[name] = p
		}
	}
	named := plans(t)
	names := make([]string, 0, len(named))
	for n := range named {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		add(n, named[n])
	}
	for _, d := range plan.Distros {
		for _, from := range append([]string{""}, plan.Froms...) {
			for minor := 20; minor <= 37; minor++ {
				o := plan.DefaultOptions()
				o.Distro, o.From, o.KubeVersion = d, from, fmt.Sprintf("v1.%d.3", minor)
				p, err := plan.Build(o)
				if err != nil {
					continue
				}
				add(fmt.Sprintf("%s-%s-1.%d", d, p.From, minor), p)
			}
		}
	}
	return out
}

// shellScan is what a command's shell reads and sets: the variables it
// expands and assigns and the files it reads and writes, each with its
// offset in the command.
type shellScan struct {
	uses, defs      []shellName
	reads, writes   []shellName
	words           []string
	blanked, quoted string
}

type shellName struct {
	name string
	at   int
}

var (
	reUse      = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)
	reDef      = regexp.MustCompile(`(?:^|[\s;&|({]|\$\()(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=`)
	reRead     = regexp.MustCompile(`(?:^|[\s;&|(])read\s+(?:-r\s+)?([A-Za-z_][A-Za-z0-9_]*)`)
	reFor      = regexp.MustCompile(`(?:^|[\s;&|(])for\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b`)
	reRedirOut = regexp.MustCompile(`(?:^|[^0-9&<])>>?\s*([^\s;&|()<>]+)`)
	reRedirIn  = regexp.MustCompile(`(?:^|[^<])<\s*([^\s;&|()<>]+)`)
	reTee      = regexp.MustCompile(`\btee\s+(?:-a\s+)?([^\s;&|()]+)`)
	reOutFlag  = regexp.MustCompile(`\s(?:-o|--output-file|--out)\s+([^\s;&|()]+)`)
	reCp       = regexp.MustCompile(`\bcp\s+(?:-\w+\s+)*[^\s;&|()]+\s+([^\s;&|()]+)`)
	reCat      = regexp.MustCompile(`\bcat[ \t]+((?:[^\s;&|()<>-][^\s;&|()<>]*[ \t]*)+)`)
	reFFlag    = regexp.MustCompile(`\s(?:-f|--config|--filename)\s+([^\s;&|()]+)`)
	reDiff     = regexp.MustCompile(`\bdiff\s+(?:-\w+\s+)*([^\s;&|()]+)\s+([^\s;&|()]+)`)
	reFileURL  = regexp.MustCompile(`file://([^\s;&|()]+)`)
	reRm       = regexp.MustCompile(`\brm\s+(?:-\w+\s+)*[^\s;&|()]+`)
	reTestFlag = regexp.MustCompile(`\[\s+!?\s*-f\s+\S+`)
)

// blank removes what the shell does not expand or run: single-quoted text
// and comments. Double quotes stay, and what they hold; a command
// substitution in them quotes anew. It is the walk's own reading, kept
// apart from the plan's (unquoted, in inputs.go) on purpose: the walk
// checks the inputs the plan lists, and a shared scanner would hide its
// own mistakes from that check.
func blank(sh string) string {
	var b strings.Builder
	// The quoting contexts: 'n' the command line or a $( ), 'd' double
	// quotes, 'p' a parenthesis in a command, 's' single quotes, 'c' a
	// comment.
	stack := []byte{'n'}
	for i := 0; i < len(sh); i++ {
		c, top := sh[i], stack[len(stack)-1]
		switch {
		case top == 'c':
			if c == '\n' {
				stack = stack[:len(stack)-1]
				b.WriteByte(c)
			} else {
				b.WriteByte(' ')
			}
		case top == 's':
			if c == '\'' {
				stack = stack[:len(stack)-1]
			}
			b.WriteByte(' ')
		case c == '\\' && i+1 < len(sh):
			b.WriteString("  ")
			i++
		case c == '$' && i+1 < len(sh) && sh[i+1] == '(':
			stack = append(stack, 'n')
			b.WriteString("$(")
			i++
		case top == 'd':
			if c == '"' {
				stack = stack[:len(stack)-1]
			}
			b.WriteByte(c)
		case c == '"':
			stack = append(stack, 'd')
			b.WriteByte(c)
		case c == '\'':
			stack = append(stack, 's')
			b.WriteByte(' ')
		case c == '#' && (i == 0 || strings.ContainsRune(" \t\n;", rune(sh[i-1]))):
			stack = append(stack, 'c')
			b.WriteByte(' ')
		case c == '(':
			stack = append(stack, 'p')
			b.WriteByte(c)
		case c == ')' && len(stack) > 1:
			stack = stack[:len(stack)-1]
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// dropDoubleQuoted writes what double quotes hold as one x, for the file
// patterns (a file name is never in double quotes in the plans; "$f" is a
// variable's).
func dropDoubleQuoted(s string) string {
	var b strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			in = !in
			b.WriteByte('"')
			if in {
				b.WriteByte('x')
			}
		case !in:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// relativeFile reports whether a word names a file in the workstation's
// working directory: what the plan's commands make and pass on. Files of
// the nodes (absolute paths) are the distribution's.
func relativeFile(w string) bool {
	return reRelFile.MatchString(w)
}

var reRelFile = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*(?:/[A-Za-z0-9._-]+)*\.[a-z0-9]+$`)

var outputFormats = map[string]bool{"wide": true, "yaml": true, "json": true, "name": true, "text": true, "table": true}

func scanShell(sh string) shellScan {
	bl := blank(sh)
	s := shellScan{blanked: bl}
	for _, m := range reUse.FindAllStringSubmatchIndex(bl, -1) {
		s.uses = append(s.uses, shellName{bl[m[2]:m[3]], m[0]})
	}
	for _, re := range []*regexp.Regexp{reDef, reRead, reFor} {
		for _, m := range re.FindAllStringSubmatchIndex(bl, -1) {
			s.defs = append(s.defs, shellName{bl[m[2]:m[3]], m[2]})
		}
	}
	files := dropDoubleQuoted(reTestFlag.ReplaceAllStringFunc(reRm.ReplaceAllStringFunc(bl, func(m string) string {
		return strings.Repeat(" ", len(m))
	}), func(m string) string { return strings.Repeat(" ", len(m)) }))
	s.quoted = files
	addFile := func(to *[]shellName, w string, at int) {
		if relativeFile(w) {
			*to = append(*to, shellName{w, at})
		}
	}
	for _, re := range []*regexp.Regexp{reRedirOut, reTee, reCp} {
		for _, m := range re.FindAllStringSubmatchIndex(files, -1) {
			addFile(&s.writes, files[m[2]:m[3]], m[2])
		}
	}
	for _, m := range reOutFlag.FindAllStringSubmatchIndex(files, -1) {
		if w := files[m[2]:m[3]]; !outputFormats[w] {
			addFile(&s.writes, w, m[2])
		}
	}
	for _, re := range []*regexp.Regexp{reRedirIn, reFFlag, reFileURL} {
		for _, m := range re.FindAllStringSubmatchIndex(files, -1) {
			addFile(&s.reads, files[m[2]:m[3]], m[2])
		}
	}
	for _, m := range reCat.FindAllStringSubmatchIndex(files, -1) {
		for _, w := range strings.Fields(files[m[2]:m[3]]) {
			addFile(&s.reads, w, m[2])
		}
	}
	for _, m := range reDiff.FindAllStringSubmatchIndex(files, -1) {
		addFile(&s.reads, files[m[2]:m[3]], m[2])
		addFile(&s.reads, files[m[4]:m[5]], m[4])
	}
	s.words = strings.Fields(files)
	return s
}

// TestShellScan: what the walk reads in a command.
func TestShellScan(t *testing.T) {
	s := scanShell(`X=$(aws iam get --id "$INSTANCE_ID" --query 'a[?b].$NF' | awk -F/ '{print $NF}') # $COMMENT
for n in a b; do echo "$n" "${Y##*/}"; done
kubectl get nodes | tee nodes-before.txt > /dev/null 2>&1
awk '{print $1}' nodes-before.txt | diff - nodes-now.txt
rm -f old.yaml; [ -f "$f" ] && cat in.txt < in2.txt
kubectl apply -f a.yaml -o yaml; curl -o got.tgz x
aws iam put-role-policy --policy-document file://p.json`)
	var uses, defs, reads, writes []string
	for _, u := range s.uses {
		uses = append(uses, u.name)
	}
	for _, d := range s.defs {
		defs = append(defs, d.name)
	}
	for _, r := range s.reads {
		reads = append(reads, r.name)
	}
	for _, w := range s.writes {
		writes = append(writes, w.name)
	}
	for _, c := range []struct {
		what      string
		got, want []string
	}{
		{"uses", uses, []string{"INSTANCE_ID", "n", "Y", "f"}},
		{"defs", defs, []string{"X", "n"}},
		{"reads", reads, []string{"in2.txt", "a.yaml", "p.json", "in.txt", "nodes-now.txt"}},
		{"writes", writes, []string{"nodes-before.txt", "got.tgz"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: %q, want %q", c.what, c.got, c.want)
		}
	}
}

type walkDefect struct{ class, plan, step, detail string }

// declaredInputs are the inputs a plan's JSON names at its head: those the
// operator supplies (no step makes them), and all, by name.
func declaredInputs(t *testing.T, p *plan.Plan) (operator, all map[string]bool) {
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Inputs []struct {
			Name string `json:"name"`
			Step string `json:"step"`
		} `json:"inputs"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	operator, all = map[string]bool{}, map[string]bool{}
	for _, i := range m.Inputs {
		name := strings.TrimPrefix(i.Name, "$")
		all[name] = true
		if i.Step == "" {
			operator[name] = true
		}
	}
	return operator, all
}

// stepProse is the text of a step a person reads, not its commands.
func stepProse(s plan.Step) []string {
	texts := []string{s.Title, s.Why, s.Rollback.Description}
	texts = append(texts, s.Notes...)
	for _, sn := range s.Snippets {
		texts = append(texts, sn.Note)
	}
	for _, c := range append(slices.Clone(s.Commands), s.Rollback.Commands...) {
		texts = append(texts, c.Description, c.Where)
	}
	for _, c := range s.Checks {
		texts = append(texts, c.Description, c.Expect)
		if c.Command != nil {
			texts = append(texts, c.Command.Description, c.Command.Where)
		}
	}
	return texts
}

// snippetFile is the file a snippet writes, when it is one of the
// workstation's: the first word of its File.
func snippetFile(sn plan.Snippet) string {
	w, _, _ := strings.Cut(sn.File, " ")
	if relativeFile(w) {
		return w
	}
	return ""
}

var (
	reStepHint  = regexp.MustCompile("aws-ccm-renderer plan((?: [^\\s`()]+)*?) --step[ =]([^\\s`()]+)")
	reStepID    = regexp.MustCompile(`^(before|during|after)\.[a-z0-9-]+$`)
	reInStep    = regexp.MustCompile(`\bin ((?:before|during|after)\.[a-z0-9-]*[a-z0-9])`)
	reFlag      = regexp.MustCompile(`--[a-z][a-z0-9-]*(?:=[^\s;)]+)?`)
	reTestName  = regexp.MustCompile(`\bTest[A-Z]\w+|e2e/`)
	reVersionOf = regexp.MustCompile(`\bv1\.(\d+)(?:\.\d+)? CCM\b|\bCCM v1\.(\d+)\b`)
)

// hintPlans builds the plans the hints name, once each.
type hintPlans struct {
	t     *testing.T
	cache map[string]*plan.Plan
	errs  map[string]string
}

func (h *hintPlans) build(args []string) (*plan.Plan, string) {
	key := strings.Join(args, "\x00")
	if p, ok := h.cache[key]; ok {
		return p, h.errs[key]
	}
	out, errOut, code := runCLI(h.t, nil, append(append([]string{"plan"}, args...), "-o", "json")...)
	var p *plan.Plan
	if code == 0 {
		p = new(plan.Plan)
		if err := json.Unmarshal([]byte(out), p); err != nil {
			h.t.Fatal(err)
		}
	}
	h.cache[key], h.errs[key] = p, strings.TrimSpace(errOut)
	return p, h.errs[key]
}

// walkRenderings are a plan as a person reads it: text and Markdown, in
// full and as a checklist, each run of white space one space.
func walkRenderings(t *testing.T, p *plan.Plan) []string {
	var out []string
	for _, brief := range []bool{false, true} {
		for _, f := range []string{plan.FormatText, plan.FormatMarkdown} {
			var b bytes.Buffer
			write := plan.Write
			if brief {
				write = plan.WriteBrief
			}
			if err := write(&b, p, f); err != nil {
				t.Fatal(err)
			}
			out = append(out, strings.Join(strings.Fields(b.String()), " "))
		}
	}
	return out
}

// walk reads one plan in order, as an operator runs it, and returns its
// defects.
func walk(t *testing.T, name string, p *plan.Plan, hints *hintPlans) []walkDefect {
	var defects []walkDefect
	report := func(class, step, detail string) {
		if d := (walkDefect{class, name, step, detail}); !slices.Contains(defects, d) {
			defects = append(defects, d)
		}
	}
	inputs, named := declaredInputs(t, p)
	minor, _ := strconv.Atoi(strings.Split(p.KubernetesVersion, ".")[1])
	steps := allSteps(p)

	// The workstation's files the plan makes: what its prose may name
	// once they exist.
	made := map[string]bool{}
	for _, s := range steps {
		for _, sn := range s.Snippets {
			if f := snippetFile(sn); f != "" {
				made[f] = true
			}
		}
		for _, c := range allStepCommands(s) {
			for _, w := range scanShell(c.Shell).writes {
				made[w.name] = true
			}
		}
	}

	set, written := map[string]bool{}, map[string]bool{}
	for _, s := range steps {
		for _, sn := range s.Snippets {
			if f := snippetFile(sn); f != "" {
				written[f] = true
			}
		}
		// A step's commands set what later steps use; its rollback's only
		// what the rollback itself uses.
		stepSet, stepWritten := set, written
		for i, c := range allStepCommands(s) {
			rollback := i >= len(stepCommands(s))
			if rollback {
				stepSet, stepWritten = mapsClone(set), mapsClone(written)
			}
			// A step that says what to do when an object is absent reads
			// it without failing the shell (set -e runs the plan on).
			if !rollback && getsOneObject(c.Argv) {
				report(walkAbsent, s.ID, strings.Join(c.Argv, " "))
			}
			sc := scanShell(c.Shell)
			for _, u := range sc.uses {
				local := slices.ContainsFunc(sc.defs, func(d shellName) bool { return d.name == u.name && d.at < u.at })
				if !local && !stepSet[u.name] && !inputs[u.name] && !wellKnownEnv[u.name] {
					report(walkVar, s.ID, "$"+u.name)
				}
				if !local && !named[u.name] && !wellKnownEnv[u.name] {
					report(walkHead, s.ID, "$"+u.name)
				}
			}
			// A file the plan makes, named as an argument (awk, grep, rke
			// up's cluster.yml), is read too.
			reads := slices.Clone(sc.reads)
			for _, w := range sc.words {
				w = strings.Trim(w, `"'`)
				if made[w] && !slices.ContainsFunc(sc.writes, func(x shellName) bool { return x.name == w }) &&
					!slices.ContainsFunc(reads, func(x shellName) bool { return x.name == w }) {
					reads = append(reads, shellName{w, strings.Index(sc.quoted, w)})
				}
			}
			for _, r := range reads {
				local := slices.ContainsFunc(sc.writes, func(w shellName) bool { return w.name == r.name && w.at < r.at })
				if !local && !stepWritten[r.name] && !inputs[r.name] {
					report(walkFile, s.ID, r.name)
				}
				if !local && !named[r.name] {
					report(walkHead, s.ID, r.name)
				}
			}
			for _, d := range sc.defs {
				stepSet[d.name] = true
			}
			for _, w := range sc.writes {
				stepWritten[w.name] = true
			}
		}
		// The prose names a file the plan makes only once it is made (or
		// by the step that makes it).
		for _, text := range stepProse(s) {
			for f := range made {
				if strings.Contains(text, f) && !written[f] && !inputs[f] && !stepWrites(s, f) {
					report(walkFile, s.ID, f+" (named in the prose)")
				}
			}
			for _, m := range reTestName.FindAllString(text, -1) {
				report(walkTest, s.ID, m)
			}
			for _, m := range reVersionOf.FindAllStringSubmatch(text, -1) {
				v := m[1] + m[2]
				if v != strconv.Itoa(minor) {
					report(walkVersion, s.ID, strings.TrimSpace(m[0]))
				}
			}
			// A flag said to be in a step: in that step's commands.
			for _, m := range reInStep.FindAllStringSubmatchIndex(text, -1) {
				start := max(strings.LastIndexAny(text[:m[0]], "(:"), strings.LastIndex(text[:m[0]], ". "), 0)
				target, ok := findStep(p, text[m[2]:m[3]])
				for _, flag := range reFlag.FindAllString(text[start:m[0]], -1) {
					flag = strings.TrimRight(flag, ".,")
					if !ok {
						report(walkFlagIn, s.ID, flag+" in "+text[m[2]:m[3]]+" (no such step)")
						continue
					}
					if !slices.ContainsFunc(allStepCommands(target), func(c plan.Command) bool {
						return strings.Contains(c.Shell, flag) || slices.Contains(c.Argv, flag)
					}) {
						report(walkFlagIn, s.ID, flag+" in "+target.ID)
					}
				}
			}
		}
	}
	for _, text := range []string{p.Title, p.Summary} {
		for _, m := range reTestName.FindAllString(text, -1) {
			report(walkTest, "", m)
		}
	}

	// Every --step hint prints, with its flags, a step of the plan it is
	// in (a placeholder ID: each of this plan's steps, the same), or one
	// that exists in the plan its flags name.
	seen := map[string]bool{}
	for _, r := range walkRenderings(t, p) {
		for _, m := range reStepHint.FindAllStringSubmatch(r, -1) {
			if seen[m[0]] {
				continue
			}
			seen[m[0]] = true
			args := strings.Fields(m[1])
			for i, a := range args {
				if strings.HasPrefix(a, "<") && i > 0 && args[i-1] == "--kube-version" {
					args[i] = fmt.Sprintf("1.%d", minor+1) // "<the new version>"
				}
			}
			id := strings.TrimRight(m[2], ".,:;")
			if !reStepID.MatchString(id) {
				// --step filters the plan its other flags print: that
				// plan's steps are this one's.
				if hp, errText := hints.build(append(slices.Clone(args), "--step", steps[0].ID)); hp == nil {
					report(walkHint, "", m[0]+": "+errText)
					continue
				}
				hp, errText := hints.build(args)
				if hp == nil {
					report(walkHint, "", m[0]+": "+errText)
					continue
				}
				for _, s := range steps {
					if got, ok := findStep(hp, s.ID); !ok || mustJSON(t, got) != mustJSON(t, s) {
						report(walkHint, "", m[0]+": "+s.ID+" is another plan's")
						break
					}
				}
				continue
			}
			if _, ok := releases.Latest(minor + 1); !ok && slices.Contains(args, fmt.Sprintf("1.%d", minor+1)) {
				continue // no release of the next minor to build its plan
			}
			if hp, errText := hints.build(append(args, "--step", id)); hp == nil {
				report(walkHint, "", m[0]+": "+errText)
			}
		}
	}
	return defects
}

// getsOneObject: kubectl get KIND NAME without --ignore-not-found (or an
// output that names what it prints).
func getsOneObject(argv []string) bool {
	if len(argv) < 2 || argv[0] != "kubectl" || argv[1] != "get" || slices.Contains(argv, "--ignore-not-found") {
		return false
	}
	var words []string
	for i := 2; i < len(argv); i++ {
		switch a := argv[i]; {
		case a == "-o" || a == "-n" || a == "--namespace" || a == "-l" || a == "--selector":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			words = append(words, a)
		}
	}
	return len(words) >= 2
}

func stepWrites(s plan.Step, f string) bool {
	for _, sn := range s.Snippets {
		if snippetFile(sn) == f {
			return true
		}
	}
	for _, c := range allStepCommands(s) {
		if slices.ContainsFunc(scanShell(c.Shell).writes, func(w shellName) bool { return w.name == f }) {
			return true
		}
	}
	return false
}

// allStepCommands are a step's commands, its checks' and its rollback's,
// in that order.
func allStepCommands(s plan.Step) []plan.Command {
	return append(stepCommands(s), s.Rollback.Commands...)
}

func mapsClone(m map[string]bool) map[string]bool {
	c := make(map[string]bool, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWalk: every plan runs as written. Each plan is walked in order, as
// an operator runs it: a variable is set (VAR=, export VAR=, read VAR,
// for VAR in) before a command uses it, unless the plan names it at its
// head as one the operator supplies (or the shell has it); a file is
// written (> f, tee f, -o f, cp, a snippet) before a command reads it or
// the prose names it; every "plan ... --step X" hint prints, with its own
// flags, a step that exists (and for a placeholder X this plan's steps);
// a flag the prose says is in a step is in that step's commands; no text
// names a test; no version claim is another minor's.
func TestWalk(t *testing.T) {
	ps := walkPlans(t)
	names := make([]string, 0, len(ps))
	for n := range ps {
		names = append(names, n)
	}
	sort.Strings(names)
	hints := &hintPlans{t: t, cache: map[string]*plan.Plan{}, errs: map[string]string{}}
	var all []walkDefect
	nSteps := 0
	for _, n := range names {
		nSteps += len(allSteps(ps[n]))
		all = append(all, walk(t, n, ps[n], hints)...)
	}
	byClass := map[string]int{}
	details := map[string]map[string]bool{}
	for _, d := range all {
		byClass[d.class]++
		if details[d.class] == nil {
			details[d.class] = map[string]bool{}
		}
		details[d.class][d.step+": "+d.detail] = true
	}
	t.Logf("walked %d plans, %d steps; %d defects", len(ps), nSteps, len(all))
	for _, c := range walkClasses {
		t.Logf("  %s: %d (%d distinct)", c, byClass[c], len(details[c]))
	}
	for _, c := range walkClasses {
		var ds []string
		for d := range details[c] {
			ds = append(ds, d)
		}
		sort.Strings(ds)
		for _, d := range ds {
			var in []string
			for _, x := range all {
				if x.class == c && x.step+": "+x.detail == d && !slices.Contains(in, x.plan) {
					in = append(in, x.plan)
				}
			}
			more := ""
			if len(in) > 3 {
				more = fmt.Sprintf(" and %d more", len(in)-3)
				in = in[:3]
			}
			t.Errorf("%s: %s (%s%s)", c, d, strings.Join(in, ", "), more)
		}
	}
}

// TestAsWritten: what issue 42 found in the prose of the plans of 1.27 and
// later, beside TestWalk's classes. Each row fails on the plans before its
// fix.
func TestAsWritten(t *testing.T) {
	build := func(d, from, kube string) *plan.Plan {
		o := plan.DefaultOptions()
		o.Distro, o.From, o.KubeVersion = distros.Distro(d), from, kube
		return mustBuild(t, o)
	}
	for _, c := range []struct {
		name string
		p    *plan.Plan
		bad  func(p *plan.Plan) string
	}{
		{"RKE2 builtin: agents registered again, servers replaced, not 'every node, control-plane nodes first'", build("rke2", "builtin", "1.30"), reregisterAgents},
		{"K3s builtin: the same", build("k3s", "builtin", "1.34"), reregisterAgents},
		{"kubeadm new: the configuration's gate speaks of kubeadm's files, not agents or a provisioning cluster", build("kubeadm", "new", "1.37"),
			func(p *plan.Plan) string {
				s := step(t, p, "before.cluster-config")
				return hasNot(s.Checks[0].Expect, "agent", "provisioning cluster")
			}},
		{"RKE1 new: the same for cluster.yml", build("rke", "new", "1.32"),
			func(p *plan.Plan) string {
				return hasNot(step(t, p, "before.cluster-config").Checks[0].Expect, "agent", "provisioning cluster")
			}},
		{"RKE2 builtin: no instance ID from nodes-before.txt, whose provider IDs are rke2://", build("rke2", "builtin", "1.36"), noInstanceIDFromNodes},
		{"kubeadm none: no instance ID from nodes-before.txt, whose provider IDs are empty", build("kubeadm", "none", "1.34"), noInstanceIDFromNodes},
		{"RKE2 new: after a manifests-folder install no check names a Helm release (there is none)", build("rke2", "new", "1.37"), noReleaseCheck},
		{"K3s new: the same", build("k3s", "new", "1.34"), noReleaseCheck},
		{"RKE2 new: the first server's check of a provisioning cluster comes once the cluster is created", build("rke2", "new", "1.37"), provisioningAfterCreate},
		{"K3s new: the same", build("k3s", "new", "1.35"), provisioningAfterCreate},
		{"K3s builtin: the etcd snapshot, taken on one server, is run on one server", build("k3s", "builtin", "1.37"),
			func(p *plan.Plan) string {
				for _, c := range step(t, p, "before.etcd-snapshot").Commands {
					if strings.Contains(c.Description, "On one server") && c.Where != "the first server" {
						return "run on " + c.Where
					}
				}
				return ""
			}},
		{"in-tree: the instance ID is the last part of an aws:/// provider ID in nodes-before.txt", build("kubeadm", "", "1.26"),
			func(p *plan.Plan) string {
				for _, in := range p.Inputs {
					if in.Name == "INSTANCE_ID" {
						return has(in.Source, "nodes-before.txt")
					}
				}
				return "no input INSTANCE_ID"
			}},
	} {
		if problem := c.bad(c.p); problem != "" {
			t.Errorf("%s: %s", c.name, problem)
		}
	}
}

func noReleaseCheck(p *plan.Plan) string {
	for _, s := range allSteps(p) {
		for _, c := range allStepCommands(s) {
			if c.Kind == plan.KindCheck && strings.Contains(c.Shell, "--release") {
				return s.ID + ": " + c.Shell
			}
		}
	}
	return ""
}

func provisioningAfterCreate(p *plan.Plan) string {
	at := ""
	for _, s := range allSteps(p) {
		for _, c := range s.Checks {
			if c.Command != nil && strings.Contains(c.Command.Shell, "addons.k3s.cattle.io") {
				at = s.ID
			}
		}
	}
	if at != "during.create" {
		return "the check is in " + at
	}
	return ""
}

func reregisterAgents(p *plan.Plan) string {
	for _, s := range allSteps(p) {
		if s.ID != "during.reregister-nodes" {
			continue
		}
		for _, c := range allStepCommands(s) {
			if strings.Contains(c.Shell, "-agent") && strings.Contains(c.Where, "control-plane") {
				return fmt.Sprintf("an agent's command runs on %q", c.Where)
			}
		}
		return has(strings.Join(s.Notes, " "), "Replace servers one at a time")
	}
	return "no during.reregister-nodes"
}

// TestConfigChecksRun runs each plan's check of the nodes' configuration
// as written (without sudo, the node's files under a directory of its
// own) on a node that holds the step's snippet and no config.yaml.d: it
// prints the snippet's keys and exits 0.
func TestConfigChecksRun(t *testing.T) {
	abs := regexp.MustCompile(`(^|[\s"'=])/etc/`)
	for _, d := range []string{"rke2", "k3s"} {
		for _, from := range []string{plan.FromNew, plan.FromNone, plan.FromBuiltin} {
			o := plan.DefaultOptions()
			o.Distro, o.From, o.KubeVersion = distros.Distro(d), from, "1.37"
			p := mustBuild(t, o)
			for _, s := range allSteps(p) {
				for _, c := range s.Checks {
					if c.Command == nil || !strings.Contains(c.Command.Shell, "/etc/rancher/"+d+"/config.yaml") {
						continue
					}
					i := slices.IndexFunc(s.Snippets, func(sn plan.Snippet) bool { return strings.HasPrefix(sn.File, "/etc/rancher/"+d+"/config.yaml") })
					if i < 0 {
						t.Fatalf("%s --from=%s %s: a check of config.yaml beside no snippet of it", d, from, s.ID)
					}
					root := t.TempDir()
					file := filepath.Join(root, "etc/rancher", d, "config.yaml")
					if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(file, []byte(s.Snippets[i].Content), 0o600); err != nil {
						t.Fatal(err)
					}
					shell := abs.ReplaceAllString(strings.ReplaceAll(c.Command.Shell, "sudo ", ""), "${1}"+root+"/etc/")
					out, err := exec.Command("sh", "-c", shell).CombinedOutput()
					if err != nil || len(bytes.TrimSpace(out)) == 0 {
						t.Errorf("%s --from=%s %s: %s on a node with the snippet: %v, output %q", d, from, s.ID, c.Command.Shell, err, out)
					}
				}
			}
		}
	}
}

func noInstanceIDFromNodes(p *plan.Plan) string {
	b, _ := json.Marshal(p)
	if regexp.MustCompile(`INSTANCE_ID[^"]*nodes-before\.txt`).Match(b) {
		return "INSTANCE_ID taken from nodes-before.txt"
	}
	return ""
}
