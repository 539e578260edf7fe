package helmcmd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/chartops"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/diff"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/terminal"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// diffFlags are diff's own flags.
type diffFlags struct {
	deployed, live bool
	threeWay       bool // --three-way-merge, helm-diff's name of --live
	rendererOnly   bool
	allowUnrelease bool // --allow-unreleased
	suppress       bool // --suppress-secrets
	detailed       bool // --detailed-exitcode, --exit-code
	output, color  string
	noColor        bool
	context        int
}

// target settles from the flags what diff compares, as helm-diff's habits
// expect: with a cluster configured, the release in it. A cluster named on
// the command line (--kubeconfig, --kube-context), or --allow-unreleased,
// compares with the release, or with nothing when there is none (an
// install); one from $KUBECONFIG alone compares with the release only when
// it exists (ifReleased), else shows what the renderer changes. from is
// where the cluster came from when no flag chose the comparison: the
// command then says what it compares.
func (f *diffFlags) target(fs *pflag.FlagSet) (cmp chartops.Compare, from string, ifReleased bool) {
	switch {
	case f.live:
		return chartops.Live, "", false
	case f.rendererOnly || (fs.Changed("deployed") && !f.deployed):
		return chartops.ChartOutput, "", false
	case f.deployed, f.allowUnrelease:
		return chartops.Deployed, "", false
	case fs.Changed("kubeconfig"):
		return chartops.Deployed, "--kubeconfig", false
	case fs.Changed("kube-context"):
		return chartops.Deployed, "--kube-context", false
	case os.Getenv("KUBECONFIG") != "":
		return chartops.Deployed, "$KUBECONFIG", true
	}
	return chartops.ChartOutput, "", false
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
	if f.threeWay {
		f.live = true
	}
	if f.context < -1 {
		return bad("--context %d: use a number of lines, or -1 for whole objects", f.context)
	}
	if !f.deployed && !f.live && !f.allowUnrelease && !fs.Changed("kubeconfig") && !fs.Changed("kube-context") && os.Getenv("KUBECONFIG") == "" {
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
	fs.BoolVar(&f.deployed, "deployed", false, "compare the release deployed in the cluster with what an upgrade would deploy, instead of the chart's own output with the patched output (the default when --kubeconfig or --kube-context is given, and with $KUBECONFIG when the release exists); also says which objects differ in the cluster from the release (changed outside Helm, or by a failed upgrade)")
	fs.BoolVar(&f.live, "live", false, "compare the objects in the cluster with what they would be after the upgrade (a server-side dry run of each object's patch, as Helm would send it): changes made outside Helm, e.g. by kubectl edit, show too")
	fs.BoolVar(&f.detailed, "detailed-exitcode", false, fmt.Sprintf("exit %d when there are changes, 0 when there are none (a usage error then exits 1)", cli.ExitChanges))
	fs.BoolVar(&f.detailed, "exit-code", false, "the same as --detailed-exitcode")
	fs.StringVarP(&f.output, "output", "o", "text", "text, or json: a list of the changed objects with their changes")
	fs.BoolVar(&f.threeWay, "three-way-merge", false, "the same as --live (helm-diff's name: the cluster's objects, changes made outside Helm included)")
	fs.BoolVar(&f.rendererOnly, "renderer-only", false, "compare the chart's own output with the patched output, without the cluster, even when one is configured")
	fs.BoolVar(&f.allowUnrelease, "allow-unreleased", false, "compare with the release in the cluster, and when there is none show what an install would create (helm-diff's flag; the default with --kubeconfig or --kube-context)")
	fs.BoolVar(&f.suppress, "suppress-secrets", false, "accepted for helm-diff's habit: Secrets' values are never printed anyway (each shows as a tag)")
	fs.IntVarP(&f.context, "context", "C", 3, "lines of context around each change (-1: the whole object)")
	fs.StringVar(&f.color, "color", "auto", "colour the diff: auto (on a terminal, unless $NO_COLOR is set or $TERM is dumb), always or never")
	fs.BoolVar(&f.noColor, "no-color", false, "the same as --color=never")
	cli.Complete(cmd, "output", []string{"text", "json"})
	cli.Complete(cmd, "color", []string{"auto", "always", "never"})
	for _, other := range []string{"live", "three-way-merge", "renderer-only"} {
		cmd.MarkFlagsMutuallyExclusive("deployed", other)
	}
	cmd.MarkFlagsMutuallyExclusive("renderer-only", "live")
	cmd.MarkFlagsMutuallyExclusive("renderer-only", "three-way-merge")
	cmd.MarkFlagsMutuallyExclusive("renderer-only", "allow-unreleased")
	// helm-diff's form, diff upgrade RELEASE CHART, is diff RELEASE CHART.
	args := cmd.Args
	cmd.Args = func(cmd *cobra.Command, a []string) error { return args(cmd, helmDiffForm(a)) }
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c.args(cmd, helmDiffForm(args))
		if err := f.check(cmd); err != nil {
			return err
		}
		if f.suppress {
			fmt.Fprintln(cmd.ErrOrStderr(), "aws-ccm-renderer: --suppress-secrets: nothing to do, diff never prints a Secret's values (each shows as a tag)")
		}
		ctx, stop := interruptible(cmd.Context())
		defer stop()
		cmp, from, ifReleased := f.target(fs)
		n := needs{cluster: cmp != chartops.ChartOutput, recorded: true}
		if ifReleased {
			n.why = "diff compares with the release in the cluster of $KUBECONFIG; --renderer-only does not ask the cluster"
		}
		p, err := c.prepare(ctx, n)
		if err != nil {
			return err
		}
		d := chartops.Diff{Upgrade: vf.upgrade(chartops.Install{Release: c.release, Namespace: p.namespace, KubeVersion: p.kubeVersion}), Context: f.context, Compare: cmp}
		if from != "" {
			// Said, as helm-diff does not: what is compared with what.
			ok, err := p.client.Released(c.release)
			if err != nil {
				return err
			}
			if !ok {
				// Unless RELEASE is most likely the wrong name.
				if err := p.client.OwnedElsewhere(c.release, p.namespace); err != nil {
					return err
				}
			}
			if !ok && ifReleased {
				d.Compare = chartops.ChartOutput
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "aws-ccm-renderer: "+comparison(c.release, p.namespace, from, ok, ifReleased))
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

// comparison says what diff compares when no flag chose it: the release
// in the cluster of from, or, when there is none (released false), what an
// install would create, or (ifReleased) what the renderer changes.
func comparison(release, namespace, from string, released, ifReleased bool) string {
	switch {
	case released:
		return fmt.Sprintf("comparing with release %s in namespace %s in the cluster of %s, as helm diff upgrade does "+
			"(--renderer-only shows what the renderer changes in the chart's output)", release, namespace, from)
	case ifReleased:
		return fmt.Sprintf("no release %s in namespace %s in the cluster of %s: showing what the renderer changes in the chart's output "+
			"(--allow-unreleased shows what an install would create)", release, namespace, from)
	}
	return fmt.Sprintf("no release %s in namespace %s in the cluster of %s: showing what an install would create "+
		"(--renderer-only shows what the renderer changes in the chart's output)", release, namespace, from)
}

// helmDiffForm reads helm-diff's diff upgrade RELEASE CHART as diff
// RELEASE CHART; any other arguments as they are (a release named
// upgrade stays one: diff upgrade CHART).
func helmDiffForm(args []string) []string {
	if len(args) == 3 && args[0] == "upgrade" {
		return args[1:]
	}
	return args
}

const diffExamples = `  # What the renderer changes in the chart's output
  aws-ccm-renderer diff --distro=rke2

  # What an upgrade would change in the cluster; exit 2 when something would (for CI).
  # A --kubeconfig or --kube-context implies --deployed, and $KUBECONFIG does when the
  # release exists (diff says which it compares); a release that does not exist yet
  # shows everything an install would create.
  aws-ccm-renderer diff --deployed --distro=rke2 --mode=install --detailed-exitcode
  aws-ccm-renderer diff ccm ./aws-cloud-controller-manager-0.0.11.tgz --kubeconfig ~/.kube/rke2.yaml --distro=rke2

  # As helm-diff spells it
  aws-ccm-renderer diff upgrade aws-ccm ./aws-cloud-controller-manager-0.0.11.tgz --allow-unreleased -C 5 --distro=rke2

  # What the renderer changes, even with $KUBECONFIG set
  aws-ccm-renderer diff --renderer-only --distro=rke2

  # What the upgrade would do to the objects in the cluster, kubectl edits included
  aws-ccm-renderer diff --live --distro=rke2

  # For a pipeline: the changed objects as JSON
  aws-ccm-renderer diff --deployed --distro=rke2 -o json | jq -r '.[] | .kind + "/" + .name + " " + .change'`
