package plan

import (
	"slices"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
)

// What the plan's commands read that they do not make themselves: the
// shell variables they expand and the workstation's files they name. Each
// is made by an earlier step (a command sets the variable or writes the
// file, or the step's snippet is the file) or supplied by the operator:
// operatorInput says what each of those is.

// operatorInput is an input the operator supplies, by name: its kind and
// what it is.
func (b *builder) operatorInput(name string) (kind, source string) {
	switch name {
	case "CLUSTER_ID":
		s := "yours: the <id> of the cluster's kubernetes.io/cluster/<id> tag"
		if b.r.From == FromNew {
			s += " (you choose it)"
		}
		return InputVariable, s
	case "INSTANCE_ID":
		s := "yours: a control-plane instance's ID"
		if b.r.From == FromInTree {
			s += ", the last part of its PROVIDER-ID in nodes-before.txt"
		} else {
			s += " (aws ec2 describe-instances)"
		}
		if b.r.From == FromNew {
			s += "; with none running yet, set CP_ROLE to the ARN of the role their instance profile will have"
		}
		return InputVariable, s
	case "NODE":
		return InputVariable, "yours: the name of the node a command works on, one node at a time"
	case "CLUSTER_NAME":
		return InputVariable, "yours: the cluster's name in Rancher (kubectl -n fleet-default get clusters.provisioning.cattle.io)"
	case "ECR_IMAGE":
		return InputVariable, "yours: one of the images the first command of before.ecr-credentials lists, set on the node"
	case "cluster.yml":
		if b.r.From == FromNew {
			return InputFile, "yours: the cluster's RKE configuration, with the snippet of before.cluster-config"
		}
		return InputFile, "yours: the cluster's RKE configuration, beside cluster.rkestate"
	}
	if tag, ok := b.digestTag(name); ok {
		s := "yours: the digest of " + releases.ImageRepository + ":" + tag + ", which registry.k8s.io's promotion list does not " +
			"give yet: " + name + "=$(" + releases.DigestCommand(tag) + ") (crane: go-containerregistry's CLI), " +
			"which fails while the registry does not serve the tag: then pin an older 1.x patch"
		if tag == b.r.tag {
			s += " with --ccm-version"
		}
		return InputVariable, s
	}
	return "", ""
}

var (
	shellUse  = lazyRegexp(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)
	shellDef  = lazyRegexp(`(?:^|[\s;&|({])(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=|(?:^|[\s;&|(])(?:read\s+(?:-r\s+)?|for\s+)([A-Za-z_][A-Za-z0-9_]*)`)
	shellRm   = lazyRegexp(`\brm\s+(?:-\w+\s+)*\S+`)
	shellWord = lazyRegexp(`[^\s;&|()<>"'{}=]+`)
	shellCp   = lazyRegexp(`\bcp\s+(?:-\w+\s+)*\S+$`)
	// relFile is a file of the workstation's working directory: a
	// relative path with an extension.
	relFile = lazyRegexp(`^[A-Za-z0-9_][A-Za-z0-9._-]*(?:/[A-Za-z0-9._-]+)*\.[a-z0-9]+$`)
)

// unquoted is a command without what the shell neither expands nor runs:
// single-quoted text and comments become spaces. A command substitution
// in double quotes quotes anew.
func unquoted(sh string) string {
	var b strings.Builder
	// 'n' a command (the line, or a $( )), 'p' a parenthesis, 'd' double
	// quotes, 's' single quotes, 'c' a comment.
	stack := []byte{'n'}
	for i := 0; i < len(sh); i++ {
		c, top := sh[i], stack[len(stack)-1]
		switch {
		case top == 'c' && c == '\n':
			stack = stack[:len(stack)-1]
			b.WriteByte(c)
		case top == 's' && c == '\'':
			stack = stack[:len(stack)-1]
			b.WriteByte(' ')
		case top == 'c', top == 's':
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

// commandIO is what one command reads from outside itself and makes.
type commandIO struct {
	uses, sets, files, writes []string
}

// scanCommand reads a command's variables and files.
func scanCommand(sh string) commandIO {
	u := unquoted(sh)
	var io commandIO
	defAt := map[string]int{}
	for _, m := range shellDef().FindAllStringSubmatchIndex(u, -1) {
		name, at := "", 0
		if m[2] >= 0 {
			name, at = u[m[2]:m[3]], m[2]
		} else {
			name, at = u[m[4]:m[5]], m[4]
		}
		if _, ok := defAt[name]; !ok {
			defAt[name] = at
			io.sets = append(io.sets, name)
		}
	}
	for _, m := range shellUse().FindAllStringSubmatchIndex(u, -1) {
		name := u[m[2]:m[3]]
		if at, ok := defAt[name]; (!ok || at > m[0]) && !slices.Contains(io.uses, name) {
			io.uses = append(io.uses, name)
		}
	}
	u = shellRm().ReplaceAllString(u, "")
	for _, m := range shellWord().FindAllStringIndex(u, -1) {
		w := u[m[0]:m[1]]
		if !relFile().MatchString(w) || slices.Contains(io.files, w) || slices.Contains(io.writes, w) {
			continue
		}
		before := strings.TrimRight(u[:m[0]], " \t")
		if strings.HasSuffix(before, ">") || strings.HasSuffix(before, "tee") || strings.HasSuffix(before, "tee -a") || shellCp().MatchString(before) {
			io.writes = append(io.writes, w)
			continue
		}
		io.files = append(io.files, w)
	}
	return io
}

// inputs are the plan's inputs, over all its phases, and the steps that
// use each.
func (b *builder) inputs(phases []PhasePlan) ([]Input, map[string][]string) {
	type use struct {
		name, kind string
	}
	var used []use
	usedBy := map[string][]string{}
	maker := map[string]string{}
	fromSnippet := map[string]bool{}
	for _, ph := range phases {
		for _, s := range ph.Steps {
			for _, sn := range s.Snippets {
				f, _, _ := strings.Cut(sn.File, " ")
				if relFile().MatchString(f) && maker[f] == "" {
					maker[f], fromSnippet[f] = s.ID, true
				}
			}
			cmds := stepCommandsOf(s)
			for i, c := range append(cmds, s.Rollback.Commands...) {
				io := scanCommand(c.Shell)
				note := func(name, kind string) {
					if !slices.Contains(usedBy[name], s.ID) {
						usedBy[name] = append(usedBy[name], s.ID)
					}
					if !slices.ContainsFunc(used, func(u use) bool { return u.name == name }) {
						used = append(used, use{name, kind})
					}
				}
				for _, v := range io.uses {
					note(v, InputVariable)
				}
				for _, f := range io.files {
					note(f, InputFile)
				}
				if i >= len(cmds) {
					continue // a rollback makes nothing later steps read
				}
				for _, v := range append(io.sets, io.writes...) {
					if maker[v] == "" {
						maker[v] = s.ID
					}
				}
			}
		}
	}
	var ins []Input
	for _, u := range used {
		in := Input{Name: u.name, Kind: u.kind, Step: maker[u.name]}
		kind, source := b.operatorInput(u.name)
		if kind == u.kind {
			// The operator's, even where a step's snippet changes it
			// (cluster.yml).
			in.Step = ""
		}
		switch {
		case in.Step != "" && u.kind == InputVariable:
			in.Source = "set by " + in.Step
		case in.Step != "" && fromSnippet[u.name]:
			in.Source = "the snippet of " + in.Step + ", saved under this name"
		case in.Step != "":
			in.Source = "written by " + in.Step
		case kind == u.kind:
			in.Source = source
		default:
			continue // not the plan's: TestWalk names it
		}
		ins = append(ins, in)
	}
	return ins, usedBy
}

// stepCommandsOf are a step's commands and its checks'.
func stepCommandsOf(s Step) []Command {
	cs := slices.Clone(s.Commands)
	for _, c := range s.Checks {
		if c.Command != nil {
			cs = append(cs, *c.Command)
		}
	}
	return cs
}
