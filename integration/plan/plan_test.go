// Package plan runs the commands of every migration plan with the real
// programs: each CCM command (the chart wrapper's upgrade, or with --helm
// the Helm 3 CLI with the renderer as post-renderer) as the template it
// would apply, against the upstream chart package of the plan's chart
// version, checking that it renders what the plan says; and each check
// gate through the real aws-ccm-renderer check, which must take its flags
// (a cluster that cannot be reached is exit 3, a flag it refuses exit 2).
package plan

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// variant is a set of options the commands are run with.
type variant struct {
	name string
	set  func(o *plan.Options)
}

var variants = []variant{
	{"defaults", func(o *plan.Options) {}},
	{"custom", func(o *plan.Options) {
		o.Release, o.Namespace, o.KubeVersion, o.KCMUser, o.LeaderName, o.ChartVersion =
			"ccm", "cloud", "1.25", "system:kcm", "ccm-migration", "0.0.10"
		o.CloudConfig = true
	}},
	// The route controller on (no K3s: it never had one to take over).
	{"routes", func(o *plan.Options) {
		if o.Distro != distros.K3s {
			o.ClusterCIDR = "10.42.0.0/16"
		}
	}},
	{"helm", func(o *plan.Options) { o.Helm, o.CloudConfig = true, true }},
}

// build makes a plan whose chart is the local package of its version, so
// that its commands run here as printed.
func build(t *testing.T, d distros.Distro, v variant) (*plan.Plan, plan.Options) {
	t.Helper()
	o := plan.DefaultOptions()
	o.Distro = d
	v.set(&o)
	o.Chart = testtools.UpstreamChart(t, o.ChartVersion)
	p, err := plan.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	if p.CCM.Source != plan.SourceLocal {
		t.Fatalf("chart %s is not local to the plan", o.Chart)
	}
	return p, o
}

// workdir is a directory with the files the plan's commands read: the
// cloud config values of before.cloud-config.
func workdir(t *testing.T, p *plan.Plan) string {
	t.Helper()
	dir := t.TempDir()
	for _, ph := range p.Phases {
		for _, s := range ph.Steps {
			for _, sn := range s.Snippets {
				if !strings.ContainsAny(sn.File, "/ ") {
					testtools.WriteFile(t, filepath.Join(dir, sn.File), []byte(sn.Content))
				}
			}
		}
	}
	return dir
}

// templateOf turns a CCM command into the template it would apply: the
// chart wrapper's upgrade into its template, helm upgrade into helm
// template with the renderer under test.
func templateOf(t *testing.T, argv []string) (name string, args []string, mode renderer.Mode) {
	t.Helper()
	if len(argv) < 5 || argv[1] != "upgrade" || argv[2] != "--install" {
		t.Fatalf("not an upgrade --install: %q", argv)
	}
	args = []string{"template"}
	for i := 3; i < len(argv); i++ {
		switch a := argv[i]; {
		case a == "--wait" || a == "--reset-options":
		case a == "--post-renderer":
			args = append(args, a, testtools.Renderer(t))
			i++
		default:
			args = append(args, a)
			for _, p := range []string{"--mode=", "--post-renderer-args=--mode="} {
				if m, ok := strings.CutPrefix(a, p); ok {
					mode = renderer.Mode(m)
				}
			}
		}
	}
	switch argv[0] {
	case "helm":
		return testtools.Helm3(t), args, mode
	case "aws-ccm-renderer":
		return testtools.Renderer(t), args, mode
	}
	t.Fatalf("runs %s: %q", argv[0], argv)
	return "", nil, ""
}

func TestPlanCCMCommands(t *testing.T) {
	nodes := testtools.Fixtures(t)
	for _, d := range plan.Distros {
		for _, v := range variants {
			p, o := build(t, d, v)
			dir := workdir(t, p)
			n := 0
			for _, ph := range p.Phases {
				for _, s := range ph.Steps {
					for i, c := range s.Commands {
						if len(c.Argv) < 2 || c.Argv[1] != "upgrade" {
							continue
						}
						n++
						t.Run(fmt.Sprintf("%s/%s/%s-%d", d, v.name, s.ID, i), func(t *testing.T) {
							prog, args, mode := templateOf(t, c.Argv)
							cmd := testtools.Command(t, testtools.HelmEnv(t), prog, args...) // no controlling terminal, as where it runs
							cmd.Dir = dir
							var stderr strings.Builder
							cmd.Stderr = &stderr
							stdout, err := cmd.Output()
							if err != nil {
								t.Fatalf("%s %s: %v\n%s", prog, strings.Join(args, " "), err, stderr.String())
							}
							objs, err := manifest.Split(stdout)
							if err != nil {
								t.Fatal(err)
							}
							if o.ClusterCIDR == "" {
								// With routes on --configure-cloud-routes is
								// true; checkArgs checks them.
								testtools.CheckMeaning(t, objs, nodes, d, mode)
							}
							ccm, err := manifest.CCM(objs)
							if err != nil {
								t.Fatal(err)
							}
							if ccm.Namespace != o.Namespace || ccm.Name != p.CCM.DaemonSet {
								t.Errorf("the CCM is %s/%s, the plan's checks look for %s/%s", ccm.Namespace, ccm.Name, o.Namespace, p.CCM.DaemonSet)
							}
							ctr := manifest.Containers(ccm)[0]
							image, _ := ctr["image"].(string)
							if !strings.HasSuffix(image, ":"+imageTag(c.Argv)) || !strings.HasPrefix(image, releases.ImageRepository+":") {
								t.Errorf("image %s, the command pins %s", image, imageTag(c.Argv))
							}
							checkArgs(t, ctr, o, s.ID)
							if mode == renderer.ModeMigrate {
								checkLeaderMigration(t, objs, p)
							}
						})
					}
				}
			}
			if n == 0 {
				t.Errorf("%s/%s: no CCM command in the plan", d, v.name)
			}
		}
	}
}

// checkArgs: the CCM runs with what the plan's options ask for.
func checkArgs(t *testing.T, ctr map[string]any, o plan.Options, step string) {
	t.Helper()
	args := append(manifest.Strings(ctr["command"]), manifest.Strings(ctr["args"])...)
	want := map[string]bool{}
	if o.CloudConfig {
		want["--cloud-config=/etc/aws-ccm/cloud.conf"] = true
		mounted := false
		for _, m := range ctr["volumeMounts"].([]any) {
			if mm, _ := m.(map[string]any); mm["mountPath"] == "/etc/aws-ccm" {
				mounted = true
			}
		}
		if !mounted {
			t.Errorf("%s: the cloud config is not mounted at /etc/aws-ccm", step)
		}
	}
	if o.ClusterCIDR != "" {
		want["--configure-cloud-routes=true"], want["--cluster-cidr="+o.ClusterCIDR] = true, true
	}
	if o.Distro == distros.K3s {
		want["--controllers=*,-service"] = step == "during.install-ccm"
	}
	for arg, on := range want {
		if slices.Contains(args, arg) != on {
			t.Errorf("%s: %s in the CCM's args %v, want %v: %q", step, arg, !on, on, args)
		}
	}
}

func imageTag(argv []string) string {
	for _, a := range argv {
		if v, ok := strings.CutPrefix(a, "image.tag="); ok {
			return v
		}
	}
	return ""
}

// TestPlanCheckCommands: every gate of every plan, run as printed (the
// template pipeline included) by the real programs against a cluster that
// cannot be reached: check takes the flags (exit 3, not 2) and, behind a
// pipe, the manifests the template prints.
func TestPlanCheckCommands(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	testtools.WriteFile(t, kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: gone, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: gone, context: {cluster: gone, user: u}}]
current-context: gone
`))
	bin := filepath.Dir(testtools.Renderer(t))
	env := func(t *testing.T) []string {
		return append(testtools.HelmEnv(t), "KUBECONFIG="+kubeconfig, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	for _, d := range plan.Distros {
		for _, v := range variants[:2] {
			p, _ := build(t, d, v)
			dir := workdir(t, p)
			seen := map[string]bool{}
			for _, ph := range p.Phases {
				for _, s := range ph.Steps {
					for _, c := range s.Checks {
						if c.Command == nil || c.Command.Kind != plan.KindCheck || seen[c.Command.Shell] {
							continue
						}
						seen[c.Command.Shell] = true
						t.Run(fmt.Sprintf("%s/%s/%s", d, v.name, s.ID), func(t *testing.T) {
							cmd := testtools.Command(t, env(t), sh, "-c", c.Command.Shell) // no controlling terminal, as where it runs
							cmd.Dir = dir
							out, err := cmd.CombinedOutput()
							if code := testtools.ExitCode(err); code != 3 || !strings.Contains(string(out), "127.0.0.1:1") {
								t.Errorf("%s\nexit %d, want 3 (the cluster cannot be reached):\n%s", c.Command.Shell, code, out)
							}
						})
					}
				}
			}
			if len(seen) < 2 {
				t.Errorf("%s/%s: %d check commands", d, v.name, len(seen))
			}
		}
	}
}

// checkLeaderMigration: the rendered config names the plan's lease, and the
// in-tree controller manager's user may get and update it through the
// rendered RBAC.
func checkLeaderMigration(t *testing.T, objs []manifest.Object, p *plan.Plan) {
	t.Helper()
	lease := p.LeaderMigration.Name
	found := false
	for _, o := range objs {
		if o.Kind != "ConfigMap" {
			continue
		}
		data, _ := manifest.Get(o.Doc, "data", renderer.LeaderMigrationFile).(string)
		if strings.Contains(data, "kind: LeaderMigrationConfiguration") {
			found = true
			if !strings.Contains(data, "leaderName: \""+lease+"\"") && !strings.Contains(data, "leaderName: "+lease+"\n") {
				t.Errorf("the CCM's LeaderMigrationConfiguration does not name lease %s:\n%s", lease, data)
			}
		}
	}
	if !found {
		t.Error("no LeaderMigrationConfiguration in the migrate-mode output")
	}
	for _, verb := range []string{"get", "update"} {
		if !userMay(objs, p.LeaderMigration.KCMUser, p.LeaderMigration.Namespace, lease, verb) {
			t.Errorf("the rendered RBAC does not let %s %s Lease %s/%s", p.LeaderMigration.KCMUser, verb, p.LeaderMigration.Namespace, lease)
		}
	}
}

// userMay reports whether a RoleBinding in namespace binds user to a Role
// that allows verb on the Lease named lease.
func userMay(objs []manifest.Object, user, namespace, lease, verb string) bool {
	roles := map[string]manifest.Object{}
	for _, o := range objs {
		if o.Kind == "Role" && o.Namespace == namespace {
			roles[o.Name] = o
		}
	}
	for _, b := range objs {
		if b.Kind != "RoleBinding" || b.Namespace != namespace {
			continue
		}
		subjects, _ := b.Doc["subjects"].([]any)
		bound := slices.ContainsFunc(subjects, func(s any) bool {
			m, _ := s.(map[string]any)
			return m["kind"] == "User" && m["name"] == user
		})
		ref, _ := b.Doc["roleRef"].(map[string]any)
		role, ok := roles[fmt.Sprint(ref["name"])]
		if !bound || !ok || ref["kind"] != "Role" {
			continue
		}
		rules, _ := role.Doc["rules"].([]any)
		for _, r := range rules {
			m, _ := r.(map[string]any)
			if slices.Contains(manifest.Strings(m["apiGroups"]), "coordination.k8s.io") &&
				slices.Contains(manifest.Strings(m["resources"]), "leases") &&
				slices.Contains(manifest.Strings(m["verbs"]), verb) &&
				(len(manifest.Strings(m["resourceNames"])) == 0 || slices.Contains(manifest.Strings(m["resourceNames"]), lease)) {
				return true
			}
		}
	}
	return false
}
