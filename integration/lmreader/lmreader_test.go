// Package lmreader reads every LeaderMigrationConfiguration the product
// writes with the reader of the Kubernetes minor that will read it
// (e2e/tools/lmreader: ReadLeaderMigrationConfiguration and
// ValidateLeaderMigrationConfiguration of k8s.io/controller-manager at that
// minor): the CCM's, rendered in migrate mode from every upstream chart
// version and CCM image minor and by the wrapper chart, and the in-tree
// controller manager's, from every plan.
package lmreader

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// parsed is what a reader prints for a configuration it accepts.
type parsed struct {
	ControllerManager   string   `json:"controllerManager"`
	LeaderName          string   `json:"leaderName"`
	ResourceLock        string   `json:"resourceLock"`
	ControllerLeaders   []leader `json:"controllerLeaders"`
	StrictDecodingError string   `json:"strictDecodingError"`
}

type leader struct {
	Name      string `json:"name"`
	Component string `json:"component"`
}

// The reader's exit codes.
const (
	exitOK       = 0
	exitUsage    = 1
	exitDecode   = 3 // ReadLeaderMigrationConfiguration failed
	exitValidate = 4 // ValidateLeaderMigrationConfiguration failed
)

// read runs the reader of 1.<minor> on a configuration's text.
func read(t *testing.T, minor int, text string) (p parsed, stderr string, code int) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "leader-migration.yaml")
	testtools.WriteFile(t, file, []byte(text))
	return readFile(t, minor, file)
}

func readFile(t *testing.T, minor int, args ...string) (p parsed, stderr string, code int) {
	t.Helper()
	out, errOut, err := testtools.Run(t, nil, testtools.LMReader(t, minor), args...)
	code = testtools.ExitCode(err)
	if code == exitOK {
		if err := json.Unmarshal(out, &p); err != nil {
			t.Fatalf("reader 1.%d printed %q: %v", minor, out, err)
		}
		if !strings.HasPrefix(p.ControllerManager, fmt.Sprintf("v0.%d.", minor)) {
			t.Fatalf("reader 1.%d is built with k8s.io/controller-manager %s", minor, p.ControllerManager)
		}
	} else if len(out) != 0 {
		t.Errorf("reader 1.%d exits %d and prints %q", minor, code, out)
	}
	return p, string(errOut), code
}

// accepted: the reader of 1.<minor> loads and validates text as a
// configuration naming lease and controllers under a leases lock, with no
// field its API version lacks.
func accepted(t *testing.T, minor int, text, lease string, controllers []string) {
	t.Helper()
	p, stderr, code := read(t, minor, text)
	if code != exitOK {
		t.Fatalf("the reader of 1.%d refuses it (exit %d): %s\n%s", minor, code, stderr, text)
	}
	var names []string
	for _, l := range p.ControllerLeaders {
		names = append(names, l.Name)
		if l.Component != "*" {
			t.Errorf("1.%d: controller %s for component %q", minor, l.Name, l.Component)
		}
	}
	if p.LeaderName != lease || p.ResourceLock != "leases" || !slices.Equal(names, controllers) || p.StrictDecodingError != "" {
		t.Errorf("the reader of 1.%d reads leaderName %q resourceLock %q controllers %q strict %q; want %q, leases, %q, none\n%s",
			minor, p.LeaderName, p.ResourceLock, names, p.StrictDecodingError, lease, controllers, text)
	}
}

func lmConfig(apiVersion, body string) string {
	return "apiVersion: controllermanager.config.k8s.io/" + apiVersion + "\nkind: LeaderMigrationConfiguration\n" + body
}

const route = "controllerLeaders:\n  - name: route\n    component: \"*\"\n"

// TestReaders: what each minor's reader accepts and refuses, with its
// error, so that a reader that accepted everything would fail here.
func TestReaders(t *testing.T) {
	type want struct {
		from, to int    // the minors 1.<from> to 1.<to>
		code     int    // the reader's exit code
		text     string // in its stderr, or (exit 0) its strictDecodingError
	}
	notRegistered := func(v string) string {
		return `no kind "LeaderMigrationConfiguration" is registered for version "controllermanager.config.k8s.io/` + v + `"`
	}
	const noLock = `resourceLock: Invalid value: "": resource Lock must be one of 'leases' or 'endpoints'`
	for _, c := range []struct {
		name string
		text string
		want []want
	}{
		{"v1alpha1 with resourceLock", lmConfig("v1alpha1", "leaderName: lm\nresourceLock: leases\n"+route),
			[]want{{21, 27, exitOK, ""}}},
		{"v1alpha1 without resourceLock", lmConfig("v1alpha1", "leaderName: lm\n"+route),
			[]want{{21, 27, exitValidate, noLock}}},
		{"v1beta1 with resourceLock", lmConfig("v1beta1", "leaderName: lm\nresourceLock: leases\n"+route),
			[]want{{21, 21, exitDecode, notRegistered("v1beta1")}, {22, 27, exitOK, ""}}},
		{"v1beta1 without resourceLock", lmConfig("v1beta1", "leaderName: lm\n"+route),
			[]want{{21, 21, exitDecode, notRegistered("v1beta1")}, {22, 27, exitValidate, noLock}}},
		{"v1beta1 endpoints lock", lmConfig("v1beta1", "leaderName: lm\nresourceLock: endpoints\n"+route),
			[]want{{21, 21, exitDecode, notRegistered("v1beta1")}, {22, 27, exitOK, ""}}},
		{"v1beta1 configmaps lock", lmConfig("v1beta1", "leaderName: lm\nresourceLock: configmaps\n"+route),
			[]want{{21, 21, exitDecode, notRegistered("v1beta1")},
				{22, 27, exitValidate, `resourceLock: Invalid value: "configmaps": resource Lock must be one of 'leases' or 'endpoints'`}}},
		{"v1", lmConfig("v1", "leaderName: lm\n"+route),
			[]want{{21, 23, exitDecode, notRegistered("v1")}, {24, 27, exitOK, ""}}},
		{"v1 with resourceLock, which v1 lacks and the reader drops", lmConfig("v1", "leaderName: lm\nresourceLock: leases\n"+route),
			[]want{{21, 23, exitDecode, notRegistered("v1")}, {24, 27, exitOK, `strict decoding error: unknown field "resourceLock"`}}},
		{"v1 without leaderName", lmConfig("v1", route),
			[]want{{21, 23, exitDecode, notRegistered("v1")},
				{24, 27, exitValidate, "leaderName: Required value: leaderName must be set for LeaderMigrationConfiguration"}}},
		{"v1 controller without component", lmConfig("v1", "leaderName: lm\ncontrollerLeaders:\n  - name: route\n"),
			[]want{{21, 23, exitDecode, notRegistered("v1")},
				{24, 27, exitValidate, "controllerLeaders[0].component: Required value: component must be set"}}},
		{"an unknown API version", lmConfig("v2", "leaderName: lm\n"+route),
			[]want{{21, 27, exitDecode, notRegistered("v2")}}},
		{"not YAML", "leaderName: [\n",
			[]want{{21, 27, exitDecode, "yaml: line 1: did not find expected node content"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, minor := range testtools.LMReaderMinors(t) {
				i := slices.IndexFunc(c.want, func(w want) bool { return w.from <= minor && minor <= w.to })
				if i < 0 {
					t.Fatalf("no expectation for the reader of 1.%d", minor)
				}
				w := c.want[i]
				p, stderr, code := read(t, minor, c.text)
				got := p.StrictDecodingError
				if code != exitOK {
					got = stderr
				}
				if code != w.code || !strings.Contains(got, w.text) || (w.text == "") != (got == "") {
					t.Errorf("1.%d: exit %d, %q; want exit %d, %q", minor, code, got, w.code, w.text)
				}
				if code == exitOK && (p.LeaderName != "lm" || len(p.ControllerLeaders) != 1 || p.ResourceLock == "") {
					t.Errorf("1.%d: read as %+v", minor, p)
				}
				if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 {
					t.Errorf("1.%d: stderr of %d lines: %s", minor, n+1, stderr)
				}
			}
		})
	}
	t.Run("no file", func(t *testing.T) {
		for _, minor := range testtools.LMReaderMinors(t) {
			if _, stderr, code := readFile(t, minor, filepath.Join(t.TempDir(), "absent.yaml")); code != exitDecode || !strings.Contains(stderr, "unable to read leader migration configuration") {
				t.Errorf("1.%d: exit %d, %s", minor, code, stderr)
			}
			if _, stderr, code := readFile(t, minor); code != exitUsage || !strings.HasPrefix(stderr, "usage: ") {
				t.Errorf("1.%d without arguments: exit %d, %s", minor, code, stderr)
			}
		}
	})
}

// ccmTag is the image tag the test pins a CCM of 1.<minor> with: the
// release the renderer pins for that minor, else its first.
func ccmTag(minor int) string {
	if tag, ok := releases.Latest(minor); ok {
		return tag
	}
	return fmt.Sprintf("v1.%d.0", minor)
}

// TestChartVersions renders every upstream chart version at its default
// image and with the image of every minor from the one before the first
// reader's to the last reader's, in migrate mode, through the renderer
// binary: the CCM's LeaderMigrationConfiguration is read by the reader of
// the CCM's minor (a CCM newer than the last reader: by the last one), and
// must load and validate with a leases lock, the renderer's lease and
// controllers. A combination the renderer refuses is asserted as a
// refusal: one line on stderr, nothing on stdout.
func TestChartVersions(t *testing.T) {
	minors := testtools.LMReaderMinors(t)
	helm, env, rend := testtools.Helm3(t), testtools.HelmEnv(t), testtools.Renderer(t)
	n := 0
	for _, chartVersion := range testtools.ChartVersions {
		chart := testtools.UpstreamChart(t, chartVersion)
		tags := []string{""} // the chart's default
		for m := minors[0] - 1; m <= minors[len(minors)-1]; m++ {
			tags = append(tags, ccmTag(m))
		}
		for _, tag := range tags {
			args := []string{"template", "ccm", chart, "--namespace", "kube-system"}
			if tag != "" {
				args = append(args, "--set", "image.tag="+tag)
			}
			plain := testtools.MustRun(t, env, helm, args...)
			ccm, _ := testtools.CCMOf(t, plain)
			image, _ := manifest.Containers(ccm)[0]["image"].(string)
			v, err := version.ParseGeneric(renderer.ImageTag(image))
			if err != nil {
				t.Fatalf("chart %s: image %s: %v", chartVersion, image, err)
			}
			minor := int(v.Minor())
			// A CCM or a cluster newer than the last minor with the in-tree
			// provider is refused unless allowed; then it warns.
			newer := func(err string) string {
				if minor > releases.LastInTreeMinor {
					return err
				}
				return ""
			}
			older := "a migration runs the CCM of the cluster's minor"
			if minor-1 > releases.LastInTreeMinor {
				older = "has no in-tree AWS provider to migrate from"
			}
			cases := []struct {
				name, lease, err string
				args             []string
				warn             bool
			}{
				{name: "cluster unknown", lease: renderer.DefaultLeaderName, err: newer(testtools.MigrationVersionWarning)},
				{name: "cluster unknown, skew allowed", lease: renderer.DefaultLeaderName, args: []string{"--allow-version-skew"}, warn: minor > releases.LastInTreeMinor},
				{name: "cluster of its minor, own lease", lease: "ccm-migration", err: newer("has no in-tree AWS provider to migrate from"),
					args: []string{fmt.Sprintf("--kube-version=v1.%d.5", minor), "--leader-name=ccm-migration"}},
				{name: "cluster a minor older", err: older,
					args: []string{fmt.Sprintf("--kube-version=v1.%d.5", minor-1)}},
			}
			for _, c := range cases {
				t.Run(fmt.Sprintf("%s/%s/%s", chartVersion, image[strings.LastIndexByte(image, '/')+1:], c.name), func(t *testing.T) {
					args := append([]string{"--mode=migrate"}, c.args...)
					wantErr := c.err
					if minor < minors[0] && wantErr == "" {
						wantErr = "has no leader migration"
					}
					cmd := testtools.Command(t, testtools.HelmEnv(t), rend, args...) // no controlling terminal, as where it runs
					var stdout, stderr bytes.Buffer
					cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(plain), &stdout, &stderr
					err := cmd.Run()
					if wantErr != "" {
						if err == nil || stdout.Len() != 0 || !strings.Contains(stderr.String(), wantErr) || strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
							t.Fatalf("the renderer %q: %v, stdout %d bytes, stderr %q; want the refusal %q", args, err, stdout.Len(), stderr.String(), wantErr)
						}
						return
					}
					if err != nil {
						t.Fatalf("the renderer %q: %v\n%s", args, err, stderr.String())
					}
					if warn := strings.Contains(stderr.String(), testtools.MigrationVersionWarning); stderr.Len() != 0 && !warn || warn != c.warn {
						t.Errorf("stderr: %q", stderr.String())
					}
					reader := min(minor, minors[len(minors)-1])
					accepted(t, reader, migrationConfig(t, stdout.Bytes()), c.lease, renderer.LeaderMigrationControllers)
					n++
				})
			}
			if tag == "" && minor >= minors[0] {
				// The same through the real Helm 3 CLI, the renderer as its
				// post-renderer: the same configuration, or for the charts
				// whose CCM is newer than any cluster that migrates the
				// refusal, and nothing on stdout.
				t.Run(chartVersion+"/helm-post-renderer", func(t *testing.T) {
					rendererArgs := []string{"--mode=migrate", "--leader-name=through-helm"}
					if minor > releases.LastInTreeMinor {
						args := []string{"template", "ccm", chart, "--namespace", "kube-system", "--post-renderer", rend}
						for _, a := range rendererArgs {
							args = append(args, "--post-renderer-args="+a)
						}
						out, stderr, err := testtools.Run(t, testtools.HelmEnv(t), helm, args...)
						if err == nil || len(out) != 0 || !strings.Contains(string(stderr), testtools.MigrationVersionWarning) {
							t.Fatalf("helm with the renderer in migrate mode on a %s CCM: %v, stdout %d bytes, stderr %s", image, err, len(out), stderr)
						}
						rendererArgs = append(rendererArgs, "--allow-version-skew")
					}
					out := testtools.HelmTemplate(t, chart, rendererArgs)
					accepted(t, min(minor, minors[len(minors)-1]), migrationConfig(t, out), "through-helm", renderer.LeaderMigrationControllers)
					n++
				})
			}
		}
	}
	t.Logf("%d rendered configurations read", n)
}

// TestWrapperChart renders the wrapper chart (charts/aws-ccm-rancher) in
// migrate mode for a cluster of every minor from the one before the first
// reader's to the last reader's, with the upstream chart's CCM pinned to
// that minor (1.21's with the feature gate its validation asks for): its
// LeaderMigrationConfiguration is read by the reader of the CCM's minor; a
// CCM without leader migration is refused by the chart, and so is a
// cluster without the in-tree provider unless allowVersionSkew.
func TestWrapperChart(t *testing.T) {
	minors := testtools.LMReaderMinors(t)
	chart := testtools.WrapperChart(t)
	preset := filepath.Join(chart, "presets", "rke2-migrate.yaml")
	var values struct {
		CCM struct {
			Args []string `json:"args"`
		} `json:"aws-cloud-controller-manager"`
	}
	b, err := os.ReadFile(preset)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &values); err != nil {
		t.Fatal(err)
	}
	for minor := minors[0] - 1; minor <= minors[len(minors)-1]; minor++ {
		t.Run(fmt.Sprintf("1.%d", minor), func(t *testing.T) {
			args := []string{"template", "aws-ccm", chart, "--namespace", "kube-system", "-f", preset, "--kube-version", fmt.Sprintf("v1.%d.3", minor),
				"--set", "aws-cloud-controller-manager.image.tag=" + ccmTag(minor), "--set", "leaderName=wrapper-lease"}
			if minor > releases.LastInTreeMinor {
				// A cluster without the in-tree provider: refused, unless
				// allowed.
				if _, stderr, err := testtools.Run(t, testtools.HelmEnv(t), testtools.Helm3(t), args...); err == nil || !strings.Contains(string(stderr), "has no in-tree AWS provider to migrate from") {
					t.Fatalf("the wrapper chart in migrate mode on a 1.%d cluster: %v, %s", minor, err, stderr)
				}
				args = append(args, "--set", "allowVersionSkew=true")
			}
			if minor == minors[0] {
				args = append(args, "--set", fmt.Sprintf("aws-cloud-controller-manager.args[%d]=--feature-gates=%s=true", len(values.CCM.Args), renderer.LeaderMigrationFeatureGate))
			}
			out, stderr, err := testtools.Run(t, testtools.HelmEnv(t), testtools.Helm3(t), args...)
			if minor < minors[0] {
				if err == nil || !strings.Contains(string(stderr), "has no leader migration") {
					t.Fatalf("the wrapper chart with a 1.%d CCM in migrate mode: %v, %s", minor, err, stderr)
				}
				return
			}
			if err != nil {
				t.Fatalf("helm %q: %v\n%s", args, err, stderr)
			}
			accepted(t, minor, migrationConfig(t, out), "wrapper-lease", renderer.LeaderMigrationControllers)
		})
	}
}

// migrationConfig returns the LeaderMigrationConfiguration the CCM of a
// rendered stream reads: the file --leader-migration-config names, from
// the ConfigMap its volume mounts there.
func migrationConfig(t *testing.T, stream []byte) string {
	t.Helper()
	ccm, args := testtools.CCMOf(t, stream)
	objs, _ := manifest.Split(stream) // CCMOf has split it
	if on, _ := manifest.Flag(args, "enable-leader-migration"); on != "true" {
		t.Fatalf("no --enable-leader-migration=true in %q", args)
	}
	path, _ := manifest.Flag(args, "leader-migration-config")
	dir, file := filepath.Split(path)
	var volume string
	for _, c := range manifest.Containers(ccm) {
		mounts, _ := c["volumeMounts"].([]any)
		for _, m := range mounts {
			mm, _ := m.(map[string]any)
			if mm["mountPath"] == strings.TrimSuffix(dir, "/") {
				volume, _ = mm["name"].(string)
			}
		}
	}
	var configMap string
	volumes, _ := manifest.Get(ccm.Doc, "spec", "template", "spec", "volumes").([]any)
	for _, v := range volumes {
		vm, _ := v.(map[string]any)
		if vm["name"] == volume {
			configMap, _ = manifest.Get(vm, "configMap", "name").(string)
		}
	}
	for _, o := range objs {
		if o.Kind == "ConfigMap" && o.Name == configMap && o.Namespace == ccm.Namespace {
			if data, ok := manifest.Get(o.Doc, "data", file).(string); ok {
				return data
			}
		}
	}
	t.Fatalf("--leader-migration-config=%s: no ConfigMap %q mounted there (volume %q) holds %s", path, configMap, volume, file)
	return ""
}

// TestPlanConfigs: every LeaderMigrationConfiguration a plan prints for the
// in-tree controller manager (every distribution, every cluster minor plan
// accepts, the default lease and another) is read by the reader of the
// cluster's minor: it loads and validates, with a leases lock, the plan's
// lease and the controllers of that minor's built-in configuration
// (lmreader -default). Where a migration plan prints none, the controller
// manager runs with the built-in one, which must name the plan's lease.
func TestPlanConfigs(t *testing.T) {
	minors := testtools.LMReaderMinors(t)
	last := slices.Max(slices.Collect(maps.Keys(releases.Tags()))) + 1
	n := 0
	for _, d := range plan.Distros {
		built := 0
		for minor := minors[0] - 1; minor <= last; minor++ {
			for _, lease := range []string{renderer.DefaultLeaderName, "kcm-migration"} {
				o := plan.DefaultOptions()
				o.Distro, o.KubeVersion, o.LeaderName = d, fmt.Sprintf("v1.%d.7", minor), lease
				p, err := plan.Build(o)
				if err != nil {
					continue // a minor plan refuses
				}
				built++
				t.Run(fmt.Sprintf("%s/1.%d/%s", d, minor, lease), func(t *testing.T) {
					configs := kcmConfigs(t, p)
					if p.LeaderMigration == nil {
						if len(configs) != 0 {
							t.Fatalf("a %s plan without leader migration prints %d LeaderMigrationConfigurations", p.Strategy, len(configs))
						}
						return
					}
					if !slices.Contains(minors, minor) {
						t.Fatalf("the plan migrates a 1.%d cluster, which no reader covers (e2e/tools/lmreader)", minor)
					}
					builtin, stderr, code := readFile(t, minor, "-default")
					if code != exitOK {
						t.Fatalf("lmreader-1.%d -default: exit %d, %s", minor, code, stderr)
					}
					var controllers []string
					for _, l := range builtin.ControllerLeaders {
						controllers = append(controllers, l.Name)
					}
					if len(configs) == 0 && builtin.LeaderName != p.LeaderMigration.Name {
						t.Errorf("the plan leaves the controller manager its built-in configuration, whose lease is %s, not the plan's %s", builtin.LeaderName, p.LeaderMigration.Name)
					}
					for _, c := range configs {
						accepted(t, minor, c, p.LeaderMigration.Name, controllers)
						n++
					}
				})
			}
		}
		if built == 0 {
			t.Errorf("no plan for %s", d)
		}
	}
	t.Logf("%d controller manager configurations read", n)
}

// kcmConfigs returns the LeaderMigrationConfigurations of a plan's
// snippets, failing when the plan holds one anywhere else.
func kcmConfigs(t *testing.T, p *plan.Plan) []string {
	t.Helper()
	var configs []string
	for _, ph := range p.Phases {
		for _, s := range ph.Steps {
			for _, sn := range s.Snippets {
				if sn.Language != "yaml" {
					continue
				}
				objs, err := manifest.Split([]byte(sn.Content))
				if err != nil {
					t.Fatalf("%s: %s: %v", s.ID, sn.File, err)
				}
				for _, o := range objs {
					if o.Kind == "LeaderMigrationConfiguration" {
						configs = append(configs, string(o.Raw))
					}
				}
			}
		}
	}
	all, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if k := bytes.Count(all, []byte("kind: LeaderMigrationConfiguration")); k != len(configs) {
		t.Fatalf("the plan holds %d LeaderMigrationConfigurations, %d of them as YAML snippets", k, len(configs))
	}
	return configs
}

// TestGeneratedFiles: the LeaderMigrationConfiguration of every generated
// migrate file the repository ships (overlays/, examples/fleet/overlays/,
// examples/flux/) and of those `overlays --kube-version` writes for each
// minor that migrates (the kustomize and the Flux format) is read by the
// reader of the minor of the CCM the file pins: the migrate components of
// the charts whose CCMs read only v1beta1 carry what the pinned CCM reads.
func TestGeneratedFiles(t *testing.T) {
	minors := testtools.LMReaderMinors(t)
	check := func(t *testing.T, dir string, wantMinor int) {
		t.Helper()
		found := 0
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.Name() != "leader-migration.yaml" {
				return err
			}
			comp := filepath.Dir(path)
			found++
			tag := pinnedTag(t, comp)
			v, err := version.ParseGeneric(tag)
			if err != nil {
				t.Fatalf("%s pins %q: %v", comp, tag, err)
			}
			minor := int(v.Minor())
			if wantMinor != 0 && minor != wantMinor {
				t.Errorf("%s pins %s, not a CCM of 1.%d", comp, tag, wantMinor)
			}
			if !slices.Contains(minors, minor) {
				t.Fatalf("%s pins %s, which no reader covers", comp, tag)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			objs, err := manifest.Split(b)
			if err != nil {
				return err
			}
			for _, o := range objs {
				if cfg, ok := manifest.Get(o.Doc, "data", renderer.LeaderMigrationFile).(string); ok && o.Kind == "ConfigMap" {
					accepted(t, minor, cfg, renderer.DefaultLeaderName, renderer.LeaderMigrationControllers)
					return nil
				}
			}
			t.Errorf("%s holds no leader migration ConfigMap", path)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if found == 0 {
			t.Fatalf("no migrate files under %s", dir)
		}
	}
	for _, dir := range []string{"overlays", "examples/fleet/overlays", "examples/flux"} {
		t.Run(dir, func(t *testing.T) {
			check(t, filepath.Join(testtools.Root(), filepath.FromSlash(dir)), releases.LastInTreeMinor)
		})
	}
	for minor := minors[0]; minor <= releases.LastInTreeMinor; minor++ {
		for _, format := range []string{"kustomize", "flux"} {
			t.Run(fmt.Sprintf("overlays --format=%s --kube-version=1.%d", format, minor), func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "out")
				args := []string{"overlays", "--format=" + format, "--out", out, "--mode=migrate", fmt.Sprintf("--kube-version=v1.%d.3", minor)}
				if _, ok := releases.Latest(minor); !ok {
					// overlays pins by digest: one of its own for a tag the
					// promotion list does not give.
					pin := ccmTag(minor)
					if _, promoted := releases.Digest(pin); !promoted {
						pin += "@sha256:" + strings.Repeat("21", 32)
					}
					args = append(args, "--image-tag="+pin)
				}
				testtools.MustRun(t, testtools.HelmEnv(t), testtools.Renderer(t), args...)
				check(t, out, minor)
			})
		}
	}
}

// pinnedTag returns the CCM image tag a generated migrate directory pins:
// the kustomize component's container image, or the Flux HelmRelease's
// image.tag value.
func pinnedTag(t *testing.T, dir string) string {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(dir, "helmrelease.yaml")); err == nil {
		var rel struct {
			Spec struct {
				Values struct {
					Image struct {
						Tag string `json:"tag"`
					} `json:"image"`
				} `json:"values"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(b, &rel); err != nil {
			t.Fatal(err)
		}
		return rel.Spec.Values.Image.Tag
	}
	b, err := os.ReadFile(filepath.Join(dir, "daemonset.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Split(b)
	if err != nil || len(objs) != 1 {
		t.Fatalf("%s/daemonset.yaml: %v", dir, err)
	}
	image, _ := manifest.Containers(objs[0])[0]["image"].(string)
	return renderer.ImageTag(image)
}
