package helmcmd

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/chartops"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/diff"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/terminal"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// diffFlags are diff's own flags.
type diffFlags struct {
	deployed, live bool
	detailed       bool // --detailed-exitcode, --exit-code
	output, color  string
	noColor        bool
	context        int
}

// check refuses flag values and combinations before anything runs, and
// settles --no-color.
func (f *diffFlags) check(cmd *cobra.Command) error {
	fs := cmd.Flags()
	bad := func(format string, args ...any) error {
		return &renderer.UsageError{Err: fmt.Errorf(format, args...)}
	}
	if f.output != "text" && f.output != "json" {
		return bad("--output %q: use text or json", f.output)
	}
	if f.noColor {
		if fs.Changed("color") && f.color != "never" {
			return bad("--no-color and --color=%s contradict each other", f.color)
		}
		f.color = "never"
	}
	if f.color != "auto" && f.color != "always" && f.color != "never" {
		return bad("--color %q: use auto, always or never", f.color)
	}
	if f.context < -1 {
		return bad("--context %d: use a number of lines, or -1 for whole objects", f.context)
	}
	if !f.deployed && !f.live {
		// The chart's own diff has no release and no upgrade.
		for _, name := range []string{"reuse-values", "reset-values", "reset-then-reuse-values", "reset-options"} {
			if fs.Changed(name) {
				return bad("--%s is about the upgrade of the release in the cluster: give --deployed or --live (or --kubeconfig, --kube-context) to compare with it", name)
			}
		}
	}
	return nil
}

// colour tells whether to colour the text diff: --color, and for auto
// what terminal.Colour says.
func (f *diffFlags) colour(w io.Writer) bool {
	switch f.color {
	case "always":
		return true
	case "never":
		return false
	}
	return terminal.Colour(w)
}

// NewDiffCommand builds diff: the chart's output against the patched one,
// the release against the upgrade (--deployed), or the cluster's objects
// against what the upgrade makes of them (--live).
func NewDiffCommand(s cli.IOStreams) *cobra.Command {
	var (
		f  diffFlags
		vf valuesFlags
	)
	cmd, c := newChartCommand(s, "diff", "Show what the renderer changes, or what an upgrade would change in the cluster", diffLong, diffExamples)
	fs := cmd.Flags()
	vf.register(fs)
	fs.BoolVar(&f.deployed, "deployed", false, "compare the release deployed in the cluster with what an upgrade would deploy, instead of the chart's own output with the patched output (the default when --kubeconfig or --kube-context is given); also says which objects differ in the cluster from the release (changed outside Helm, or by a failed upgrade)")
	fs.BoolVar(&f.live, "live", false, "compare the objects in the cluster with what they would be after the upgrade (a server-side dry run of each object's patch, as Helm would send it): changes made outside Helm, e.g. by kubectl edit, show too")
	fs.BoolVar(&f.detailed, "detailed-exitcode", false, fmt.Sprintf("exit %d when there are changes, 0 when there are none (a usage error then exits 1)", cli.ExitChanges))
	fs.BoolVar(&f.detailed, "exit-code", false, "the same as --detailed-exitcode")
	fs.StringVarP(&f.output, "output", "o", "text", "text, or json: a list of the changed objects with their changes")
	fs.IntVar(&f.context, "context", 3, "lines of context around each change (-1: the whole object)")
	fs.StringVar(&f.color, "color", "auto", "colour the diff: auto (on a terminal, unless $NO_COLOR is set or $TERM is dumb), always or never")
	fs.BoolVar(&f.noColor, "no-color", false, "the same as --color=never")
	cli.Complete(cmd, "output", []string{"text", "json"})
	cli.Complete(cmd, "color", []string{"auto", "always", "never"})
	cmd.MarkFlagsMutuallyExclusive("deployed", "live")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c.args(cmd, args)
		if !fs.Changed("deployed") && !f.live {
			// A cluster named on the command line is there to compare with.
			f.deployed = fs.Changed("kubeconfig") || fs.Changed("kube-context")
		}
		if err := f.check(cmd); err != nil {
			return err
		}
		ctx, stop := interruptible(cmd.Context())
		defer stop()
		cluster := f.deployed || f.live
		p, err := c.prepare(ctx, needs{cluster: cluster, recorded: true})
		if err != nil {
			return err
		}
		d := chartops.Diff{Upgrade: vf.upgrade(chartops.Install{Release: c.release, Namespace: p.namespace, KubeVersion: p.kubeVersion}), Context: f.context}
		switch {
		case f.live:
			d.Compare = chartops.Live
		case f.deployed:
			d.Compare = chartops.Deployed
		}
		res, err := p.client.Diff(ctx, p.chart, p.vals, p.pr, d)
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		if f.output == "json" {
			changes := res.Changes
			if changes == nil {
				changes = []diff.Change{}
			}
			b, err := json.MarshalIndent(changes, "", "  ")
			if err != nil {
				return err
			}
			if _, err := out.Write(append(b, '\n')); err != nil {
				return cli.WriteError(err)
			}
		} else if text := diff.Text(res.Changes, res.Summary, res.What, f.colour(out)); text != "" {
			if _, err := io.WriteString(out, text); err != nil {
				return cli.WriteError(err)
			}
		} else if c.progress.Shown() {
			fmt.Fprintf(cmd.ErrOrStderr(), "aws-ccm-renderer: no changes: %d objects the same (%s)\n", res.Summary.Unchanged, res.What)
		}
		if len(res.Changes) > 0 && f.detailed {
			return cli.ErrChanges
		}
		return nil
	}
	cli.SetCommon(cmd, s)
	return cmd
}

const diffExamples = `  # What the renderer changes in the chart's output
  aws-ccm-renderer diff --distro=rke2

  # What an upgrade would change in the cluster; exit 2 when something would (for CI).
  # A --kubeconfig or --kube-context implies --deployed; a release that does not
  # exist yet shows everything an install would create.
  aws-ccm-renderer diff --deployed --distro=rke2 --mode=install --detailed-exitcode
  aws-ccm-renderer diff ccm ./aws-cloud-controller-manager-0.0.11.tgz --kubeconfig ~/.kube/rke2.yaml --distro=rke2

  # What the upgrade would do to the objects in the cluster, kubectl edits included
  aws-ccm-renderer diff --live --distro=rke2

  # For a pipeline: the changed objects as JSON
  aws-ccm-renderer diff --deployed --distro=rke2 -o json | jq -r '.[] | .kind + "/" + .name + " " + .change'`
