//go:build syntheticdistro

package generated

import (
	"bytes"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli/helmcmd"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/benchdata"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/wrapperchart"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// TestSyntheticDistro runs with the synthetic distribution of
// renderer/distros/synthetic.go built in (go test -tags syntheticdistro; make
// test): every consumer of the records takes it in, none by being told.
// A consumer added to the program belongs here.
func TestSyntheticDistro(t *testing.T) {
	const d, name = "synthd", "SynthD"
	p, ok := distros.RecordOf(d)
	if !ok || p.Name != name {
		t.Fatalf("built without the synthetic distribution (go test -tags syntheticdistro)")
	}
	contains := func(what, text, want string) {
		t.Helper()
		if !strings.Contains(text, want) {
			t.Errorf("%s has no %q:\n%s", what, want, text)
		}
	}

	// The renderer's own lists: --distro's values, aliases, usage.
	if !slices.Contains(distros.All, d) || distros.Aliases["synth"] != d {
		t.Errorf("distros.All %v, DistroAliases %v", distros.All, distros.Aliases)
	}
	for _, e := range renderer.OptionTable {
		if e.Opt == renderer.OptDistro {
			contains("--distro's usage", e.Usage, "kubeadm or synthd")
			if !slices.Contains(e.Values, d) {
				t.Errorf("--distro's values %v", e.Values)
			}
		}
	}

	// The commands' help and completions.
	run := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		cli.Run(args, cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, helmcmd.Commands)
		return out.String() + errOut.String()
	}
	root := cli.NewRootCommand(cli.IOStreams{}, helmcmd.Commands)
	contains("the program's title", root.Short, "Rancher (RKE1, RKE2, K3s, SynthD) and kubeadm")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, []string{"RKE1, RKE2, K3s, kubeadm or SynthD clusters"}},
		{[]string{"plan", "--help"}, []string{"kubeadm or synthd (required)", "SynthD's synthd.conf", "K3s's or SynthD's own cloud controller", "synthd://", "builtin on K3s and SynthD"}},
		{[]string{"overlays", "--help"}, []string{"kubeadm, synthd; install, migrate: K3s and SynthD have"}},
		{[]string{"template", "--help"}, []string{"kubeadm, synthd, or detect"}},
		{[]string{"argocd", "generate", "--help"}, []string{"kubeadm or synthd (default auto)"}},
		{[]string{"check", "--help"}, []string{"kubeadm or SynthD, from the nodes", "K3s's or SynthD's own cloud controller", "RKE2/K3s/SynthD kubelet arguments", "K3s: LoadBalancer"}},
		{[]string{"guard", "--help"}, []string{"K3s's or SynthD's"}},
		{[]string{"__complete", "plan", "--distro", ""}, []string{"\nsynthd\n"}},
		{[]string{"__complete", "template", "--distro", ""}, []string{"\nsynthd\n"}},
		{[]string{"__complete", "--distro", ""}, []string{"\nsynthd\n"}},
	} {
		out := run(c.args...)
		for _, w := range c.want {
			contains(strings.Join(c.args, " "), out, w)
		}
	}

	// check: detection by the record's signs, the hint when none shows.
	node := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.34.2+synthd1"}}}
	if got := check.Detect([]corev1.Node{node}); got.Detected != d {
		t.Errorf("check.Detect = %+v", got)
	}
	contains("the detection hint", distros.SignsHint(distros.Records()), "+synthd")

	// plan: its parts (internal/plan/synthetic.go) fill the skeletons of
	// a new cluster, of a cluster without a provider, and its own plan
	// from its cloud controller.
	if !slices.Contains(plan.Distros, d) {
		t.Errorf("plan.Distros = %v", plan.Distros)
	}
	for from, want := range map[string][]string{
		plan.FromNew:     {"Write SynthD's configuration", "/etc/synthd/synthd.conf", "Every node's synthd.conf holds the snippet above"},
		plan.FromNone:    {"sudo systemctl restart synthd"},
		plan.FromBuiltin: {"SynthD (synthd.conf)", "synthd:// provider IDs", "sudo systemctl restart synthd"},
	} {
		o := plan.DefaultOptions()
		o.Distro, o.KubeVersion, o.From = d, "1.34", from
		p, err := plan.Build(o)
		if err != nil {
			t.Errorf("plan --from %s: %v", from, err)
			continue
		}
		var out bytes.Buffer
		if err := plan.Write(&out, p, "markdown"); err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			contains("plan --from "+from, out.String(), w)
		}
	}

	// The tests' node fixtures: the CCM rendered for it runs on the
	// fixture's control-plane node, not on its worker.
	if !slices.Contains(testtools.FixtureDistros, d) {
		t.Errorf("testtools.FixtureDistros = %v", testtools.FixtureDistros)
	}
	ro := renderer.DefaultOptions()
	ro.Distro = d
	r, err := renderer.New(ro)
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Render([]byte(benchdata.CCM))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Split(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	fixtures := testtools.Fixtures(t)
	if len(fixtures[d]) != 2 {
		t.Fatalf("testdata/nodes/%s.yaml: %d nodes, want a control-plane node and a worker", d, len(fixtures[d]))
	}
	testtools.CheckMeaning(t, objs, fixtures, distros.Distro(d), renderer.ModeInstall)

	// make generate: the overlays, the Fleet example's, the Flux
	// HelmReleases, the wrapper chart's presets, questions and validation.
	if !slices.Contains(wrapperchart.Distros, d) {
		t.Errorf("wrapperchart.Distros = %v", wrapperchart.Distros)
	}
	trees, err := Trees()
	if err != nil {
		t.Fatal(err)
	}
	for _, tree := range trees {
		want := d + "/install/"
		if tree.Dir == "charts/aws-ccm-rancher" {
			want = "presets/" + d + "-install.yaml"
			contains("questions.yaml", string(tree.Files["questions.yaml"]), "kubeadm, synthd]")
			contains("questions.yaml", string(tree.Files["questions.yaml"]), "distro!=k3s&&distro!=synthd")
			tpl := string(tree.Files["templates/_presets.tpl"])
			contains("_presets.tpl", tpl, `"kubeadm", "synthd"]{{- end -}}`)
			contains("_presets.tpl", tpl, "kubeadm or synthd{{- end -}}")
			contains("_presets.tpl", tpl, `["k3s", "synthd"]`)
			contains("values.yaml", string(tree.Files["values.yaml"]), "kubeadm or synthd")
		}
		if !slices.ContainsFunc(wrapperchart.Names(tree.Files), func(f string) bool { return strings.HasPrefix(f, want) }) {
			t.Errorf("%s: no %s*", tree.Dir, want)
		}
	}

	// The lists in hand-written files: each would be rewritten.
	problems, err := DistroPins(testtools.Root(), distros.Records(), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != len(DistroLines) {
		t.Errorf("%d of the %d distribution lines would change: %q", len(problems), len(DistroLines), problems)
	}
	for _, l := range DistroLines {
		if v := l.Value(distros.Records()); !strings.Contains(strings.ToLower(v), d) {
			t.Errorf("%s, %s: %s", l.File, l.What, v)
		}
	}

	// The files the distribution needed: its record, its plan parts and
	// its node fixture name it (by its name or an alias); nothing else
	// does (this test aside). It walks the tree as it is: a file left
	// beside the tracked ones counts too.
	// A consumer that wants the distribution written into it by hand
	// adds a file here, and fails this.
	var needed []string
	naming := regexp.MustCompile(`(?i)\b(` + strings.Join(append([]string{d}, p.Aliases...), "|") + `)\b`)
	walkRepo(t, func(string) bool { return false }, func(rel, path string) error {
		if rel == "internal/generated/synthetic_test.go" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err == nil && naming.Match(b) {
			needed = append(needed, rel)
		}
		return err
	})
	if want := []string{"internal/plan/synthetic.go", "renderer/distros/synthetic.go", "testdata/nodes/synthd.yaml"}; !slices.Equal(needed, want) {
		t.Errorf("the files that name %s: %q; want its record, its plan parts and its node fixture, %q", d, needed, want)
	}

	// TestNoDistroLists knows it by its names.
	names, _ := namesOf(distros.Records())
	if names["synthd"] != d || names["synth"] != d {
		t.Errorf("namesOf: %v", names)
	}
}
