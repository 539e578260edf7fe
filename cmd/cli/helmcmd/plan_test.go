package helmcmd

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// chartCommands are the chart wrapper commands by name.
var chartCommands = map[string]func(cli.IOStreams) *cobra.Command{
	"template": NewTemplateCommand, "install": NewInstallCommand, "upgrade": NewUpgradeCommand, "diff": NewDiffCommand,
}

// TestPlanWrapperCommands: every chart wrapper command the plans print
// parses with the flags of that command in the Helm build (the renderer's
// own flags in them are checked by internal/plan's TestRendererCommands).
func TestPlanWrapperCommands(t *testing.T) {
	n := 0
	for _, o := range planOptions() {
		p, err := plan.Build(o)
		if err != nil {
			t.Fatal(err)
		}
		for _, ph := range p.Phases {
			for _, s := range ph.Steps {
				for _, c := range s.Commands {
					if len(c.Argv) < 2 || c.Argv[0] != "aws-ccm-renderer" {
						continue
					}
					n++
					kind := c.Argv[1]
					newCommand, ok := chartCommands[kind]
					if !ok {
						t.Errorf("%s: aws-ccm-renderer %s is not a chart wrapper command", s.ID, kind)
						continue
					}
					cmd := newCommand(cli.IOStreams{In: strings.NewReader(""), Out: &strings.Builder{}, ErrOut: &strings.Builder{}})
					if err := cmd.ParseFlags(c.Argv[2:]); err != nil {
						t.Errorf("%s: %s: %v", s.ID, c.Shell, err)
						continue
					}
					if args := cmd.Flags().Args(); !slices.Equal(args, []string{o.Release, p.CCM.Chart}) {
						t.Errorf("%s: positional arguments %q, want the release %s and the chart %s", s.ID, args, o.Release, p.CCM.Chart)
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no chart wrapper command in any plan")
	}
}

// planOptions are the plans the command tests read: every distribution,
// with the defaults and with every option that changes a command.
func planOptions() []plan.Options {
	var out []plan.Options
	for _, d := range plan.Distros {
		for _, custom := range []bool{false, true} {
			o := plan.DefaultOptions()
			o.Distro = d
			if custom {
				o.Release, o.Namespace, o.KubeVersion, o.KCMUser, o.LeaderName = "ccm", "cloud", "1.25", "system:kcm", "other"
				o.Chart, o.CloudConfig = "oci://registry.example.com/charts/aws-cloud-controller-manager", true
				if d != "k3s" {
					o.ClusterCIDR = "10.42.0.0/16"
				}
			}
			out = append(out, o)
		}
	}
	return out
}

// TestPlanCheckGates: every check the plans run (a step's command, a
// check's, a rollback's, the end of a pipeline from template) parses with
// check's own flags and passes their validation, names no argument, and
// the template that feeds it parses with template's; the steps after
// which one side must hold the migration lease make check fail otherwise
// (--migration-lease-holder), and no other step asks it.
func TestPlanCheckGates(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range planOptions() {
		p, err := plan.Build(o)
		if err != nil {
			t.Fatal(err)
		}
		holders := map[string]string{}
		for _, ph := range p.Phases {
			for _, s := range ph.Steps {
				cs := append(slices.Clone(s.Commands), s.Rollback.Commands...)
				for _, c := range s.Checks {
					if c.Command != nil {
						cs = append(cs, *c.Command)
					}
				}
				for _, c := range cs {
					if c.Kind != plan.KindCheck {
						continue
					}
					n++
					var chk []string
					for _, seg := range strings.Split(strings.ReplaceAll(c.Shell, "\\\n", " "), " | ") {
						words := testtools.ShellWords(t, sh, seg)
						switch {
						case len(words) > 1 && words[0] == "aws-ccm-renderer" && words[1] == "check":
							chk = words
						case len(words) > 1 && words[0] == "aws-ccm-renderer" && words[1] == "template":
							cmd := NewTemplateCommand(cli.IOStreams{In: strings.NewReader(""), Out: &strings.Builder{}, ErrOut: &strings.Builder{}})
							if err := cmd.ParseFlags(words[2:]); err != nil {
								t.Errorf("%s: %s: %v", s.ID, seg, err)
							} else if args := cmd.Flags().Args(); !slices.Equal(args, []string{o.Release, p.CCM.Chart}) {
								t.Errorf("%s: template's positional arguments %q, want the release %s and the chart %s", s.ID, args, o.Release, p.CCM.Chart)
							}
						default:
							t.Errorf("%s: a check gate runs %q", s.ID, seg)
						}
					}
					if chk == nil {
						t.Errorf("%s: a check gate without aws-ccm-renderer check: %s", s.ID, c.Shell)
						continue
					}
					cmd, f := newCheckCommand(cli.IOStreams{In: strings.NewReader(""), Out: &strings.Builder{}, ErrOut: &strings.Builder{}})
					if err := cmd.ParseFlags(chk[2:]); err != nil {
						t.Errorf("%s: %s: %v", s.ID, c.Shell, err)
						continue
					}
					if err := f.validate(cmd.Flags()); err != nil {
						t.Errorf("%s: %s: %v", s.ID, c.Shell, err)
					}
					if args := cmd.Flags().Args(); len(args) != 0 {
						t.Errorf("%s: check given arguments %q", s.ID, args)
					}
					if f.file == "" && (f.release != o.Release || f.namespace != o.Namespace) {
						t.Errorf("%s: check of release %s in %s, want %s in %s", s.ID, f.release, f.namespace, o.Release, o.Namespace)
					}
					if o.Distro != "k3s" && f.kcmUser != o.KCMUser {
						t.Errorf("%s: check --kcm-user %s, want %s", s.ID, f.kcmUser, o.KCMUser)
					}
					if f.holder != "" {
						holders[s.ID] = f.holder
					}
				}
			}
		}
		want := map[string]string{"before.kcm-leader-migration": "kube-controller-manager", "before.install-ccm": "kube-controller-manager", "during.verify": "ccm"}
		if o.Distro == "k3s" {
			want = map[string]string{}
		}
		if !maps.Equal(holders, want) {
			t.Errorf("%s: the steps whose check names the migration lease's holder: %v, want %v", o.Distro, holders, want)
		}
	}
	if n == 0 {
		t.Fatal("no check in any plan")
	}
}
