// Package gitops tests the GitOps recipes in examples/ with the tools those
// systems run: Argo CD's config management plugin command and sidecar (with
// the Application's parameters), a kustomize source, Flux HelmReleases
// (Flux's API types, the kustomize api applying their post-renderers as
// helm-controller does) and helmfile (the real helmfile, with the renderer
// as post-renderer and with the overlays as its patches). The Fleet bundle
// runs through Fleet itself, in e2e/fleet.
package gitops

import (
	"bytes"
	"cmp"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli/helmcmd"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/images"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

func exampleDir(parts ...string) string {
	return filepath.Join(append([]string{testtools.Root(), "examples"}, parts...)...)
}

// cmpPlugin is the part of the example ConfigManagementPlugin the tests use.
type cmpPlugin struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Version  string `yaml:"version"`
		Generate struct {
			Command []string `yaml:"command"`
			Args    []string `yaml:"args"`
		} `yaml:"generate"`
		Discover   map[string]any `yaml:"discover"`
		Parameters struct {
			Static []announcement `yaml:"static"`
		} `yaml:"parameters"`
	} `yaml:"spec"`
}

// announcement is a static parameter announcement of the plugin.
type announcement struct {
	Name           string   `yaml:"name"`
	Title          string   `yaml:"title"`
	Tooltip        string   `yaml:"tooltip"`
	CollectionType string   `yaml:"collectionType"`
	String         *string  `yaml:"string"`
	Array          []string `yaml:"array"`
}

// argoParam is one of an Application's spec.source.plugin.parameters, as
// Argo CD marshals it into ARGOCD_APP_PARAMETERS.
type argoParam struct {
	Name   string            `json:"name"`
	String *string           `json:"string,omitempty"`
	Array  []string          `json:"array,omitempty"`
	Map    map[string]string `json:"map,omitempty"`
}

func str(s string) *string { return &s }

var notEnvChar = regexp.MustCompile("[^A-Z0-9_]")

// paramEnv is what Argo CD's repo server makes of an Application's plugin
// parameters (ApplicationSourcePluginParameters.Environ): the JSON of them
// all as ARGOCD_APP_PARAMETERS, each string as PARAM_<NAME>, each array
// item as PARAM_<NAME>_<i>, each map entry as PARAM_<NAME>_<KEY>, names and
// keys upper-cased with every other character than A-Z, 0-9 and _ made _.
func paramEnv(t *testing.T, params []argoParam, noJSON bool) [][2]string {
	t.Helper()
	if params == nil {
		return nil
	}
	b, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	env := [][2]string{{"ARGOCD_APP_PARAMETERS", string(b)}}
	if noJSON {
		env = nil
	}
	esc := func(s string) string { return notEnvChar.ReplaceAllString(strings.ToUpper(s), "_") }
	for _, p := range params {
		base := "PARAM_" + esc(p.Name)
		if p.String != nil {
			env = append(env, [2]string{base, *p.String})
		}
		for k, v := range p.Map {
			env = append(env, [2]string{base + "_" + esc(k), v})
		}
		for i, v := range p.Array {
			env = append(env, [2]string{fmt.Sprintf("%s_%d", base, i), v})
		}
	}
	return env
}

func readPlugin(t *testing.T) cmpPlugin {
	t.Helper()
	var p cmpPlugin
	b, err := os.ReadFile(exampleDir("argocd", "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if p.Kind != "ConfigManagementPlugin" || len(p.Spec.Generate.Command) == 0 {
		t.Fatalf("plugin.yaml: kind %q, generate %v", p.Kind, p.Spec.Generate)
	}
	return p
}

const (
	cmpAppName      = "aws-ccm"
	cmpAppNamespace = "kube-system"
)

// cmpRun is one run of the plugin's generate command.
type cmpRun struct {
	env    map[string]string // the Application's plugin env, without ARGOCD_ENV_
	params []argoParam       // the Application's plugin parameters
	values string            // values.yaml in the source directory, if not empty
	files  map[string]string // more files in the source directory
	links  map[string]string // symbolic links in the source directory, to these targets
	dirs   map[string]string // chart packages unpacked into directories of the source directory: directory -> package
	kube   string            // the destination cluster's version (KUBE_VERSION); defaultKube(t) if empty
	// noJSON: the parameters as PARAM_* only, without ARGOCD_APP_PARAMETERS
	// (generate then reads the per-parameter variables).
	noJSON bool
	unset  []string // variables the repo server would send that this run leaves out
	apis   string   // KUBE_API_VERSIONS, if not the default
	caFile string   // the sidecar's CA bundle (SSL_CERT_FILE), for a chart served on loopback
}

// defaultKube is the destination cluster's version of a run that names
// none: the minor of the CCM the latest chart deploys by default, as the
// plugin is strict and a CCM of another minor than the cluster's warns.
func defaultKube(t *testing.T) string {
	t.Helper()
	tag, ok := releases.DefaultImageTag(testtools.LatestChartVersion)
	if !ok {
		t.Fatalf("no default image tag for chart %s", testtools.LatestChartVersion)
	}
	return tag
}

// localChart is where every run's source directory holds the latest
// upstream chart package (no network here): the chart parameter names it.
const localChart = "upstream/aws-cloud-controller-manager.tgz"

// run runs the generate command the way Argo CD's CMP server does: the
// command and its args exec'd as they are, in the application's source
// directory, with the sidecar's environment plus what the repo server sends
// (ARGOCD_APP_*, KUBE_VERSION, KUBE_API_VERSIONS, the plugin env as
// ARGOCD_ENV_*, the parameters as ARGOCD_APP_PARAMETERS and PARAM_*;
// entries with empty values are dropped). The sidecar's PATH holds
// aws-ccm-renderer and aws-ccm-renderer-helm and nothing else, as the
// image (no helm, no shell); the command is looked up in it, as the CMP
// server looks it up in its own.
func (c cmpRun) run(t *testing.T) (stdout, stderr []byte, err error) {
	t.Helper()
	bin := t.TempDir()
	programs := filepath.Dir(testtools.Renderer(t))
	for _, name := range []string{"aws-ccm-renderer", "aws-ccm-renderer-helm"} {
		if err := os.Symlink(filepath.Join(programs, name), filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	work := t.TempDir()
	const sourcePath = "clusters/prod/aws-ccm"
	app := filepath.Join(work, filepath.FromSlash(sourcePath))
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	if c.values != "" {
		testtools.WriteFile(t, filepath.Join(app, "values.yaml"), []byte(c.values))
	}
	for name, content := range c.files {
		testtools.WriteFile(t, filepath.Join(app, filepath.FromSlash(name)), []byte(content))
	}
	pkg, err := os.ReadFile(testtools.UpstreamChart(t, testtools.LatestChartVersion))
	if err != nil {
		t.Fatal(err)
	}
	testtools.WriteFile(t, filepath.Join(app, filepath.FromSlash(localChart)), pkg)
	for name, pkg := range c.dirs {
		untar(t, pkg, filepath.Join(app, filepath.FromSlash(name)))
	}
	for name, target := range c.links {
		if err := os.Symlink(target, filepath.Join(app, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	sidecar := []string{
		"PATH=" + bin,
		"HOME=" + home,
		"HELM_CACHE_HOME=" + filepath.Join(home, "helm", "cache"),
		"HELM_CONFIG_HOME=" + filepath.Join(home, "helm", "config"),
		"HELM_DATA_HOME=" + filepath.Join(home, "helm", "data"),
	}
	if c.caFile != "" {
		sidecar = append(sidecar, "SSL_CERT_FILE="+c.caFile)
	}
	sent := [][2]string{
		{"ARGOCD_APP_NAME", cmpAppName},
		{"ARGOCD_APP_NAMESPACE", cmpAppNamespace},
		{"ARGOCD_APP_PROJECT_NAME", "default"},
		{"ARGOCD_APP_REVISION", "0123456789abcdef0123456789abcdef01234567"},
		{"ARGOCD_APP_REVISION_SHORT", "0123456"},
		{"ARGOCD_APP_REVISION_SHORT_8", "01234567"},
		{"ARGOCD_APP_SOURCE_REPO_URL", "https://git.example.com/platform/cluster-config.git"},
		{"ARGOCD_APP_SOURCE_PATH", sourcePath},
		{"ARGOCD_APP_SOURCE_TARGET_REVISION", "main"},
		{"KUBE_VERSION", cmp.Or(c.kube, defaultKube(t))},
		{"KUBE_API_VERSIONS", cmp.Or(c.apis, "v1,apps/v1,rbac.authorization.k8s.io/v1,coordination.k8s.io/v1")},
	}
	for _, k := range slices.Sorted(maps.Keys(c.env)) {
		sent = append(sent, [2]string{"ARGOCD_ENV_" + k, c.env[k]})
	}
	sent = append(sent, paramEnv(t, c.params, c.noJSON)...)
	env := sidecar
	for _, kv := range sent {
		if kv[1] != "" && !slices.Contains(c.unset, kv[0]) {
			env = append(env, kv[0]+"="+kv[1])
		}
	}
	p := readPlugin(t)
	argv := append(slices.Clone(p.Spec.Generate.Command[1:]), p.Spec.Generate.Args...)
	name := p.Spec.Generate.Command[0]
	if !filepath.IsAbs(name) {
		name = filepath.Join(bin, name)
	}
	cmd := testtools.Command(t, env, name, argv...) // no controlling terminal, as where it runs
	cmd.Dir = app
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return []byte(o.String()), []byte(e.String()), err
}

// TestArgoCDPlugin runs the example plugin's generate command for each
// distro, in migrate mode, with the defaults, with values and renderer
// flags, and when it must fail.
func TestArgoCDPlugin(t *testing.T) {
	p := readPlugin(t)
	if p.Metadata.Name+"-"+p.Spec.Version != "aws-ccm-renderer-v1" || p.Spec.Discover != nil {
		t.Fatalf("plugin %s-%s with discover %v: the docs and application.yaml name it aws-ccm-renderer-v1, without discovery",
			p.Metadata.Name, p.Spec.Version, p.Spec.Discover)
	}
	nodes := testtools.Fixtures(t)
	version := testtools.LatestChartVersion
	chart := testtools.UpstreamChart(t, version)
	plain := testtools.MustRun(t, testtools.HelmEnv(t), testtools.Helm3(t), "template", cmpAppName, chart, "--namespace", cmpAppNamespace)
	// A migration pins the CCM of the cluster's minor (docs/argocd.md).
	pin := "image.tag=" + releases.Tag(releases.LastInTreeMinor)
	pinned := testtools.MustRun(t, testtools.HelmEnv(t), testtools.Helm3(t), "template", cmpAppName, chart, "--namespace", cmpAppNamespace, "--set", pin)

	type run struct {
		distro distros.Distro
		mode   renderer.Mode
		params []argoParam
		env    map[string]string
		kube   string // the destination cluster's version
	}
	runs := map[string]run{
		"defaults": {distros.Auto, renderer.ModeInstall, nil, nil, ""},
		"migrate": {distros.RKE2, renderer.ModeMigrate, []argoParam{{Name: "distro", String: str("rke2")}, {Name: "mode", String: str("migrate")},
			{Name: "helm-set", Array: []string{pin}}}, nil, "1.26.15"},
		// Applications of the plugin's first version set the plugin env;
		// Argo CD before 3.1 sends the version as the cluster says it,
		// without a "+".
		"plugin env": {distros.RKE, renderer.ModeMigrate, []argoParam{{Name: "helm-set", Array: []string{pin}}},
			map[string]string{"DISTRO": "rke", "MODE": "migrate"}, "v1.26.15rke2r1"},
		// A parameter wins over the plugin env.
		"parameters over env": {distros.K3s, renderer.ModeInstall, []argoParam{{Name: "distro", String: str("k3s")}},
			map[string]string{"DISTRO": "rke", "MODE": "install"}, ""},
	}
	for _, d := range distros.All {
		runs[string(d)] = run{d, renderer.ModeInstall, []argoParam{{Name: "distro", String: str(string(d))}, {Name: "mode", String: str("install")},
			{Name: "chart-version", String: str(version)}}, nil, ""}
	}
	for name, r := range runs {
		t.Run(name, func(t *testing.T) {
			r.params = append(r.params, argoParam{Name: "chart", String: str(localChart)})
			out, errOut, err := cmpRun{env: r.env, params: r.params, kube: r.kube}.run(t)
			if err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			objs, err := manifest.Split(out)
			if err != nil {
				t.Fatal(err)
			}
			want := plain
			if r.mode == renderer.ModeMigrate {
				want = pinned
			}
			testtools.CheckMeaning(t, objs, nodes, r.distro, r.mode)
			testtools.SameAsRenderer(t, objs, testtools.PostRendered(t, want, r.distro, r.mode), nodes)
		})
	}

	t.Run("values and renderer flags", func(t *testing.T) {
		out, errOut, err := cmpRun{
			env:    map[string]string{"DISTRO": "rke", "CHART": localChart, "RENDERER_ARGS": "--set-arg=cluster-name=prod --set-arg=v=4"},
			values: "image:\n  tag: v1.34.0\n",
			kube:   "v1.34.2",
		}.run(t)
		if err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		ccm, args := testtools.CCMOf(t, out)
		cn, _ := manifest.Flag(args, "cluster-name")
		v, _ := manifest.Flag(args, "v")
		image, _ := manifest.Containers(ccm)[0]["image"].(string)
		if cn != "prod" || v != "4" || !strings.HasSuffix(image, ":v1.34.0") {
			t.Errorf("renderer flags or values not applied: args %q, image %s", args, image)
		}
	})

	for name, c := range map[string]struct {
		env    map[string]string
		params []argoParam
		kube   string
		want   string
	}{
		"unknown distro":          {map[string]string{"DISTRO": "bogus", "CHART": localChart}, nil, "", `--distro "bogus" is unknown`},
		"unknown mode":            {map[string]string{"MODE": "upgrade", "CHART": localChart}, nil, "", `--mode "upgrade" is unknown`},
		"bad flag":                {map[string]string{"CHART": localChart, "RENDERER_ARGS": "--remove-arg=cloud-provider"}, nil, "", "--cloud-provider=aws"},
		"missing chart":           {map[string]string{"CHART": "missing.tgz"}, nil, "", "missing.tgz"},
		"chart outside":           {map[string]string{"CHART": chart}, nil, "", "chart: " + chart + " is not a path in the Application's source directory"},
		"chart a level up":        {map[string]string{"CHART": "../other-team/chart"}, nil, "", "chart: ../other-team/chart is not a path in the Application's source directory"},
		"chart of another scheme": {map[string]string{"CHART": "file:///etc/charts/x.tgz"}, nil, "", "chart: file:///etc/charts/x.tgz is neither a chart name"},
		"chart as a helm flag":    {map[string]string{"CHART": "--kubeconfig=x"}, nil, "", "chart: --kubeconfig=x is neither a chart name"},
		// RENDERER_ARGS: no file, no help, no option a parameter sets.
		"RENDERER_ARGS: -c": {map[string]string{"CHART": localChart, "RENDERER_ARGS": "-c /etc/passwd"}, nil, "", "RENDERER_ARGS: -c reads a file"},
		"RENDERER_ARGS: --help": {map[string]string{"CHART": localChart, "RENDERER_ARGS": "--help"}, nil, "",
			"RENDERER_ARGS: --help: generate writes nothing but manifests"},
		"RENDERER_ARGS over a parameter": {map[string]string{"CHART": localChart, "RENDERER_ARGS": "--distro=k3s"}, []argoParam{{Name: "distro", String: str("rke2")}}, "",
			"RENDERER_ARGS: --distro is set by the parameter distro: set that parameter instead"},
		"repo over http": {map[string]string{"REPO": "http://charts.example.com"}, nil, "", "repo: http://charts.example.com is a plain http:// URL"},
		// The destination cluster's version reaches the renderer.
		"migrate: the chart's CCM (1.35) on a 1.26 cluster": {map[string]string{"CHART": localChart}, []argoParam{{Name: "distro", String: str("rke2")},
			{Name: "mode", String: str("migrate")}}, "1.26.15",
			"the CCM (image registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0) is 1.35 and the cluster (--kube-version 1.26.15) 1.26: " +
				"a migration runs the CCM of the cluster's minor; pin the CCM release of the cluster's minor, v1.26.14 (with the upstream chart: --set image.tag=" + releases.Pin("v1.26.14") + ")"},
		"migrate: a 1.26 CCM on a 1.25 cluster": {map[string]string{"CHART": localChart, "MODE": "migrate"}, []argoParam{{Name: "helm-set", Array: []string{pin}}}, "1.25.16",
			"is 1.26 and the cluster (--kube-version 1.25.16) 1.25"},
		"migrate: K3s": {map[string]string{"CHART": localChart}, []argoParam{{Name: "distro", String: str("k3s")}, {Name: "mode", String: str("migrate")},
			{Name: "helm-set", Array: []string{pin}}}, "1.26.15", "`aws-ccm-renderer plan --distro k3s`"},
	} {
		t.Run("fails: "+name, func(t *testing.T) {
			out, errOut, err := cmpRun{env: c.env, params: c.params, kube: c.kube}.run(t)
			if err == nil {
				t.Fatal("the generate command succeeded")
			}
			if len(out) != 0 {
				t.Errorf("stdout is not empty: %d bytes", len(out))
			}
			if !strings.Contains(string(errOut), c.want) {
				t.Errorf("stderr %q does not say %q", errOut, c.want)
			}
		})
	}

	// A chart whose template fails: the renderer never runs, and nothing
	// reaches stdout.
	t.Run("fails: the chart's template fails", func(t *testing.T) {
		out, errOut, err := cmpRun{
			params: []argoParam{{Name: "chart", String: str("charts/" + upstream.ChartName)}},
			dirs:   map[string]string{"charts": chart},
			files:  map[string]string{"charts/" + upstream.ChartName + "/templates/broken.yaml": "{{ fail \"this chart is broken\" }}\n"},
		}.run(t)
		if err == nil || len(out) != 0 || !strings.Contains(string(errOut), "this chart is broken") {
			t.Errorf("exit %v, %d bytes out, stderr %q", err, len(out), errOut)
		}
	})
}

// TestArgoCDPluginWarnings: Argo CD shows a plugin's stderr only when its
// command fails (cmpserver/plugin/plugin.go, runCommand: a CmdError with
// the stderr; on success the stderr goes to the sidecar's log), so a
// renderer warning fails the generate command, with the warning on stderr
// and nothing on stdout, unless the strict parameter is false.
func TestArgoCDPluginWarnings(t *testing.T) {
	params := []argoParam{{Name: "chart", String: str(localChart)}, {Name: "distro", String: str("rke2")},
		{Name: "set-arg", Array: []string{"configure-cloud-routes=true"}}}
	const warning = "--configure-cloud-routes=true: the CCM's route controller then writes pod CIDR routes into the VPC's route tables; " +
		"only clusters whose pod network relies on cloud routes want that"
	out, errOut, err := cmpRun{params: params}.run(t)
	if err == nil || len(out) != 0 || string(errOut) != "aws-ccm-renderer: "+warning+" (--strict: warnings are errors)\n" {
		t.Errorf("a warning: %v, %d bytes on stdout, stderr %q", err, len(out), errOut)
	}
	out, errOut, err = cmpRun{params: append(slices.Clone(params), argoParam{Name: "strict", String: str("false")})}.run(t)
	if err != nil || !bytes.Contains(out, []byte("- --configure-cloud-routes=true")) || string(errOut) != "aws-ccm-renderer: warning: "+warning+"\n" {
		t.Errorf("strict false: %v, stderr %q", err, errOut)
	}
	out, errOut, err = cmpRun{params: append(slices.Clone(params), argoParam{Name: "strict", String: str("maybe")})}.run(t)
	if err == nil || len(out) != 0 || !strings.Contains(string(errOut), "--strict") {
		t.Errorf("strict maybe: %v, stderr %q", err, errOut)
	}
}

// TestArgoCDPluginParameters: the Application's parameters reach helm and
// the renderer (array items one by one, whatever they hold); the static
// announcements say what the plugin does when a parameter is not set (the
// output with each set to its announced default is the output without
// them), and every parameter the command reads is announced; values files
// stay in the source directory.
func TestArgoCDPluginParameters(t *testing.T) {
	p := readPlugin(t)
	chart := localChart

	out, errOut, err := cmpRun{
		params: []argoParam{
			{Name: "chart", String: str(chart)},
			{Name: "distro", String: str("rke")},
			{Name: "set-arg", Array: []string{"cluster-name=prod two", "allocate-node-cidrs=false"}},
			{Name: "remove-arg", Array: []string{"v"}},
			{Name: "helm-set", Array: []string{"image.tag=v1.34.1", "nameOverride=ccm-*"}},
			{Name: "values-files", Array: []string{"env/prod.yaml"}},
		},
		values: "image:\n  tag: v1.30.0\n", // not used: values-files names others
		files:  map[string]string{"env/prod.yaml": "resources:\n  requests:\n    cpu: 500m\n"},
		kube:   "v1.34.2",
	}.run(t)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	ccm, args := testtools.CCMOf(t, out)
	cn, _ := manifest.Flag(args, "cluster-name")
	cidrs, _ := manifest.Flag(args, "allocate-node-cidrs")
	_, hasV := manifest.Flag(args, "v")
	image, _ := manifest.Containers(ccm)[0]["image"].(string)
	if cn != "prod two" || cidrs != "false" || hasV || !strings.HasSuffix(image, ":v1.34.1") || ccm.Name != "ccm-*" ||
		!bytes.Contains(out, []byte("cpu: 500m")) {
		t.Errorf("parameters not applied: %s, args %q, image %s", ccm.ID(), args, image)
	}

	// The announced defaults are the behaviour without parameters; the
	// chart's version is pinned to the one the tests run.
	var defaults []argoParam
	for _, a := range p.Spec.Parameters.Static {
		if a.Name == "chart-version" && (a.String == nil || *a.String != testtools.LatestChartVersion) {
			t.Errorf("chart-version defaults to %v, want the version the tests run, %s", a.String, testtools.LatestChartVersion)
		}
		param := argoParam{Name: a.Name, String: a.String, Array: a.Array}
		if a.Name == "chart" {
			param.String = str(chart) // no network here: the upstream package
		}
		defaults = append(defaults, param)
	}
	withDefaults, errOut, err := cmpRun{params: defaults}.run(t)
	if err != nil {
		t.Fatalf("announced defaults: %v\n%s", err, errOut)
	}
	without, errOut, err := cmpRun{params: []argoParam{{Name: "chart", String: str(chart)}}}.run(t)
	if err != nil {
		t.Fatalf("no parameters: %v\n%s", err, errOut)
	}
	if !bytes.Equal(withDefaults, without) {
		t.Error("the output with every parameter at its announced default differs from the output without parameters")
	}

	// Announcements: a title and tooltip each, arrays announced as arrays,
	// and the parameters generate reads are the announced ones, in order,
	// with the announced defaults.
	announced := map[string]bool{}
	var names, read []string
	for _, a := range p.Spec.Parameters.Static {
		announced[a.Name] = true
		names = append(names, a.Name)
		// A string parameter without a default announces no string: Argo CD
		// would announce an empty one as none.
		if a.Title == "" || a.Tooltip == "" || a.CollectionType == "array" && a.String != nil {
			t.Errorf("announcement %+v: a title, a tooltip, and collectionType array exactly for arrays", a)
		}
	}
	for _, g := range helmcmd.ArgoCDParameters {
		read = append(read, g.Name)
		i := slices.IndexFunc(p.Spec.Parameters.Static, func(a announcement) bool { return a.Name == g.Name })
		if i < 0 {
			continue
		}
		a := p.Spec.Parameters.Static[i]
		if (a.CollectionType == "array") != g.Array {
			t.Errorf("parameter %s: announced as %q, generate reads an array: %v", g.Name, a.CollectionType, g.Array)
		}
		if !g.Array && (a.String == nil) != (g.Default == "") || a.String != nil && *a.String != g.Default {
			t.Errorf("parameter %s: announced default %v, generate's %q", g.Name, a.String, g.Default)
		}
		if g.Array && len(a.Array) != 0 {
			t.Errorf("parameter %s: announced default %q, generate's none", g.Name, a.Array)
		}
	}
	if !slices.Equal(names, read) {
		t.Errorf("plugin.yaml announces %q, generate reads %q", names, read)
	}

	// The example Application's parameters are announced ones, and work.
	var app struct {
		Spec struct {
			Source struct {
				Plugin struct {
					Name       string `yaml:"name"`
					Parameters []struct {
						Name   string   `yaml:"name"`
						String *string  `yaml:"string"`
						Array  []string `yaml:"array"`
					} `yaml:"parameters"`
				} `yaml:"plugin"`
			} `yaml:"source"`
		} `yaml:"spec"`
	}
	b, err := os.ReadFile(exampleDir("argocd", "application.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &app); err != nil {
		t.Fatal(err)
	}
	var appParams []argoParam
	for _, ap := range app.Spec.Source.Plugin.Parameters {
		if !announced[ap.Name] {
			t.Errorf("application.yaml sets %s, which the plugin does not announce", ap.Name)
		}
		if ap.Name != "chart-version" { // the upstream package instead: no network here
			appParams = append(appParams, argoParam{Name: ap.Name, String: ap.String, Array: ap.Array})
		}
	}
	// ccm-version auto pins the CCM of the destination cluster's minor.
	out, errOut, err = cmpRun{params: append(appParams, argoParam{Name: "chart", String: str(chart)}), kube: "v1.31.4"}.run(t)
	if err != nil || len(appParams) < 3 || !bytes.Contains(out, []byte("--cluster-name=prod")) {
		t.Errorf("application.yaml's parameters: %v, %d parameters\n%s", err, len(appParams), errOut)
	}

	outside := filepath.Join(t.TempDir(), "secrets.yaml") // another Application's file, say
	testtools.WriteFile(t, outside, []byte("password: hunter2\n"))
	links := map[string]map[string]string{ // the source directory's links out, by case
		"values file through a link out": {"env": filepath.Dir(outside)},
		"chart through a link out":       {"vendored": filepath.Dir(outside)},
	}
	for name, c := range map[string]struct {
		params []argoParam
		want   string
	}{
		"values file through a link out": {[]argoParam{{Name: "values-files", Array: []string{"env/secrets.yaml"}}},
			"values-files: env/secrets.yaml is not a path in the Application's source directory (it leads to " + outside + ")"},
		"chart through a link out": {[]argoParam{{Name: "chart", String: str("vendored/secrets.yaml")}},
			"chart: vendored/secrets.yaml is not a path in the Application's source directory (it leads to " + outside + ")"},
		"values file outside":  {[]argoParam{{Name: "values-files", Array: []string{"../secrets.yaml"}}}, "values-files: ../secrets.yaml is not a path in the Application's source directory"},
		"absolute values file": {[]argoParam{{Name: "values-files", Array: []string{"/etc/passwd"}}}, "is not a path in the Application's source directory"},
		"missing values file":  {[]argoParam{{Name: "values-files", Array: []string{"nope.yaml"}}}, "nope.yaml"},
		"values file as a URL": {[]argoParam{{Name: "values-files", Array: []string{"https://attacker.example/values.yaml"}}},
			"values-files: https://attacker.example/values.yaml is a URL, which helm would fetch"},
		"values file as stdin": {[]argoParam{{Name: "values-files", Array: []string{"-"}}}, `values-files: "-" is not a file`},
		"unknown mode":         {[]argoParam{{Name: "mode", String: str("upgrade")}}, `--mode "upgrade" is unknown`},
		"bad CCM flag":         {[]argoParam{{Name: "set-arg", Array: []string{"cloud-provider=gce"}}}, "cloud-provider"},
		"guard image by tag":   {[]argoParam{{Name: "guard-image", String: str("ghcr.io/aws-ccm-renderer/aws-ccm-renderer-guard:v1")}}, "pin the image by digest"},
		// What the script let through: a parameter it did not know was
		// ignored, a string given for an array read as nothing.
		"unknown parameter":   {[]argoParam{{Name: "distor", String: str("rke2")}}, `parameter "distor" is not one of this plugin's (did you mean distro?)`},
		"array for a string":  {[]argoParam{{Name: "distro", Array: []string{"rke2"}}}, "parameter distro is an array; it is a string"},
		"string for an array": {[]argoParam{{Name: "set-arg", String: str("v=4")}}, "parameter set-arg is a string; it is an array"},
		"a map":               {[]argoParam{{Name: "helm-set", Map: map[string]string{"image.tag": "v1.34.1"}}}, "parameter helm-set is a map"},
	} {
		t.Run("fails: "+name, func(t *testing.T) {
			params := c.params
			if !slices.ContainsFunc(params, func(p argoParam) bool { return p.Name == "chart" }) {
				params = append(params, argoParam{Name: "chart", String: str(chart)})
			}
			out, errOut, err := cmpRun{params: params, links: links[name]}.run(t)
			if err == nil || len(out) != 0 || !strings.Contains(string(errOut), c.want) {
				t.Errorf("exit %v, %d bytes out, stderr %q, want %q", err, len(out), errOut, c.want)
			}
		})
	}
}

// TestArgoCDGenerateEnvironment: what else generate reads from the repo
// server's environment: the parameters as PARAM_* alone (no
// ARGOCD_APP_PARAMETERS), KUBE_API_VERSIONS shown to the chart, a chart
// directory in the source directory and a chart package's https:// URL;
// and it refuses to run without the Application's name and namespace.
func TestArgoCDGenerateEnvironment(t *testing.T) {
	params := []argoParam{
		{Name: "chart", String: str(localChart)},
		{Name: "distro", String: str("rke")},
		{Name: "set-arg", Array: []string{"cluster-name=prod two", "allocate-node-cidrs=false"}},
		{Name: "helm-set", Array: []string{"image.tag=v1.34.1"}},
	}
	withJSON, errOut, err := cmpRun{params: params, kube: "v1.34.2"}.run(t)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	perParam, errOut, err := cmpRun{params: params, kube: "v1.34.2", noJSON: true}.run(t)
	if err != nil {
		t.Fatalf("PARAM_* only: %v\n%s", err, errOut)
	}
	if !bytes.Equal(withJSON, perParam) || !bytes.Contains(perParam, []byte("--cluster-name=prod two")) {
		t.Error("the output from PARAM_* alone differs from the output from ARGOCD_APP_PARAMETERS, or lacks the parameters")
	}

	// A chart directory whose template shows what the chart was told.
	upstreamPkg := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	shown := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: capabilities\ndata:\n" +
		"  kube: {{ .Capabilities.KubeVersion.Version | quote }}\n" +
		"  example: {{ .Capabilities.APIVersions.Has \"example.com/v1\" | quote }}\n"
	out, errOut, err := cmpRun{
		params: []argoParam{{Name: "chart", String: str("charts/" + upstream.ChartName)}},
		dirs:   map[string]string{"charts": upstreamPkg},
		files:  map[string]string{"charts/" + upstream.ChartName + "/templates/capabilities.yaml": shown},
	}.run(t)
	if err != nil {
		t.Fatalf("chart directory: %v\n%s", err, errOut)
	}
	kube := defaultKube(t)
	if !bytes.Contains(out, []byte(`example: "false"`)) || !bytes.Contains(out, []byte(`kube: "`+kube)) {
		t.Errorf("the chart was not shown KUBE_VERSION %s, or was shown an API it was not sent:\n%s", kube, out)
	}
	out, errOut, err = cmpRun{
		params: []argoParam{{Name: "chart", String: str("charts/" + upstream.ChartName)}},
		dirs:   map[string]string{"charts": upstreamPkg},
		files:  map[string]string{"charts/" + upstream.ChartName + "/templates/capabilities.yaml": shown},
		apis:   "v1,apps/v1,example.com/v1",
	}.run(t)
	if err != nil || !bytes.Contains(out, []byte(`example: "true"`)) {
		t.Errorf("KUBE_API_VERSIONS did not reach the chart: %v\n%s", err, errOut)
	}

	// A chart package's https:// URL, served on loopback with a
	// certificate the sidecar trusts (SSL_CERT_FILE); its http:// twin,
	// and an https:// URL that redirects to it, are refused.
	pkg, err := os.ReadFile(upstreamPkg)
	if err != nil {
		t.Fatal(err)
	}
	serve := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/charts/ccm-1.0.0.tgz" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(pkg)
	})
	srv := httptest.NewTLSServer(serve)
	defer srv.Close()
	plain := httptest.NewServer(serve)
	defer plain.Close()
	redirect := httptest.NewTLSServer(http.RedirectHandler(plain.URL+"/charts/ccm-1.0.0.tgz", http.StatusFound))
	defer redirect.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	var bundle []byte
	for _, s := range []*httptest.Server{srv, redirect} {
		bundle = append(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})...)
	}
	testtools.WriteFile(t, ca, bundle)
	out, errOut, err = cmpRun{params: []argoParam{{Name: "chart", String: str(srv.URL + "/charts/ccm-1.0.0.tgz")}, {Name: "distro", String: str("k3s")}}, caFile: ca}.run(t)
	if err != nil {
		t.Fatalf("chart URL: %v\n%s", err, errOut)
	}
	for _, u := range []string{plain.URL, redirect.URL} {
		out, errOut, err := cmpRun{params: []argoParam{{Name: "chart", String: str(u + "/charts/ccm-1.0.0.tgz")}}, caFile: ca}.run(t)
		if err == nil || len(out) != 0 || !strings.Contains(string(errOut), "use https://") || strings.Count(string(errOut), "\n") != 1 {
			t.Errorf("chart %s: %v, %d bytes out, stderr %q", u, err, len(out), errOut)
		}
	}
	objs, err := manifest.Split(out)
	if err != nil {
		t.Fatal(err)
	}
	testtools.CheckMeaning(t, objs, testtools.Fixtures(t), distros.K3s, renderer.ModeInstall)
	out, errOut, err = cmpRun{params: []argoParam{{Name: "chart", String: str(srv.URL + "/charts/missing.tgz")}}, caFile: ca}.run(t)
	if err == nil || len(out) != 0 || !strings.Contains(string(errOut), "missing.tgz") {
		t.Errorf("a chart URL that is not found: %v, %d bytes out, stderr %q", err, len(out), errOut)
	}

	for _, v := range []string{"ARGOCD_APP_NAME", "ARGOCD_APP_NAMESPACE"} {
		out, errOut, err := cmpRun{params: []argoParam{{Name: "chart", String: str(localChart)}}, unset: []string{v}}.run(t)
		if err == nil || len(out) != 0 || string(errOut) != "aws-ccm-renderer: "+v+" is not set: generate runs as the generate command of Argo CD's config management plugin, which sets it (see --help)\n" {
			t.Errorf("without %s: %v, %d bytes out, stderr %q", v, err, len(out), errOut)
		}
	}
	out, errOut, err = cmpRun{params: params, kube: "one-thirty-four"}.run(t)
	if err == nil || len(out) != 0 || !strings.Contains(string(errOut), `KUBE_VERSION "one-thirty-four", the destination cluster's version as Argo CD sends it, is not a Kubernetes version`) {
		t.Errorf("a KUBE_VERSION that is no version: %v, %d bytes out, stderr %q", err, len(out), errOut)
	}
}

// TestArgoCDPluginSidecar installs the plugin the way docs/argocd.md says:
// the sidecar's image by digest, its plugin.yaml in the image;
// the example directory as a component of the kustomization that installs
// Argo CD, here over a stand-in for the argocd-repo-server Deployment of
// Argo CD's install manifests (the parts the sidecar uses).
func TestArgoCDPluginSidecar(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "aws-ccm-renderer"), os.DirFS(exampleDir("argocd"))); err != nil {
		t.Fatal(err)
	}
	testtools.WriteFile(t, filepath.Join(dir, "install.yaml"), []byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: argocd-repo-server
spec:
  selector:
    matchLabels:
      app.kubernetes.io/name: argocd-repo-server
  template:
    metadata:
      labels:
        app.kubernetes.io/name: argocd-repo-server
    spec:
      containers:
      - name: argocd-repo-server
        image: quay.io/argoproj/argocd:latest
        volumeMounts:
        - name: var-files
          mountPath: /var/run/argocd
        - name: plugins
          mountPath: /home/argocd/cmp-server/plugins
      volumes:
      - name: var-files
        emptyDir: {}
      - name: plugins
        emptyDir: {}
`))
	testtools.WriteFile(t, filepath.Join(dir, "kustomization.yaml"), []byte("namespace: argocd\nresources:\n- install.yaml\ncomponents:\n- aws-ccm-renderer\n"))
	objs, err := manifest.Split(testtools.MustRun(t, testtools.HelmEnv(t), testtools.Kustomize(t), "build", dir))
	if err != nil {
		t.Fatal(err)
	}
	var deploy manifest.Object
	for _, o := range objs {
		if o.Kind == "Deployment" && o.Name == "argocd-repo-server" {
			deploy = o
		}
	}
	var names []string
	var sidecar map[string]any
	for _, c := range manifest.Containers(deploy) {
		names = append(names, c["name"].(string))
		if c["name"] == "aws-ccm-renderer" {
			sidecar = c
		}
	}
	if slices.Sort(names); !slices.Equal(names, []string{"argocd-repo-server", "aws-ccm-renderer"}) {
		t.Fatalf("containers %q: want the repo server's and the sidecar", names)
	}
	if cmd := manifest.Strings(sidecar["command"]); !slices.Equal(cmd, []string{images.CMPServer}) {
		t.Errorf("sidecar command %q", cmd)
	}
	// The image pinned by digest (integration/images checks it is the one
	// make images builds, and runs it), as the user Argo CD's docs ask
	// for, with a read-only root file system.
	image, _ := sidecar["image"].(string)
	if pinned := images.Pinned(image)[images.ArgoCDCMP(nil).Name]; len(pinned) != 1 || pinned[0] != image {
		t.Errorf("sidecar image %q: want the plugin's image pinned by digest", image)
	}
	sc, _ := sidecar["securityContext"].(map[string]any)
	if fmt.Sprint(sc["runAsUser"]) != fmt.Sprint(images.ArgoCDUID) || sc["readOnlyRootFilesystem"] != true || sc["runAsNonRoot"] != true {
		t.Errorf("sidecar securityContext %v: want user %d, a read-only root file system", sc, images.ArgoCDUID)
	}
	for _, o := range objs {
		if o.Kind == "ConfigMap" {
			t.Errorf("ConfigMap %s: the plugin's configuration is in the image", o.Name)
		}
	}
	volumes := map[string]map[string]any{}
	for _, v := range manifest.Get(deploy.Doc, "spec", "template", "spec", "volumes").([]any) {
		volumes[v.(map[string]any)["name"].(string)] = v.(map[string]any)
	}
	mounts := map[string]string{}
	for _, m := range sidecar["volumeMounts"].([]any) {
		mm := m.(map[string]any)
		if _, ok := volumes[mm["name"].(string)]; !ok {
			t.Errorf("mount %v: no such volume", mm)
		}
		mounts[mm["mountPath"].(string)] = mm["name"].(string)
	}
	for path, volume := range map[string]string{"/var/run/argocd": "var-files", "/home/argocd/cmp-server/plugins": "plugins"} {
		if mounts[path] != volume {
			t.Errorf("sidecar mounts %q at %s, want volume %s", mounts[path], path, volume)
		}
	}
	if _, ok := mounts[images.PluginConfigPath]; ok {
		t.Error("something is mounted over the plugin's configuration in the image")
	}
	if _, ok := mounts["/tmp"]; !ok {
		t.Error("no writable /tmp for helm and the CMP server")
	}
}

// TestArgoCDKustomizeSource builds the plugin-free example the way Argo CD
// builds a kustomize source with --enable-helm: kustomize inflates the chart
// with helm (from a chart home holding the chart already, as a repo server
// that pulled it before has) and the overlay patches it.
func TestArgoCDKustomizeSource(t *testing.T) {
	var k struct {
		HelmCharts []struct {
			Name        string `yaml:"name"`
			Repo        string `yaml:"repo"`
			Version     string `yaml:"version"`
			ReleaseName string `yaml:"releaseName"`
			Namespace   string `yaml:"namespace"`
		} `yaml:"helmCharts"`
		Components []string `yaml:"components"`
	}
	src := exampleDir("argocd", "kustomize-source")
	b, err := os.ReadFile(filepath.Join(src, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	if len(k.HelmCharts) != 1 || k.HelmCharts[0].Name != upstream.ChartName || k.HelmCharts[0].Repo != upstream.ChartRepo || len(k.Components) != 1 {
		t.Fatalf("kustomization: %+v", k)
	}
	hc := k.HelmCharts[0]
	// The repository layout: examples/argocd/kustomize-source and overlays/.
	root := t.TempDir()
	dir := filepath.Join(root, "examples", "argocd", "kustomize-source")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(root, "overlays"), os.DirFS(filepath.Join(testtools.Root(), "overlays"))); err != nil {
		t.Fatal(err)
	}
	untar(t, testtools.UpstreamChart(t, hc.Version), filepath.Join(dir, "charts", hc.Name+"-"+hc.Version))
	out := testtools.MustRun(t, testtools.HelmEnv(t), testtools.Kustomize(t), "build", "--enable-helm", "--helm-command", testtools.Helm3(t), dir)
	objs, err := manifest.Split(out)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(filepath.ToSlash(k.Components[0]), "/")
	distro, mode := distros.Distro(parts[len(parts)-2]), renderer.Mode(parts[len(parts)-1])
	plain := testtools.MustRun(t, testtools.HelmEnv(t), testtools.Helm3(t), "template", hc.ReleaseName,
		testtools.UpstreamChart(t, hc.Version), "--namespace", hc.Namespace)
	nodes := testtools.Fixtures(t)
	testtools.CheckMeaning(t, objs, nodes, distro, mode)
	testtools.SameAsRenderer(t, objs, testtools.PostRendered(t, plain, distro, mode), nodes)
}

// untar unpacks a chart package into dir.
func untar(t *testing.T, tgz, dir string) {
	t.Helper()
	for name, b := range testtools.ChartPackage(t, tgz) {
		if fs.ValidPath(name) {
			testtools.WriteFile(t, filepath.Join(dir, filepath.FromSlash(name)), b)
		}
	}
}
