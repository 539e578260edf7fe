// Package plan runs the Helm commands of every migration plan with the real
// Helm 3 CLI and the real renderer as its post-renderer (helm template with
// the same flags, against the upstream chart package of the plan's chart
// version) and checks that what they render is what the plan says.
package plan

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// templateArgs turns a plan's `helm upgrade --install` into `helm template`
// with the same chart flags and post-renderer arguments: the chart from the
// local package of its --version, the renderer binary under test.
func templateArgs(t *testing.T, argv []string) (args []string, mode renderer.Mode) {
	t.Helper()
	if len(argv) < 5 || !slices.Equal(argv[:3], []string{"helm", "upgrade", "--install"}) || argv[4] != plan.ChartName {
		t.Fatalf("not a helm upgrade --install of the chart: %q", argv)
	}
	args = []string{"template", argv[3]}
	version := ""
	var rest []string
	for i := 5; i < len(argv); i++ {
		switch a := argv[i]; a {
		case "--repo":
			if argv[i+1] != plan.ChartRepo {
				t.Errorf("chart repository %s", argv[i+1])
			}
			i++
		case "--version":
			version = argv[i+1]
			i++
		case "--post-renderer":
			if argv[i+1] != "aws-ccm-renderer" {
				t.Errorf("post-renderer %s", argv[i+1])
			}
			rest = append(rest, a, testtools.Renderer(t))
			i++
		case "--wait":
		default:
			rest = append(rest, a)
			if m, ok := strings.CutPrefix(a, "--post-renderer-args=--mode="); ok {
				mode = renderer.Mode(m)
			}
		}
	}
	if version == "" {
		t.Fatalf("no --version in %q", argv)
	}
	return append(append(args, testtools.UpstreamChart(t, version)), rest...), mode
}

func TestPlanHelmCommands(t *testing.T) {
	nodes := testtools.Fixtures(t)
	helm, env := testtools.Helm3(t), testtools.HelmEnv(t)
	for _, d := range plan.Distros {
		for _, custom := range []bool{false, true} {
			o := plan.DefaultOptions()
			o.Distro = d
			if custom {
				o.Release, o.Namespace, o.KubeVersion, o.KCMUser, o.LeaderName, o.ChartVersion =
					"ccm", "cloud", "v1.25.16", "system:kcm", "ccm-migration", "0.0.10"
			}
			p, err := plan.Build(o)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, ph := range p.Phases {
				for _, s := range ph.Steps {
					for i, c := range s.Commands {
						if len(c.Argv) < 2 || c.Argv[0] != "helm" || c.Argv[1] != "upgrade" {
							continue
						}
						n++
						t.Run(fmt.Sprintf("%s/custom=%v/%s-%d", d, custom, s.ID, i), func(t *testing.T) {
							args, mode := templateArgs(t, c.Argv)
							stdout, stderr, err := testtools.Run(t, env, helm, args...)
							if err != nil {
								t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr)
							}
							objs, err := manifest.Split(stdout)
							if err != nil {
								t.Fatal(err)
							}
							testtools.CheckMeaning(t, objs, nodes, d, mode)
							ccm, err := manifest.CCM(objs)
							if err != nil {
								t.Fatal(err)
							}
							if ccm.Namespace != o.Namespace {
								t.Errorf("the CCM is in namespace %s, the plan's checks look in %s", ccm.Namespace, o.Namespace)
							}
							if ccm.Name != p.CCM.DaemonSet {
								t.Errorf("the DaemonSet is %s, the plan's checks look for %s", ccm.Name, p.CCM.DaemonSet)
							}
							image, _ := manifest.Containers(ccm)[0]["image"].(string)
							if !strings.HasSuffix(image, ":"+imageTag(c.Argv)) || !strings.HasPrefix(image, plan.ImageRepo+":") {
								t.Errorf("image %s, the command pins %s", image, imageTag(c.Argv))
							}
							if mode == renderer.ModeMigrate {
								checkLeaderMigration(t, objs, p)
							}
						})
					}
				}
			}
			if n == 0 {
				t.Errorf("%s: no helm upgrade in the plan", d)
			}
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
