package plan

import (
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// TestUnpromotedDigest runs, for a minor whose newest CCM image the
// promotion list does not give, what the plan says: the input's crane
// command against a registry that serves the tag (here a local one in
// registry.k8s.io's place), then the plan's render with that digest, which
// pins the image by it; a registry without the tag fails the command, and
// the render with the empty digest it leaves is refused with nothing on
// stdout.
func TestUnpromotedDigest(t *testing.T) {
	minor := releases.LastMinor()
	for ; minor > releases.FirstMinor(); minor-- {
		if c, ok := releases.Of(minor); ok && c.Unpromoted() {
			break
		}
	}
	c, ok := releases.Of(minor)
	if !ok || !c.Unpromoted() {
		t.Fatal("every minor's newest image is in the promotion list: the test needs a tag it does not give (releases.Promoted)")
	}
	o := plan.DefaultOptions()
	o.Distro, o.From, o.KubeVersion = distros.RKE2, plan.FromNew, "1."+strconv.Itoa(minor)
	o.Chart = testtools.UpstreamChart(t, o.ChartVersion)
	p, err := plan.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(p.Inputs, func(in plan.Input) bool { return strings.HasPrefix(in.Name, "CCM_DIGEST_") })
	if i < 0 {
		t.Fatalf("plan for 1.%d (%s) names no digest input: %+v", minor, c.Latest, p.Inputs)
	}
	variable := p.Inputs[i].Name
	assign := regexp.MustCompile(regexp.QuoteMeta(variable) + `=\$\(crane digest ([^ )]+)\)`).FindStringSubmatch(strings.Join(strings.Fields(p.Inputs[i].Source), " "))
	if assign == nil || assign[1] != releases.ImageRepository+":"+c.Latest {
		t.Fatalf("input %s: %q has no crane digest of %s:%s", variable, p.Inputs[i].Source, releases.ImageRepository, c.Latest)
	}

	// A registry in registry.k8s.io's place, serving the tag.
	host, want := testtools.ServeImage(t, assign[1])
	env := append(testtools.HelmEnv(t), "PATH="+filepath.Dir(testtools.Crane(t))+":/usr/bin:/bin")
	resolve := strings.Replace(assign[0], "registry.k8s.io", host, 1)
	out, errOut, err := testtools.Run(t, env, "sh", "-c", resolve+` && printf %s "$`+variable+`"`)
	if err != nil || string(out) != want {
		t.Fatalf("%s: %q, want %s (%v): %s", resolve, out, want, err, errOut)
	}

	// The plan's render, as it pins the image with that digest.
	render := renderCommand(t, p)
	args := testtools.ShellWords(t, "sh", strings.ReplaceAll(render, "$"+variable, string(out)))
	prog, targs, _ := templateArgs(t, args)
	rendered := testtools.MustRun(t, testtools.HelmEnv(t), prog, targs...)
	if img := releases.ImageRepository + ":" + c.Latest + "@" + want; !strings.Contains(string(rendered), `image: "`+img+`"`) {
		t.Errorf("the render does not run %s:\n%s", img, rendered)
	}

	// Not served: crane fails, and a render with the empty digest is refused.
	missing := strings.Replace(resolve, c.Latest, c.Latest+"-missing", 1)
	if out, _, err := testtools.Run(t, env, "sh", "-c", missing); err == nil {
		t.Errorf("%s: exit 0 for a tag the registry does not serve (%q)", missing, out)
	}
	args = testtools.ShellWords(t, "sh", strings.ReplaceAll(render, "$"+variable, ""))
	prog, targs, _ = templateArgs(t, args)
	out, errOut, err = testtools.Run(t, testtools.HelmEnv(t), prog, targs...)
	if err == nil || len(out) > 0 {
		t.Errorf("the render with an empty digest: exit 0 or output on stdout (%v, %d bytes): %s", err, len(out), errOut)
	}
}

// renderCommand is the shell line of the plan's first command that renders
// or installs the CCM with the chart wrapper.
func renderCommand(t *testing.T, p *plan.Plan) string {
	t.Helper()
	for _, ph := range p.Phases {
		for _, s := range ph.Steps {
			for _, c := range s.Commands {
				line, _, _ := strings.Cut(c.Shell, " > ")
				if strings.HasPrefix(line, "aws-ccm-renderer upgrade --install ") || strings.HasPrefix(line, "aws-ccm-renderer template ") {
					return line
				}
			}
		}
	}
	t.Fatal("no command renders the CCM")
	return ""
}

// templateArgs is the template a chart wrapper command renders: its
// upgrade's template, or the template itself.
func templateArgs(t *testing.T, argv []string) (string, []string, renderer.Mode) {
	t.Helper()
	if len(argv) > 1 && argv[1] == "template" {
		return testtools.Renderer(t), argv[1:], ""
	}
	return templateOf(t, argv)
}
