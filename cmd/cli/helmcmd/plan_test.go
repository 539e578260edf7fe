package helmcmd

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
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
	}
	if n == 0 {
		t.Fatal("no chart wrapper command in any plan")
	}
}
