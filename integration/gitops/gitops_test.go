// Package gitops tests the GitOps recipes in examples/ with the tools those
// systems run: Argo CD's config management plugin command and sidecar (with
// the Application's parameters), a kustomize source, a Fleet bundle
// processed as Fleet's agent does, Flux HelmReleases (Flux's API types, the
// kustomize api applying their post-renderers as helm-controller does) and
// helmfile (the real helmfile, with the renderer as post-renderer and with
// the overlays as its patches).
package gitops

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
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
			Static []testtools.ArgoCDAnnouncement `yaml:"static"`
		} `yaml:"parameters"`
	} `yaml:"spec"`
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
func paramEnv(t *testing.T, params []argoParam) [][2]string {
	t.Helper()
	if params == nil {
		return nil
	}
	b, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	env := [][2]string{{"ARGOCD_APP_PARAMETERS", string(b)}}
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
	helm   string            // the helm on PATH; the real one if empty
	kube   string            // the destination cluster's version (KUBE_VERSION); defaultKube(t) if empty
}

// defaultKube is the destination cluster's version of a run that names
// none: the minor of the CCM the latest chart deploys by default, as the
// plugin is strict and a CCM of another minor than the cluster's warns.
func defaultKube(t *testing.T) string {
	t.Helper()
	tag, ok := upstream.DefaultImageTag(testtools.LatestChartVersion)
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
// entries with empty values are dropped). The sidecar has
// helm and aws-ccm-renderer on PATH.
func (c cmpRun) run(t *testing.T) (stdout, stderr []byte, err error) {
	t.Helper()
	bin := t.TempDir()
	helm := c.helm
	if helm == "" {
		helm = testtools.Helm3(t)
	}
	for name, target := range map[string]string{"helm": helm, "aws-ccm-renderer": testtools.Renderer(t)} {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
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
	for name, target := range c.links {
		if err := os.Symlink(target, filepath.Join(app, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	sidecar := []string{
		"PATH=" + bin + ":" + os.Getenv("PATH"),
		"HOME=" + home,
		"HELM_CACHE_HOME=" + filepath.Join(home, "helm", "cache"),
		"HELM_CONFIG_HOME=" + filepath.Join(home, "helm", "config"),
		"HELM_DATA_HOME=" + filepath.Join(home, "helm", "data"),
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
		{"KUBE_API_VERSIONS", "v1,apps/v1,rbac.authorization.k8s.io/v1,coordination.k8s.io/v1"},
	}
	for _, k := range slices.Sorted(maps.Keys(c.env)) {
		sent = append(sent, [2]string{"ARGOCD_ENV_" + k, c.env[k]})
	}
	sent = append(sent, paramEnv(t, c.params)...)
	env := sidecar
	for _, kv := range sent {
		if kv[1] != "" {
			env = append(env, kv[0]+"="+kv[1])
		}
	}
	p := readPlugin(t)
	argv := append(slices.Clone(p.Spec.Generate.Command[1:]), p.Spec.Generate.Args...)
	cmd := exec.Command(p.Spec.Generate.Command[0], argv...)
	testtools.OwnSession(cmd) // no controlling terminal, as where it runs
	cmd.Dir = app
	cmd.Env = env
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return []byte(o.String()), []byte(e.String()), err
}

// TestArgoCDPlugin runs the example plugin's generate command outside Argo
// CD, for what the test in Argo CD's engine (e2e/argocd_test.go, which
// covers every distribution, migrate mode, the parameter sets of
// docs/argocd.md, the first version's env, a strict warning and the refused
// parameters) does not: failures the sidecar's tools report (an unknown
// distro or mode, a flag the renderer refuses, a missing chart, migrate mode
// on K3s or with a CCM newer than a 1.25 cluster), and a helm that fails
// after printing, which needs another helm on the sidecar's PATH.
func TestArgoCDPlugin(t *testing.T) {
	p := readPlugin(t)
	if p.Metadata.Name+"-"+p.Spec.Version != "aws-ccm-renderer-v1" || p.Spec.Discover != nil {
		t.Fatalf("plugin %s-%s with discover %v: the docs and application.yaml name it aws-ccm-renderer-v1, without discovery",
			p.Metadata.Name, p.Spec.Version, p.Spec.Discover)
	}
	// A migration pins the CCM of the cluster's minor (docs/argocd.md).
	pin := "image.tag=" + renderer.CCMTag(renderer.LastInTreeMinor)

	for name, c := range map[string]struct {
		env    map[string]string
		params []argoParam
		kube   string
		want   string
	}{
		"unknown distro": {map[string]string{"DISTRO": "bogus", "CHART": localChart}, nil, "", `--distro "bogus" is unknown`},
		"unknown mode":   {map[string]string{"MODE": "upgrade", "CHART": localChart}, nil, "", `--mode "upgrade" is unknown`},
		"bad flag":       {map[string]string{"CHART": localChart, "RENDERER_ARGS": "--remove-arg=cloud-provider"}, nil, "", "--cloud-provider=aws"},
		"missing chart":  {map[string]string{"CHART": "missing.tgz"}, nil, "", "missing.tgz"},
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

	// A helm that prints the manifests and then fails: the renderer succeeds
	// on them, and only pipefail makes the command fail, so that Argo CD
	// drops what it printed.
	t.Run("fails: helm fails after printing", func(t *testing.T) {
		fake := filepath.Join(t.TempDir(), "helm")
		testtools.WriteFile(t, fake, []byte("#!/bin/sh\n\""+testtools.Helm3(t)+"\" \"$@\"\necho 'Error: something broke late' >&2\nexit 1\n"))
		if err := os.Chmod(fake, 0o755); err != nil {
			t.Fatal(err)
		}
		out, errOut, err := cmpRun{env: map[string]string{"CHART": localChart}, helm: fake}.run(t)
		if err == nil || !strings.Contains(string(errOut), "something broke late") {
			t.Errorf("the generate command did not fail: %v, stderr %q", err, errOut)
		}
		if len(out) == 0 {
			t.Error("the renderer printed nothing: this case no longer shows what pipefail does")
		}
	})
}

// TestArgoCDPluginParameters: what the test in Argo CD's engine
// (e2e/argocd_test.go) does not cover of the parameters: a helm-set item
// with a glob character and a values file in a subdirectory reach helm as
// they are; the static announcements say what the plugin does when a
// parameter is not set (the output with each set to its announced default is
// the output without them), and every parameter the command reads is
// announced; a values file or chart through a symbolic link that leads out
// of the source directory, a missing values file, a bad mode and a refused
// flag fail.
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
	// and the parameters the command reads are the announced ones.
	script := strings.Join(p.Spec.Generate.Args, "\n")
	announced := map[string]bool{}
	for _, a := range p.Spec.Parameters.Static {
		env := notEnvChar.ReplaceAllString(strings.ToUpper(a.Name), "_")
		announced[env] = true
		if a.Title == "" || a.Tooltip == "" || (a.CollectionType == "array") != (a.String == nil) {
			t.Errorf("announcement %+v: a title, a tooltip, and collectionType array exactly for arrays", a)
		}
		if a.CollectionType == "array" && !strings.Contains(script, "items "+env+" ") {
			t.Errorf("array parameter %s: the command never reads PARAM_%s_<i>", a.Name, env)
		}
		if a.CollectionType != "array" && !regexp.MustCompile(`param `+env+` `).MatchString(script) {
			t.Errorf("string parameter %s: the command never reads PARAM_%s", a.Name, env)
		}
	}
	for _, m := range regexp.MustCompile(`(?:param|items) ([A-Z_]+) `).FindAllStringSubmatch(script, -1) {
		if !announced[m[1]] {
			t.Errorf("the command reads parameter %s, which is not announced", m[1])
		}
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
		"missing values file": {[]argoParam{{Name: "values-files", Array: []string{"nope.yaml"}}}, "nope.yaml"},
		"unknown mode":        {[]argoParam{{Name: "mode", String: str("upgrade")}}, `--mode "upgrade" is unknown`},
		"bad CCM flag":        {[]argoParam{{Name: "set-arg", Array: []string{"cloud-provider=gce"}}}, "cloud-provider"},
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

// TestArgoCDPluginSidecar installs the plugin the way docs/argocd.md says:
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
	plugin, err := os.ReadFile(exampleDir("argocd", "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cm string
	for _, o := range objs {
		if o.Kind == "ConfigMap" && strings.HasPrefix(o.Name, "aws-ccm-renderer-cmp-") && o.Namespace == "argocd" {
			cm = o.Name
			if got, _ := manifest.Get(o.Doc, "data", "plugin.yaml").(string); got != string(plugin) {
				t.Errorf("ConfigMap %s does not hold plugin.yaml:\n%s", o.Name, got)
			}
		}
	}
	if cm == "" {
		t.Fatal("no plugin ConfigMap (aws-ccm-renderer-cmp-<hash>) in namespace argocd")
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
	if cmd := manifest.Strings(sidecar["command"]); !slices.Equal(cmd, []string{"/var/run/argocd/argocd-cmp-server"}) {
		t.Errorf("sidecar command %q", cmd)
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
		if mm["mountPath"] == "/home/argocd/cmp-server/config/plugin.yaml" {
			if mm["subPath"] != "plugin.yaml" || manifest.Get(volumes[mm["name"].(string)], "configMap", "name") != cm {
				t.Errorf("the plugin config mount %v does not take plugin.yaml from ConfigMap %s", mm, cm)
			}
		}
	}
	for path, volume := range map[string]string{"/var/run/argocd": "var-files", "/home/argocd/cmp-server/plugins": "plugins"} {
		if mounts[path] != volume {
			t.Errorf("sidecar mounts %q at %s, want volume %s", mounts[path], path, volume)
		}
	}
	if _, ok := mounts["/home/argocd/cmp-server/config/plugin.yaml"]; !ok {
		t.Error("the plugin config is not mounted")
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
	if len(k.HelmCharts) != 1 || k.HelmCharts[0].Name != testtools.ChartName || k.HelmCharts[0].Repo != testtools.ChartRepo || len(k.Components) != 1 {
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
	distro, mode := renderer.Distro(parts[len(parts)-2]), renderer.Mode(parts[len(parts)-1])
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

// fleetBundle is the part of fleet.yaml the test uses.
type fleetBundle struct {
	DefaultNamespace string `yaml:"defaultNamespace"`
	Helm             struct {
		Repo        string `yaml:"repo"`
		Chart       string `yaml:"chart"`
		Version     string `yaml:"version"`
		ReleaseName string `yaml:"releaseName"`
	} `yaml:"helm"`
	Kustomize struct {
		Dir string `yaml:"dir"`
	} `yaml:"kustomize"`
	TargetCustomizations []struct {
		Name            string `yaml:"name"`
		ClusterSelector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"clusterSelector"`
		Kustomize struct {
			Dir string `yaml:"dir"`
		} `yaml:"kustomize"`
	} `yaml:"targetCustomizations"`
}

// fleetKustomize does what Fleet's agent does with a bundle's kustomize.dir
// after rendering the chart: the bundle's files in an in-memory file system,
// the chart's output written into the directory as fleet-manifests.yaml and
// put first in its kustomization's resources, then the kustomize api
// library with root-only loading and plugins off.
func fleetKustomize(t *testing.T, bundle, dir string, chartOutput []byte) []byte {
	t.Helper()
	mem := filesys.MakeEmptyDirInMemory()
	err := filepath.WalkDir(bundle, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(bundle, path)
		_, err = mem.AddFile(filepath.ToSlash(rel), b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mem.AddFile(dir+"/fleet-manifests.yaml", chartOutput); err != nil {
		t.Fatal(err)
	}
	kpath := dir + "/kustomization.yaml"
	b, err := mem.ReadFile(kpath)
	if err != nil {
		t.Fatalf("kustomize.dir %s: %v", dir, err)
	}
	var k map[string]any
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	resources, _ := k["resources"].([]any)
	if !slices.Contains(resources, any("fleet-manifests.yaml")) {
		k["resources"] = append([]any{"fleet-manifests.yaml"}, resources...)
	}
	if b, err = yaml.Marshal(k); err != nil {
		t.Fatal(err)
	}
	if err := mem.WriteFile(kpath, b); err != nil {
		t.Fatal(err)
	}
	out, err := testtools.KrustyRun(mem, dir)
	if err != nil {
		t.Fatalf("kustomize.dir %s: %v", dir, err)
	}
	return out
}

// TestFleetBundle renders the example bundle the way Fleet does, for each
// target customization and for clusters none picks: the chart from
// fleet.yaml through helm, then its kustomize.dir over the output.
func TestFleetBundle(t *testing.T) {
	src := exampleDir("fleet")
	var bundle fleetBundle
	b, err := os.ReadFile(filepath.Join(src, "fleet.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &bundle); err != nil {
		t.Fatal(err)
	}
	if bundle.Helm.Chart != testtools.ChartName || bundle.Helm.Repo != testtools.ChartRepo || bundle.Helm.Version != testtools.LatestChartVersion {
		t.Fatalf("fleet.yaml: helm %+v, want the upstream chart %s", bundle.Helm, testtools.LatestChartVersion)
	}
	chart := testtools.UpstreamChart(t, bundle.Helm.Version)
	out := testtools.MustRun(t, testtools.HelmEnv(t), testtools.Helm3(t), "template", bundle.Helm.ReleaseName, chart,
		"--namespace", bundle.DefaultNamespace)
	nodes := testtools.Fixtures(t)

	type target struct {
		distro renderer.Distro
		dir    string
	}
	targets := map[string]target{"no customization": {renderer.DistroAuto, bundle.Kustomize.Dir}}
	for _, tc := range bundle.TargetCustomizations {
		distro := renderer.Distro(tc.ClusterSelector.MatchLabels["provider.cattle.io"])
		if distro != renderer.Distro(tc.Name) || len(tc.ClusterSelector.MatchLabels) != 1 {
			t.Fatalf("customization %s selects %v", tc.Name, tc.ClusterSelector.MatchLabels)
		}
		targets[tc.Name] = target{distro, tc.Kustomize.Dir}
	}
	if len(targets) != 3 {
		t.Fatalf("targets %v: want rke, rke2 and the rest", targets)
	}
	for name, tg := range targets {
		t.Run(name, func(t *testing.T) {
			objs, err := manifest.Split(fleetKustomize(t, src, tg.dir, out))
			if err != nil {
				t.Fatal(err)
			}
			testtools.CheckMeaning(t, objs, nodes, tg.distro, renderer.ModeInstall)
			testtools.SameAsRenderer(t, objs, testtools.PostRendered(t, out, tg.distro, renderer.ModeInstall), nodes)
		})
	}

	// A migration as docs/fleet.md says: the component of the distribution's
	// kustomization changed from install to migrate. The migrate component
	// pins the CCM of the last minor that migrates, whatever the chart's
	// default image: the result is the renderer's for the chart with that
	// image.tag.
	pinned := testtools.MustRun(t, testtools.HelmEnv(t), testtools.Helm3(t), "template", bundle.Helm.ReleaseName, chart,
		"--namespace", bundle.DefaultNamespace, "--set", "image.tag="+renderer.CCMTag(renderer.LastInTreeMinor))
	for name, tg := range targets {
		t.Run(name+", migrate", func(t *testing.T) {
			migrating := t.TempDir()
			if err := os.CopyFS(migrating, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			kpath := filepath.Join(migrating, filepath.FromSlash(tg.dir), "kustomization.yaml")
			k, err := os.ReadFile(kpath)
			if err != nil {
				t.Fatal(err)
			}
			install := "/" + string(tg.distro) + "/install\n"
			if !strings.Contains(string(k), install) {
				t.Fatalf("%s does not use the %s install component:\n%s", tg.dir, tg.distro, k)
			}
			testtools.WriteFile(t, kpath, []byte(strings.Replace(string(k), install, "/"+string(tg.distro)+"/migrate\n", 1)))
			objs, err := manifest.Split(fleetKustomize(t, migrating, tg.dir, out))
			if err != nil {
				t.Fatal(err)
			}
			testtools.CheckMeaning(t, objs, nodes, tg.distro, renderer.ModeMigrate)
			testtools.SameAsRenderer(t, objs, testtools.PostRendered(t, pinned, tg.distro, renderer.ModeMigrate), nodes)
		})
	}
}
