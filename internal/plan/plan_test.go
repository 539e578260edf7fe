package plan_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	yaml "go.yaml.in/yaml/v3"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/schematest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/plan (the documents' sections: make generate)")

// runCLI runs aws-ccm-renderer in-process.
func runCLI(t *testing.T, stdin []byte, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = cli.Main(args, cli.IOStreams{In: bytes.NewReader(stdin), Out: &out, ErrOut: &errOut})
	return out.String(), errOut.String(), code
}

// customArgs change every option that shows in the commands.
var customArgs = []string{"--release", "ccm", "--namespace", "cloud", "--kube-version", "v1.25.16",
	"--kcm-user", "system:kcm", "--leader-name", "ccm-migration", "--chart-version", "0.0.10"}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(testtools.Root(), "testdata", "golden", "plan", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./internal/plan -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("aws-ccm-renderer plan output differs from %s (go test ./internal/plan -update rewrites it):\n%s", path, firstDiff(string(want), string(got)))
	}
}

func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, wl, gl)
		}
	}
	return "(same lines)"
}

// TestGolden: the plan of every distribution and phase, as text and JSON,
// through the command line.
func TestGolden(t *testing.T) {
	for _, d := range plan.Distros {
		for _, ph := range plan.Phases {
			for _, format := range []string{"text", "json"} {
				name := fmt.Sprintf("%s-%s.%s", d, ph, map[string]string{"text": "txt", "json": "json"}[format])
				t.Run(name, func(t *testing.T) {
					out, errOut, code := runCLI(t, nil, "plan", "--distro", string(d), "--phase", string(ph), "-o", format)
					if code != 0 || errOut != "" {
						t.Fatalf("exit %d: %s", code, errOut)
					}
					golden(t, name, []byte(out))
				})
			}
		}
	}
	for name, args := range map[string][]string{
		// Every option that shows in a command, changed.
		"rke2-custom.txt":    append([]string{"--distro", "rke2"}, customArgs...),
		"kubeadm-custom.txt": append([]string{"--distro", "kubeadm"}, customArgs...),
		// The chart from elsewhere, a cloud config, routes, plain Helm,
		// a version without its patch.
		"rke-options.txt": {"--distro", "rke", "--chart", "oci://registry.example.com/charts/aws-cloud-controller-manager",
			"--cloud-config", "--cluster-cidr", "10.42.0.0/16", "--kube-version", "1.26", "--helm"},
		"k3s-1.30.txt": {"--distro", "k3s", "--kube-version", "v1.30.14+k3s1", "--chart", "./aws-cloud-controller-manager-0.0.11.tgz"},
		// The checklist and single steps.
		"rke-brief.txt":                 {"--distro", "rke", "--brief"},
		"rke2-brief.txt":                {"--distro", "rke2", "--brief"},
		"k3s-brief.txt":                 {"--distro", "k3s", "--brief"},
		"kubeadm-brief.txt":             {"--distro", "kubeadm", "--brief"},
		"rke2-brief.md":                 {"--distro", "rke2", "--brief", "-o", "markdown"},
		"rke2-step-during.switch.txt":   {"--distro", "rke2", "--step", "during.switch"},
		"rke-step-before.node-names.md": {"--distro", "rke", "--step", "before.node-names", "-o", "markdown"},
		"k3s-step.json":                 {"--distro", "k3s", "--step", "during.load-balancers", "-o", "json"},
		// Today's clusters: a new one, one without a cloud provider, RKE2
		// on its own cloud controller.
		"rke2-new-1.35.txt":          {"--distro", "rke2", "--kube-version", "1.35", "--from", "new"},
		"kubeadm-new-1.37.txt":       {"--distro", "kubeadm", "--kube-version", "v1.37.2", "--from", "new"},
		"k3s-new-1.33-brief.txt":     {"--distro", "k3s", "--kube-version", "v1.33.6+k3s1", "--from", "new", "--brief"},
		"rke-new-1.32-brief.txt":     {"--distro", "rke", "--kube-version", "1.32", "--from", "new", "--brief"},
		"kubeadm-none-1.34.txt":      {"--distro", "kubeadm", "--kube-version", "v1.34.2", "--from", "none"},
		"rke2-builtin-1.36.json":     {"--distro", "rke2", "--kube-version", "v1.36.3+rke2r1", "--from", "builtin", "-o", "json"},
		"rke2-builtin-1.30-brief.md": {"--distro", "rke2", "--kube-version", "1.30", "--from", "builtin", "--brief", "-o", "markdown"},
	} {
		t.Run(name, func(t *testing.T) {
			out, errOut, code := runCLI(t, nil, append([]string{"plan"}, args...)...)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			golden(t, name, []byte(out))
		})
	}
}

// plans builds the plans the tests look into: every distribution with the
// defaults, with every option changed, with the chart from each kind of
// source, and at each minor it accepts.
func plans(t *testing.T) map[string]*plan.Plan {
	t.Helper()
	ps := map[string]*plan.Plan{}
	for _, d := range plan.Distros {
		o := plan.DefaultOptions()
		o.Distro = d
		ps[string(d)] = mustBuild(t, o)
		o.Release, o.Namespace, o.KubeVersion, o.KCMUser, o.LeaderName, o.ChartVersion =
			"ccm", "cloud", "v1.25.16", "system:kcm", "ccm-migration", "0.0.10"
		o.CloudConfig, o.Chart = true, "mirror/aws-cloud-controller-manager"
		if d != distros.K3s {
			o.ClusterCIDR = "10.42.0.0/16"
		}
		ps[string(d)+"-custom"] = mustBuild(t, o)
		o = plan.DefaultOptions()
		o.Distro, o.Helm, o.Chart, o.KubeVersion = d, true, "oci://registry.example.com/charts/aws-cloud-controller-manager", "1.24"
		ps[string(d)+"-helm"] = mustBuild(t, o)
		for minor := 22; minor <= 35; minor++ {
			if d != distros.K3s && minor > 26 {
				break
			}
			o := plan.DefaultOptions()
			o.Distro, o.KubeVersion = d, fmt.Sprintf("v1.%d.3", minor)
			ps[fmt.Sprintf("%s-1.%d", d, minor)] = mustBuild(t, o)
		}
		for _, from := range todayFroms(d) {
			for minor := 27; minor <= releases.LastMinor(); minor++ {
				if d == distros.RKE && minor > releases.RKELastMinor {
					break
				}
				o := plan.DefaultOptions()
				o.Distro, o.From, o.KubeVersion = d, from, fmt.Sprintf("v1.%d.3", minor)
				ps[fmt.Sprintf("%s-%s-1.%d", d, from, minor)] = mustBuild(t, o)
			}
		}
	}
	return ps
}

// todayFroms are the --from values of a distribution at 1.27 and later.
func todayFroms(d distros.Distro) []string {
	switch d {
	case distros.RKE2, distros.K3s:
		return []string{plan.FromNew, plan.FromBuiltin, plan.FromNone}
	}
	return []string{plan.FromNew, plan.FromNone}
}

func mustBuild(t *testing.T, o plan.Options) *plan.Plan {
	t.Helper()
	p, err := plan.Build(o)
	if err != nil {
		t.Fatalf("%+v: %v", o, err)
	}
	return p
}

func allSteps(p *plan.Plan) []plan.Step {
	var s []plan.Step
	for _, ph := range p.Phases {
		s = append(s, ph.Steps...)
	}
	return s
}

// A command that expands $CCM_DIGEST_<tag> (no Argv) comes with a digest
// in the variable's place, as the operator's shell runs it, and its argv.
func allCommands(p *plan.Plan) []plan.Command {
	var cs []plan.Command
	for _, s := range allSteps(p) {
		cs = append(cs, stepCommands(s)...)
		cs = append(cs, s.Rollback.Commands...)
	}
	for i, c := range cs {
		if len(c.Argv) == 0 && digestRef.MatchString(c.Shell) && !strings.ContainsAny(c.Shell, "|;&<>") {
			cs[i].Shell = digestRef.ReplaceAllString(c.Shell, testDigest)
			out, err := exec.Command("sh", "-c", `set -- `+cs[i].Shell+`; for w do printf '%s\0' "$w"; done`).Output()
			if err != nil {
				panic(fmt.Sprintf("%s: %v", cs[i].Shell, err))
			}
			cs[i].Argv = strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		}
	}
	return cs
}

// testDigest stands for the digest an operator reads from the registry.
var testDigest = "sha256:" + strings.Repeat("0", 64)

// digestRef is $CCM_DIGEST_<tag>, which a command expands to pin an image
// the promotion list does not give.
var digestRef = regexp.MustCompile(`\$CCM_DIGEST_[A-Za-z0-9_]+`)

// stepCommands are a step's commands and its checks' commands.
func stepCommands(s plan.Step) []plan.Command {
	cs := slices.Clone(s.Commands)
	for _, c := range s.Checks {
		if c.Command != nil {
			cs = append(cs, *c.Command)
		}
	}
	return cs
}

// ccmCommand reports whether a command installs or upgrades the CCM.
func ccmCommand(c plan.Command) bool {
	return len(c.Argv) > 2 && (c.Argv[0] == "helm" || c.Argv[0] == "aws-ccm-renderer") && c.Argv[1] == "upgrade"
}

// TestOrder: phases in order, step IDs unique and of their phase, every step
// says why and how to roll back, and the order a safe migration needs.
func TestOrder(t *testing.T) {
	for name, p := range plans(t) {
		t.Run(name, func(t *testing.T) {
			var phases []plan.Phase
			ids := map[string]int{}
			n := 0
			for _, ph := range p.Phases {
				phases = append(phases, ph.Name)
				if len(ph.Steps) == 0 {
					t.Errorf("phase %s has no steps", ph.Name)
				}
				for _, s := range ph.Steps {
					if !strings.HasPrefix(s.ID, string(ph.Name)+".") {
						t.Errorf("step %s is in phase %s", s.ID, ph.Name)
					}
					if _, dup := ids[s.ID]; dup {
						t.Errorf("step ID %s twice", s.ID)
					}
					ids[s.ID] = n
					n++
					if s.Why == "" || s.Title == "" || s.Rollback.Description == "" {
						t.Errorf("step %s lacks a title, a why or a rollback", s.ID)
					}
					if len(s.Commands) == 0 && len(s.Checks) == 0 {
						t.Errorf("step %s has nothing to run and nothing to check", s.ID)
					}
					mains := 0
					for _, c := range stepCommands(s) {
						if c.Main {
							mains++
						}
					}
					if mains != 1 {
						t.Errorf("step %s has %d main commands, want one (--brief shows it)", s.ID, mains)
					}
				}
			}
			if !slices.Equal(phases, plan.Phases) {
				t.Errorf("phases %v, want %v", phases, plan.Phases)
			}
			before := func(a, b string) {
				t.Helper()
				ia, oka := ids[a]
				ib, okb := ids[b]
				if !oka || !okb || ia >= ib {
					t.Errorf("want step %s (present %v) before %s (present %v)", a, oka, b, okb)
				}
			}
			if p.Strategy == plan.LeaderMigration {
				// The grant before the controller manager asks for the
				// lease, the controller manager under the lease before the
				// CCM comes, the CCM before the switch, leader migration
				// off only after it.
				before("before.preflight", "before.hostname-label")
				before("before.hostname-label", "before.iam")
				before("before.iam", "before.install-ccm")
				before("before.routes", "before.install-ccm")
				before("before.ebs-csi", "during.switch")
				before("before.cloud-config", "before.install-ccm")
				before("before.grant-kcm-lease", "before.etcd-snapshot")
				before("before.etcd-snapshot", "before.kcm-leader-migration")
				before("before.kcm-leader-migration", "before.install-ccm")
				before("before.install-ccm", "during.etcd-snapshot")
				before("during.etcd-snapshot", "during.switch")
				before("during.switch", "during.verify")
				before("during.verify", "after.ccm-install-mode")
				before("after.ccm-install-mode", "after.cleanup")
				before("after.cleanup", "after.upgrade")
				if p.Distro == distros.RKE {
					before("before.node-names", "during.switch")
				}
			} else if p.Strategy == plan.Install {
				before("before.iam", "before.cluster-config")
				before("before.cluster-tags", "before.cluster-config")
				before("before.cluster-config", "during.create")
				before("during.create", "during.install-ccm")
				before("during.install-ccm", "during.verify")
			} else if p.From == plan.FromNone {
				before("before.preflight", "before.iam")
				before("before.load-balancers", "during.install-ccm")
				before("during.external-provider", "during.install-ccm")
				before("during.install-ccm", "during.initialise-nodes")
				before("during.initialise-nodes", "during.verify")
			} else if p.Distro == distros.RKE2 {
				before("before.preflight", "before.iam")
				before("before.load-balancers", "during.install-ccm")
				before("during.external-provider", "during.install-ccm")
				before("during.install-ccm", "during.reregister-nodes")
				before("during.reregister-nodes", "during.verify")
			} else {
				before("before.hostname-label", "before.node-identity")
				before("before.node-identity", "during.disable-k3s-ccm")
				before("before.iam", "during.install-ccm")
				before("before.load-balancers", "during.load-balancers")
				before("before.etcd-snapshot", "during.disable-k3s-ccm")
				before("during.disable-k3s-ccm", "during.install-ccm")
				before("during.install-ccm", "during.reregister-nodes")
				before("during.reregister-nodes", "during.load-balancers")
				before("during.load-balancers", "during.verify")
			}
		})
	}
}

// TestFacts: what each plan must and must not say.
func TestFacts(t *testing.T) {
	for name, p := range plans(t) {
		t.Run(name, func(t *testing.T) {
			all, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			text := string(all)
			for _, c := range allCommands(p) {
				// Cordoning keeps no daemon pod off a node (measured by e2e/cordon_test.go).
				if strings.Contains(c.Shell, "cordon") && !strings.Contains(c.Shell, "uncordon") {
					t.Errorf("a command cordons nodes: %s", c.Shell)
				}
			}
			minor := strings.Split(p.KubernetesVersion, ".")[1]
			if !strings.HasPrefix(p.CCM.ImageTag, "v1."+minor+".") {
				t.Errorf("image tag %s for Kubernetes %s", p.CCM.ImageTag, p.KubernetesVersion)
			}
			upgrades := 0
			for _, c := range allCommands(p) {
				if !ccmCommand(c) {
					continue
				}
				upgrades++
				if c.Argv[0] == "helm" && (!slices.Contains(c.Argv, "--post-renderer") || !slices.Contains(c.Argv, "--post-renderer-args=--distro="+string(p.Distro))) {
					t.Errorf("helm upgrade without the renderer for %s: %s", p.Distro, c.Shell)
				}
				if c.Argv[0] == "aws-ccm-renderer" && !slices.Contains(c.Argv, "--distro="+string(p.Distro)) {
					t.Errorf("upgrade without --distro=%s: %s", p.Distro, c.Shell)
				}
				if !slices.ContainsFunc(c.Argv, func(a string) bool { return strings.HasPrefix(a, "image.tag=v1.") }) {
					t.Errorf("upgrade does not pin the CCM image: %s", c.Shell)
				}
				if len(c.Argv) < 5 || c.Argv[2] != "--install" || c.Argv[3] != p.CCM.Release || c.Argv[4] != p.CCM.Chart || !slices.Contains(c.Argv, p.CCM.Namespace) {
					t.Errorf("upgrade of another release, chart or namespace than %s/%s (%s): %s", p.CCM.Namespace, p.CCM.Release, p.CCM.Chart, c.Shell)
				}
				// The chart's source and version, as the chart wrapper and
				// Helm take them.
				hasRepo, hasVersion := slices.Contains(c.Argv, "--repo"), slices.Contains(c.Argv, "--version")
				switch p.CCM.Source {
				case plan.SourceRepoURL:
					if i := slices.Index(c.Argv, "--repo"); i < 0 || c.Argv[i+1] != p.CCM.Repository || !hasVersion {
						t.Errorf("a chart name without its repository %s and version: %s", p.CCM.Repository, c.Shell)
					}
				case plan.SourceRepoName, plan.SourceOCI:
					if hasRepo || !hasVersion {
						t.Errorf("%s chart %s with --repo or without --version: %s", p.CCM.Source, p.CCM.Chart, c.Shell)
					}
				case plan.SourceLocal:
					if hasRepo || hasVersion {
						t.Errorf("a local chart with --repo or --version: %s", c.Shell)
					}
				}
			}
			if upgrades == 0 {
				t.Error("no CCM upgrade")
			}
			switch p.Strategy {
			case plan.LeaderMigration:
				for _, want := range []string{"--mode=migrate", "--mode=install", "kubectl auth can-i update leases/" + p.LeaderMigration.Name,
					"--as " + p.LeaderMigration.KCMUser, "aws-ccm-renderer check"} {
					if !strings.Contains(text, want) {
						t.Errorf("the plan never says %q", want)
					}
				}
			case plan.Switch:
				if p.Distro != distros.K3s && p.From == plan.FromInTree {
					t.Errorf("switch plan for %s from the in-tree provider", p.Distro)
				}
				if p.Distro != distros.K3s || p.From != plan.FromBuiltin {
					break
				}
				for _, not := range []string{"--mode=migrate", "enable-leader-migration", "kcm-leader-migration", "kube-controller-manager"} {
					if strings.Contains(text, not) {
						t.Errorf("the K3s plan says %q: K3s has no in-tree provider to migrate from", not)
					}
				}
				for _, want := range []string{"disable-cloud-controller: true", "cloud-provider=external", "k3s://", "providerless"} {
					if !strings.Contains(text, want) {
						t.Errorf("the K3s plan never says %q", want)
					}
				}
			}
			if p.From != plan.FromInTree {
				return
			}
			if p.Distro == distros.RKE2 {
				sw := step(t, p, "during.switch")
				yml := sw.Snippets[0].Content
				if !strings.Contains(yml, "cloud-provider-name: aws") || strings.Contains(yml, "cloud-provider-name: external") {
					t.Error("the RKE2 switch must keep cloud-provider-name: aws (external renames nodes)")
				}
				for _, want := range []string{"machineGlobalConfig:\n      cloud-provider-name: aws          # keep: RKE2 names the nodes from instance metadata with it\n      disable-cloud-controller: true", "kube-controller-manager-arg:\n            - cloud-provider=external", "rke.cattle.io/etcd-role", "rke.cattle.io/worker-role"} {
					if !strings.Contains(yml, want) {
						t.Errorf("the RKE2 switch lacks %q", want)
					}
				}
			}
			if p.Distro == distros.RKE {
				yml := step(t, p, "during.switch").Snippets[0].Content
				if !strings.Contains(yml, "name: external-aws") || !strings.Contains(yml, "useInstanceMetadataHostname:") || !strings.Contains(yml, "hostname_override:") {
					t.Errorf("the RKE1 switch: %s", yml)
				}
			}
		})
	}
}

// TestToday: the plans of clusters at 1.27 and later configure each
// distribution as its release at the plan's minor takes it, and pin the
// CCM of that minor.
func TestToday(t *testing.T) {
	for name, p := range plans(t) {
		if p.From == plan.FromInTree || p.Distro == distros.K3s && p.From == plan.FromBuiltin && !strings.Contains(name, "-builtin-") {
			continue // the migrations, and K3s at 1.26
		}
		t.Run(name, func(t *testing.T) {
			minor, _ := strconv.Atoi(strings.Split(p.KubernetesVersion, ".")[1])
			if tag, _ := releases.Latest(minor); p.CCM.ImageTag != tag {
				t.Errorf("image tag %s, want %s", p.CCM.ImageTag, tag)
			}
			text, _ := json.Marshal(p)
			for _, c := range allCommands(p) {
				if ccmCommand(c) && !slices.Contains(c.Argv, "--mode=install") {
					t.Errorf("a CCM command not in install mode: %s", c.Shell)
				}
			}
			if p.Distro == distros.K3s && p.From == plan.FromBuiltin {
				return // k3sPlan, TestFacts
			}
			// What the configuration and the commands must not say (the
			// notes say why).
			var snippets strings.Builder
			for _, st := range allSteps(p) {
				for _, sn := range st.Snippets {
					snippets.WriteString(sn.File + "\n" + sn.Content)
				}
				for _, c := range stepCommands(st) {
					if c.Kind != plan.KindCluster && c.Kind != plan.KindNode {
						snippets.WriteString(c.Shell + "\n")
					}
				}
			}
			sn := snippets.String()
			for _, not := range []string{"--mode=migrate", "enable-leader-migration", "kube-apiserver-arg", "cloud-provider-name: aws\n", "cloud-provider=aws", "node-external-ip"} {
				if strings.Contains(sn, not) {
					t.Errorf("the plan's snippets or commands say %q", not)
				}
			}
			want := func(s string, yes bool) {
				t.Helper()
				if strings.Contains(sn, s) != yes {
					t.Errorf("the snippets say %q: %v, want %v", s, !yes, yes)
				}
			}
			switch p.Distro {
			case distros.RKE2:
				want("cloud-provider-name: external\ndisable-cloud-controller: true", true)
				want("node-name-from-cloud-provider-metadata: true", minor >= 29)
			case distros.K3s:
				want("disable-cloud-controller: true\ndisable:\n- servicelb\nkubelet-arg:\n- cloud-provider=external", true)
			case distros.Kubeadm:
				want("kubeadm.k8s.io/v1beta4", minor >= 31)
				want("kubeadm.k8s.io/v1beta3", minor < 31)
				want("- name: cloud-provider\n    value: external", minor >= 31)
				want("apiServer", false)
			case distros.RKE:
				if p.From == plan.FromNew {
					want("name: external-aws", true)
				}
			}
			if minor >= 33 && (p.Distro == distros.RKE2 || p.Distro == distros.Kubeadm) && !strings.Contains(string(text), "kubernetes/kubernetes#130162") {
				t.Error("no word that kube-apiserver has no --cloud-provider from 1.33 (kubernetes/kubernetes#130162)")
			}
			if d := releases.DefectsOf(p.CCM.ImageTag); len(d) > 0 && !strings.Contains(string(text), d[0].FixedIn) {
				t.Errorf("no word of the defect of %s", p.CCM.ImageTag)
			}
		})
	}
}

// TestFrom: the refusals of --from, each one line that says what to pass,
// nothing on stdout.
func TestFrom(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--distro", "rke2", "--kube-version", "1.34"}, "give --from: new (a cluster not yet created), builtin (RKE2's own cloud controller"},
		{[]string{"--distro", "kubeadm", "--kube-version", "1.34", "--from", "builtin"}, "--from=builtin: kubeadm has no cloud controller of its own"},
		{[]string{"--distro", "rke2", "--kube-version", "1.30", "--from", "in-tree"}, "Kubernetes 1.27 and later have no in-tree AWS provider"},
		{[]string{"--distro", "k3s", "--kube-version", "1.26", "--from", "in-tree"}, "K3s is built without the in-tree cloud providers"},
		{[]string{"--distro", "rke", "--kube-version", "1.33", "--from", "new"}, "RKE1 runs Kubernetes up to 1.32"},
		{[]string{"--distro", "rke2", "--kube-version", "1.26", "--from", "new"}, "this plan is for Kubernetes 1.27 and later"},
		{[]string{"--distro", "rke2", "--kube-version", "1.34", "--from", "old"}, `unknown --from "old": use one of new, in-tree, builtin, none`},
		{[]string{"--distro", "kubeadm", "--kube-version", "1.34", "--from", "none", "--cluster-cidr", "10.42.0.0/16"}, "--cluster-cidr: the cluster's routes were never managed"},
		{[]string{"--distro", "kubeadm", "--kube-version", "1.38", "--from", "new"}, "no CCM release of Kubernetes 1.38 is known"},
	} {
		out, errOut, code := runCLI(t, nil, append([]string{"plan"}, c.args...)...)
		if code == 0 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", c.args, code, out, errOut, c.want)
		}
	}
	// Without --from: in-tree up to 1.26, builtin on K3s.
	for _, c := range []struct{ distro, version, from string }{{"rke2", "1.26", "in-tree"}, {"k3s", "1.34", "builtin"}, {"kubeadm", "1.22", "in-tree"}} {
		o := plan.DefaultOptions()
		o.Distro, o.KubeVersion = distros.Distro(c.distro), c.version
		if p := mustBuild(t, o); p.From != c.from {
			t.Errorf("%s %s: from %s, want %s", c.distro, c.version, p.From, c.from)
		}
	}
}

func step(t *testing.T, p *plan.Plan, id string) plan.Step {
	t.Helper()
	for _, s := range allSteps(p) {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no step %s", id)
	return plan.Step{}
}

// TestSnippets: every YAML snippet parses, every shell command and snippet
// is valid POSIX shell (sh -n), and the controller manager's
// LeaderMigrationConfiguration names the plan's lease.
func TestSnippets(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal("sh is needed to check the plan's commands:", err)
	}
	for name, p := range plans(t) {
		// The commands differ between minors only in versions, except
		// where an API version changes (1.22, 1.24, 1.27): those and the
		// default and custom plans.
		// 1.31: kubeadm's v1beta4; 1.33: no kube-apiserver
		// --cloud-provider; 1.36 and 1.37: RKE2's and kubeadm's changes.
		if m := regexp.MustCompile(`-1\.(\d+)$`).FindStringSubmatch(name); m != nil && !slices.Contains([]string{"22", "23", "24", "26", "27", "30", "31", "33", "36", "37"}, m[1]) {
			continue
		}
		t.Run(name, func(t *testing.T) {
			for _, s := range allSteps(p) {
				for _, sn := range s.Snippets {
					switch sn.Language {
					case "yaml":
						dec := yaml.NewDecoder(strings.NewReader(sn.Content))
						docs := 0
						for {
							var v any
							err := dec.Decode(&v)
							if errors.Is(err, io.EOF) {
								break
							}
							if err != nil {
								t.Errorf("%s: snippet %s does not parse: %v\n%s", s.ID, sn.File, err, sn.Content)
								break
							}
							docs++
							m, _ := v.(map[string]any)
							if m["kind"] == "LeaderMigrationConfiguration" {
								if m["leaderName"] != p.LeaderMigration.Name {
									t.Errorf("%s: the controller manager's config names lease %v, the plan %s", s.ID, m["leaderName"], p.LeaderMigration.Name)
								}
								// v1beta1 needs resourceLock (no default, validation
								// requires it); v1 has no such field (k8s.io/controller-manager
								// v0.22–v0.24, config/v1beta1 and v1 types).
								_, lock := m["resourceLock"]
								switch m["apiVersion"] {
								case "controllermanager.config.k8s.io/v1":
									if lock {
										t.Errorf("%s: a v1 LeaderMigrationConfiguration with resourceLock, which v1 does not have", s.ID)
									}
								case "controllermanager.config.k8s.io/v1beta1":
									if m["resourceLock"] != "leases" {
										t.Errorf("%s: a v1beta1 LeaderMigrationConfiguration without resourceLock: leases", s.ID)
									}
								default:
									t.Errorf("%s: LeaderMigrationConfiguration %v", s.ID, m["apiVersion"])
								}
							}
						}
						if docs == 0 {
							t.Errorf("%s: snippet %s is empty", s.ID, sn.File)
						}
					case "sh":
						shellOK(t, sh, s.ID+" "+sn.File, sn.Content)
					case "json":
						var v any
						if err := json.Unmarshal([]byte(sn.Content), &v); err != nil {
							t.Errorf("%s: snippet %s is not JSON: %v", s.ID, sn.File, err)
						}
					default:
						t.Errorf("%s: snippet %s in %q", s.ID, sn.File, sn.Language)
					}
				}
			}
			for _, c := range allCommands(p) {
				shellOK(t, sh, c.Shell, c.Shell)
				if len(c.Argv) > 0 {
					if strings.Contains(strings.Join(c.Argv, " "), "$") {
						t.Errorf("argv with a shell variable (a program run without a shell would see it literally): %q", c.Argv)
					}
					// The shell line is the argv, quoted.
					got := testtools.ShellWords(t, sh, c.Shell)
					if !slices.Equal(got, c.Argv) {
						t.Errorf("the shell reads %q back as %q, not as its argv", c.Shell, got)
					}
				}
			}
		})
	}
}

func shellOK(t *testing.T, sh, what, script string) {
	t.Helper()
	if out, err := exec.Command(sh, "-n", "-c", script).CombinedOutput(); err != nil {
		t.Errorf("not valid shell (%s): %v %s\n%s", what, err, out, script)
	}
}

// TestSchema: the JSON of every plan and phase validates against
// docs/plan.schema.json, and the schema rejects what it should.
func TestSchema(t *testing.T) {
	schema := schematest.Compile(t, "plan.schema.json")
	validate := func(b []byte) error {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return err
		}
		return schema.Validate(inst)
	}
	for _, d := range plan.Distros {
		for _, ph := range append([]string{""}, "before", "during", "after") {
			args := []string{"plan", "--distro", string(d), "-o", "json"}
			if ph != "" {
				args = append(args, "--phase", ph)
			}
			out, errOut, code := runCLI(t, nil, args...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errOut)
			}
			if err := validate([]byte(out)); err != nil {
				t.Errorf("%v: %v", args, err)
			}
		}
	}
	for _, args := range [][]string{customArgs, {"--chart", "./ccm.tgz", "--kube-version", "1.26", "--cloud-config"}, {"--step", "during.switch"},
		{"--kube-version", "1.36", "--from", "builtin"}, {"--kube-version", "1.35", "--from", "new", "--cloud-config"}} {
		got, errOut, code := runCLI(t, nil, append([]string{"plan", "--distro", "rke2", "-o", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		if err := validate([]byte(got)); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	out, _, _ := runCLI(t, nil, append([]string{"plan", "--distro", "rke2", "-o", "json"}, customArgs...)...)
	// Changes the schema must catch.
	for name, mutate := range map[string]func(m map[string]any){
		"a step without rollback": func(m map[string]any) { firstStep(m)["rollback"] = nil; delete(firstStep(m), "rollback") },
		"an unknown field":        func(m map[string]any) { m["extra"] = true },
		"a bad step ID":           func(m map[string]any) { firstStep(m)["id"] = "preflight" },
		"a bad phase":             func(m map[string]any) { m["phases"].([]any)[0].(map[string]any)["name"] = "sometime" },
		"no lease for leader migration": func(m map[string]any) {
			delete(m, "leaderMigration")
		},
		"a command without shell": func(m map[string]any) {
			delete(firstStep(m)["commands"].([]any)[0].(map[string]any), "shell")
		},
		"an unknown command kind": func(m map[string]any) {
			firstStep(m)["commands"].([]any)[0].(map[string]any)["kind"] = "ssh"
		},
		"an unknown chart source": func(m map[string]any) { m["ccm"].(map[string]any)["source"] = "ftp" },
		"an input without its source": func(m map[string]any) {
			delete(m["inputs"].([]any)[0].(map[string]any), "source")
		},
		"an input of an unknown kind": func(m map[string]any) { m["inputs"].([]any)[0].(map[string]any)["kind"] = "secret" },
		"a version that is none":      func(m map[string]any) { m["kubernetesVersion"] = "latest" },
	} {
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		mutate(m)
		b, _ := json.Marshal(m)
		if err := validate(b); err == nil {
			t.Errorf("the schema accepts %s", name)
		}
	}
}

func firstStep(m map[string]any) map[string]any {
	return m["phases"].([]any)[0].(map[string]any)["steps"].([]any)[0].(map[string]any)
}

// TestRendererCommands: every renderer command the plans print goes through
// the real command line's flag parsing and option checks, and renders a
// chart's output with the plan's image: Helm's --post-renderer-args as the
// post-renderer gets them, the chart wrapper's renderer flags as it passes
// them on.
func TestRendererCommands(t *testing.T) {
	input, err := os.ReadFile(filepath.Join(testtools.Root(), "renderer", "testdata", "render", "rke2-install", "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	image := regexp.MustCompile(`cloud-controller-manager:v[0-9.]+`)
	for name, p := range plans(t) {
		t.Run(name, func(t *testing.T) {
			chart := image.ReplaceAll(input, []byte("cloud-controller-manager:"+p.CCM.ImageTag))
			n := 0
			for _, c := range allCommands(p) {
				if c.Kind != plan.KindRenderer || len(c.Argv) < 2 || c.Argv[1] == "uninstall" || c.Argv[1] == "rollback" {
					continue
				}
				var args []string
				switch c.Argv[0] {
				case "helm":
					if i := slices.Index(c.Argv, "--post-renderer"); i < 0 || c.Argv[i+1] != "aws-ccm-renderer" {
						t.Errorf("helm command without aws-ccm-renderer as post-renderer: %s", c.Shell)
						continue
					}
					for _, a := range c.Argv {
						if v, ok := strings.CutPrefix(a, "--post-renderer-args="); ok {
							args = append(args, v)
						}
					}
				case "aws-ccm-renderer":
					// The renderer's own flags of a chart wrapper command.
					for _, a := range c.Argv[2:] {
						for _, f := range []string{"--distro=", "--mode=", "--leader-name=", "--kcm-user=", "--kube-version=", "--set-arg="} {
							if strings.HasPrefix(a, f) {
								args = append(args, a)
							}
						}
					}
				default:
					t.Errorf("renderer command runs %s: %s", c.Argv[0], c.Shell)
					continue
				}
				n++
				out, errOut, code := runCLI(t, chart, args...)
				if code != 0 {
					t.Errorf("the renderer refuses %q (exit %d): %s", args, code, strings.TrimSpace(errOut))
					continue
				}
				migrate := slices.Contains(args, "--mode=migrate")
				if got := strings.Contains(out, "--enable-leader-migration=true"); got != migrate {
					t.Errorf("%q: leader migration in the output %v, want %v", args, got, migrate)
				}
				if migrate && !strings.Contains(out, "leaderName: "+p.LeaderMigration.Name) && !strings.Contains(out, `leaderName: "`+p.LeaderMigration.Name+`"`) {
					t.Errorf("%q: the output's LeaderMigrationConfiguration does not name lease %s", args, p.LeaderMigration.Name)
				}
			}
			if n == 0 {
				t.Error("no renderer command")
			}
		})
	}
}

// installPath is the runbook of new clusters, each distribution's section
// generated by plan --from new.
var installPath = filepath.Join("docs", "new-cluster.md")

// guidePlans builds the plans of a plan.WriteGuide marker, at the defaults.
func guidePlans(t *testing.T, names []string) []*plan.Plan {
	t.Helper()
	var ps []*plan.Plan
	for _, d := range names {
		o := plan.DefaultOptions()
		o.Distro = distros.Distro(d)
		ps = append(ps, mustBuild(t, o))
	}
	return ps
}

// TestGuide: the runbooks of docs/dev/runbooks.md list every step of every
// distribution in the checklist, show the first distribution's steps in
// full, and of the others every step that differs from the first one's in
// more than --distro (and only those).
func TestGuide(t *testing.T) {
	ps := guidePlans(t, []string{"rke2", "rke", "kubeadm", "k3s"})
	var b bytes.Buffer
	plan.WriteGuide(&b, ps, 2)
	guide := b.String()
	sections := strings.Split(guide, ": what differs\n")
	if len(sections) != len(ps) {
		t.Fatalf("%d sections of what differs, want %d", len(sections)-1, len(ps)-1)
	}
	for i, p := range ps {
		for _, s := range allSteps(p) {
			if !strings.Contains(sections[0], "| `"+s.ID+"` |") {
				t.Errorf("%s: %s is not in the checklist", p.Distro, s.ID)
			}
			shown := strings.Contains(sections[i], "Step `"+s.ID+"`.")
			if i == 0 {
				shown = strings.Contains(sections[0][strings.Index(sections[0], "The steps in full"):], "Step `"+s.ID+"`.")
			}
			if want := plan.GuideShows(ps, p, s); shown != want {
				t.Errorf("%s: %s shown %v, want %v", p.Distro, s.ID, shown, want)
			}
		}
	}
	// A step that differs only in --distro is not repeated.
	install, _ := findStep(ps[2], "before.install-ccm")
	if plan.GuideShows(ps, ps[2], install) {
		t.Error("kubeadm's before.install-ccm differs from RKE2's in more than --distro")
	}
}

func findStep(p *plan.Plan, id string) (plan.Step, bool) {
	for _, s := range allSteps(p) {
		if s.ID == id {
			return s, true
		}
	}
	return plan.Step{}, false
}

// TestReadme: the release the README's Helm commands install is the plan's,
// and the CCM commands it quotes from the RKE1 plan are the plan's own.
func TestReadme(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testtools.Root(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	release := regexp.MustCompile(`(?m)^(?:helm (?:install|upgrade|template)|aws-ccm-renderer upgrade)(?: --install)? (\S+) `)
	ms := release.FindAllStringSubmatch(readme, -1)
	if len(ms) < 3 {
		t.Fatalf("README.md: %d install commands", len(ms))
	}
	for _, m := range ms {
		if m[1] != upstream.Release {
			t.Errorf("README.md installs release %s, the plan %s: %s", m[1], upstream.Release, m[0])
		}
	}
	o := plan.DefaultOptions()
	o.Distro = distros.RKE
	p := mustBuild(t, o)
	for _, id := range []string{"before.install-ccm", "after.ccm-install-mode"} {
		s, ok := findStep(p, id)
		if !ok {
			t.Fatalf("no %s", id)
		}
		c, _ := plan.MainCommand(s)
		if !strings.Contains(readme, c.Shell) {
			t.Errorf("README.md does not quote %s's command as the plan prints it:\n%s", id, c.Shell)
		}
	}
}

// TestInstallDocCommands: the plan commands docs/new-cluster.md opens with
// run, and print what the doc says they do.
func TestInstallDocCommands(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testtools.Root(), installPath))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```sh\n(.*?)```").FindSubmatch(b)
	if block == nil {
		t.Fatalf("%s opens with no sh block", installPath)
	}
	n := 0
	for _, line := range strings.Split(string(block[1]), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		args := strings.Fields(cmd)
		if len(args) == 0 {
			continue
		}
		if args[0] != "aws-ccm-renderer" || args[1] != "plan" {
			t.Fatalf("%s: not a plan command: %s", installPath, line)
		}
		out, errOut, code := runCLI(t, nil, args[1:]...)
		if code != 0 || errOut != "" || !strings.Contains(out, "A new ") {
			t.Errorf("%s: exit %d, stderr %q, output:\n%s", line, code, errOut, out)
		}
		n++
	}
	if n != 3 {
		t.Errorf("%d plan commands, want 3", n)
	}
}
