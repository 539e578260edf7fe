package e2e

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
)

// The Argo CD test runs Argo CD's config management plugin server
// (argocd-cmp-server, Argo CD v2.14.21, e2e/tools/argocd) with the plugin
// configuration users install, examples/argocd/plugin.yaml, and drives it
// with the repo server's own code (bin/argocd-cmp-client, the same module):
// the plugin found by its name, the source directory streamed to it, the
// Application's parameters and env made into the plugin's environment by
// the repo server's GenerateManifests. What the plugin generates is applied
// to the test cluster, where the DaemonSet controller places the CCM.

// argoPluginName is how an Application names the plugin: metadata.name-spec.version.
const argoPluginName = "aws-ccm-renderer-v1"

// argoSourcePath is the Application's source directory in its repository.
const argoSourcePath = "clusters/prod/aws-ccm"

// argoChartPath is where a source directory holds the upstream chart
// package, for the chart parameter as a path (no network here).
const argoChartPath = "upstream/aws-cloud-controller-manager.tgz"

// argoTool returns an Argo CD program: $ENV, else bin/NAME, built with make
// tools-argocd when missing.
func argoTool(t *testing.T, env, name string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	p := filepath.Join(testtools.Root(), "bin", name)
	if _, err := os.Stat(p); err != nil {
		if out, err := exec.Command("make", "-s", "-C", testtools.Root(), "tools-argocd").CombinedOutput(); err != nil {
			t.Fatalf("building Argo CD's programs (make tools-argocd; set %s to use another): %v\n%s", env, err, out)
		}
	}
	return p
}

// cmpServer is a running argocd-cmp-server.
type cmpServer struct {
	sockets string // $ARGOCD_PLUGINSOCKFILEPATH, where its socket is
	client  string // bin/argocd-cmp-client
	proc    *harness.Process
}

// startCMPServer runs argocd-cmp-server as the sidecar of
// examples/argocd/repo-server-patch.yaml does: its configuration,
// plugin.yaml, in the directory --config-dir-path names (the sidecar mounts
// it at /home/argocd/cmp-server/config, the default), its socket in
// $ARGOCD_PLUGINSOCKFILEPATH (the sidecar: the default, the plugins volume),
// the sidecar's env with the emptyDir it mounts at /tmp made a directory of
// the test's (so also $TMPDIR, where the server keeps its work directory),
// and on PATH the tools plugin.yaml runs: the renderer and Helm the tests
// run, then the repository's bin/.
func startCMPServer(t *testing.T) *cmpServer {
	t.Helper()
	dir := t.TempDir()
	config, sockets, tmp, tools, home := filepath.Join(dir, "config"), filepath.Join(dir, "plugins"), filepath.Join(dir, "tmp"),
		filepath.Join(dir, "tools"), filepath.Join(dir, "home")
	for _, d := range []string{config, sockets, tmp, tools, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	plugin, err := os.ReadFile(filepath.Join(testtools.Root(), "examples", "argocd", "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	testtools.WriteFile(t, filepath.Join(config, "plugin.yaml"), plugin)
	for name, target := range map[string]string{"helm": testtools.Helm3(t), "aws-ccm-renderer": testtools.Renderer(t)} {
		if err := os.Symlink(target, filepath.Join(tools, name)); err != nil {
			t.Fatal(err)
		}
	}
	// The sidecar's environment is its image's: none of the test's
	// variables that would change what helm does.
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); testtools.HostileToTests(name) {
			env = append(env, name+"=")
		}
	}
	env = append(env,
		"PATH="+tools+":"+filepath.Join(testtools.Root(), "bin")+":"+os.Getenv("PATH"),
		"HOME="+home,
		"TMPDIR="+tmp,
		"ARGOCD_PLUGINSOCKFILEPATH="+sockets,
		"SSL_CERT_FILE="+testCA(t), // the chart repository on loopback (chartRepo)
	)
	for _, e := range sidecarEnv(t) {
		rest, ok := strings.CutPrefix(e.Value, "/tmp/")
		if !ok {
			t.Fatalf("repo-server-patch.yaml: the sidecar's %s=%s is not in its /tmp emptyDir, which this test maps", e.Name, e.Value)
		}
		env = append(env, e.Name+"="+filepath.Join(tmp, rest))
	}
	s := &cmpServer{sockets: sockets, client: argoTool(t, "ARGOCD_CMP_CLIENT", "argocd-cmp-client")}
	s.proc, err = cp.RunEnv("argocd-cmp-server", argoTool(t, "ARGOCD_CMP_SERVER", "argocd-cmp-server"), env,
		"--config-dir-path", config, "--loglevel", "info", "--logformat", "text") // text: the test reads its log (Argo CD 3 writes JSON by default)
	if err != nil {
		t.Fatal(err)
	}
	// On SIGTERM it removes its socket but does not exit (cmpserver/server.go,
	// Shutdown, at v2.14.21): no need to wait Stop's 10 s for it.
	t.Cleanup(func() { s.proc.StopAfter(time.Second) })
	socket := filepath.Join(sockets, argoPluginName+".sock")
	harness.WaitForState(t, 60*time.Second, "argocd-cmp-server to listen on "+socket, func() (bool, string) {
		select {
		case <-s.proc.Done():
			t.Fatalf("argocd-cmp-server exited:\n%s", s.proc.Log())
		default:
		}
		c, err := net.Dial("unix", socket)
		if err != nil {
			return false, err.Error()
		}
		c.Close()
		return true, ""
	})
	return s
}

// argoParam is one of an Application's spec.source.plugin.parameters.
type argoParam struct {
	Name   string   `json:"name"`
	String *string  `json:"string,omitempty"`
	Array  []string `json:"array,omitempty"`
}

func str(s string) *string { return &s }

// argoSource is an Application's spec.source, the parts the tests read.
type argoSource struct {
	Plugin struct {
		Name       string      `json:"name"`
		Parameters []argoParam `json:"parameters"`
	} `json:"plugin"`
}

// argoApp is an Application whose source uses the plugin, and what its
// source directory holds.
type argoApp struct {
	name, namespace string
	plugin          string            // spec.source.plugin.name; "" names none
	noPlugin        bool              // no spec.source.plugin at all
	params          []argoParam       // spec.source.plugin.parameters
	env             map[string]string // spec.source.plugin.env
	files           map[string][]byte // the source directory's files
	kubeVersion     string            // the destination cluster's; the test cluster's if empty
}

// argoResult is what the repo server's code returned: a ManifestResponse,
// or its error.
type argoResult struct {
	Manifests  []string `json:"manifests"`
	SourceType string   `json:"sourceType"`
	Error      string   `json:"error"`

	// detect
	IsDiscoveryConfigured *bool `json:"isDiscoveryConfigured"`
	// app-type
	Type string `json:"type"`
	// parameters
	ParametersAnnouncement []testtools.ArgoCDAnnouncement `json:"parametersAnnouncement"`
}

// clusterVersion returns the test cluster's version and its API group
// versions, as Argo CD's application controller sends them to the repo
// server (KUBE_VERSION, KUBE_API_VERSIONS).
func clusterVersion(t *testing.T) (string, []string) {
	t.Helper()
	v, err := cp.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	groups, err := cp.Client.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	var apis []string
	for _, g := range groups.Groups {
		for _, gv := range g.Versions {
			apis = append(apis, gv.GroupVersion)
		}
	}
	sort.Strings(apis)
	return v.GitVersion, apis
}

// run asks the repo server's code (op: generate, detect, app-type,
// parameters, see e2e/tools/argocd/cmd/argocd-cmp-client) about the
// Application, with its source directory written out in a checkout.
func (s *cmpServer) run(t *testing.T, op string, a argoApp) argoResult {
	t.Helper()
	repo := t.TempDir()
	app := filepath.Join(repo, filepath.FromSlash(argoSourcePath))
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	// A repository holds files besides the Application's (the repo server
	// streams nothing from an empty one).
	testtools.WriteFile(t, filepath.Join(repo, "README.md"), []byte("cluster configuration\n"))
	for name, b := range a.files {
		testtools.WriteFile(t, filepath.Join(app, filepath.FromSlash(name)), b)
	}
	kube, apis := clusterVersion(t)
	if a.kubeVersion != "" {
		kube = a.kubeVersion
	}
	source := map[string]any{
		"repoURL":        "https://git.example.com/platform/cluster-config.git",
		"path":           argoSourcePath,
		"targetRevision": "main",
	}
	if !a.noPlugin {
		source["plugin"] = map[string]any{"name": a.plugin, "parameters": a.params, "env": envEntries(a.env)}
	}
	req, err := json.Marshal(map[string]any{
		"repo":              map[string]string{"repo": source["repoURL"].(string)},
		"revision":          "0123456789abcdef0123456789abcdef01234567",
		"appLabelKey":       "app.kubernetes.io/instance", // argocd-cm's default
		"trackingMethod":    "label",                      // Argo CD 2's default
		"appName":           a.name,
		"namespace":         a.namespace,
		"applicationSource": source,
		"kubeVersion":       kube,
		"apiVersions":       apis,
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(s.client, op, app, repo)
	cmd.Env = append(os.Environ(), "ARGOCD_PLUGINSOCKFILEPATH="+s.sockets)
	cmd.Stdin = bytes.NewReader(req)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if code := testtools.ExitCode(err); code != 0 && code != 3 {
		t.Fatalf("argocd-cmp-client %s: %v\n%s", op, err, stderr.Bytes())
	}
	var r argoResult
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("argocd-cmp-client %s printed %q: %v", op, stdout.Bytes(), err)
	}
	if (err != nil) != (r.Error != "") {
		t.Fatalf("argocd-cmp-client %s: exit %v with result %+v", op, err, r)
	}
	return r
}

// envEntries is a plugin env as an Application writes it.
func envEntries(env map[string]string) []map[string]string {
	var out []map[string]string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, map[string]string{"name": k, "value": env[k]})
	}
	return out
}

// chartRepo serves the latest upstream chart package as a chart repository
// on a loopback port, and returns its URL.
func chartRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	pkg, err := os.ReadFile(testtools.UpstreamChart(t, testtools.LatestChartVersion))
	if err != nil {
		t.Fatal(err)
	}
	testtools.WriteFile(t, filepath.Join(dir, filepath.Base(testtools.UpstreamChart(t, testtools.LatestChartVersion))), pkg)
	// Over https://, as the plugin fetches nothing else: with httptest's
	// certificate, which the sidecar and Helm trust (testCA).
	srv := httptest.NewUnstartedServer(http.FileServer(http.Dir(dir)))
	url := "https://" + srv.Listener.Addr().String()
	testtools.MustRun(t, testtools.HelmEnv(t), testtools.Helm3(t), "repo", "index", dir, "--url", url)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return url
}

// testCA writes the certificate of httptest's TLS servers (one for all of
// them) as a PEM file, for SSL_CERT_FILE: the CA bundle of the sidecar and
// of the Helm the tests run beside it.
func testCA(t *testing.T) string {
	t.Helper()
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	p := filepath.Join(t.TempDir(), "ca.pem")
	testtools.WriteFile(t, p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	return p
}

// names are the helm-set items that give an Application's objects names of
// their own (the chart's cluster-scoped objects take theirs from values),
// and pin the CCM of the cluster's minor, as docs/argocd.md says to.
func names(app, ns string, minor int) []string {
	return []string{"namespace=" + ns, "nameOverride=" + app, "clusterRoleName=" + app, "serviceAccountName=" + app + "-sa",
		"image.tag=" + releases.Pin(releases.Tag(minor))}
}

// TestArgoCD runs the plugin in Argo CD's CMP server and drives it as Argo
// CD's repo server does.
func TestArgoCD(t *testing.T) {
	s := startCMPServer(t)
	chartPkg, err := os.ReadFile(testtools.UpstreamChart(t, testtools.LatestChartVersion))
	if err != nil {
		t.Fatal(err)
	}
	withChart := map[string][]byte{argoChartPath: chartPkg}
	minor := harness.Current.Minor // the test cluster's, whose CCM release the Applications pin

	t.Run("discovery", func(t *testing.T) { testArgoDiscovery(t, s, withChart) })
	t.Run("parameters announced", func(t *testing.T) { testArgoAnnouncements(t, s) })
	t.Run("generate", func(t *testing.T) { testArgoGenerate(t, s, chartPkg, minor) })
	t.Run("refused", func(t *testing.T) { testArgoRefused(t, s, withChart, minor) })
	if t.Failed() {
		t.Logf("argocd-cmp-server log tail:\n%s", tail(s.proc.Log(), 4000))
	}
}

// cut shortens a long line to its first and last n/2 bytes.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n/2] + " … " + s[len(s)-n/2:]
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// testArgoDiscovery: the plugin has no discover rule, so an Application
// that names it finds it, and one that names no plugin never gets it: a
// directory with a Helm chart stays a Helm source.
func testArgoDiscovery(t *testing.T, s *cmpServer, withChart map[string][]byte) {
	r := s.run(t, "detect", argoApp{name: "discover", namespace: "kube-system", plugin: argoPluginName, files: withChart})
	if r.Error != "" || r.IsDiscoveryConfigured == nil || *r.IsDiscoveryConfigured {
		t.Errorf("named: %+v; want the plugin found, its CheckPluginConfiguration saying discovery is not configured", r)
	}
	r = s.run(t, "detect", argoApp{name: "discover", namespace: "kube-system", files: withChart})
	if r.Error != "could not find plugin supporting the given repository" {
		t.Errorf("unnamed: %+v; want no plugin found", r)
	}
	chart := testtools.ChartPackage(t, testtools.UpstreamChart(t, testtools.LatestChartVersion))
	files := map[string][]byte{} // the chart's files at the top of the source directory
	for name, b := range chart {
		_, rel, _ := strings.Cut(name, "/")
		files[rel] = b
	}
	r = s.run(t, "app-type", argoApp{name: "discover", namespace: "kube-system", noPlugin: true, files: files})
	if r.Error != "" || r.Type != "Helm" {
		t.Errorf("a directory with a Helm chart, no plugin named: %+v; want type Helm", r)
	}
	r = s.run(t, "generate", argoApp{name: "discover", namespace: "kube-system", files: withChart})
	if want := "plugin sidecar failed. could not find plugin supporting the given repository"; r.Error != want {
		t.Errorf("an Application with a plugin section and no name: %q, want %q", r.Error, want)
	}
}

// testArgoAnnouncements: GetParametersAnnouncement returns plugin.yaml's
// spec.parameters.static, in order, as the UI lists them.
func testArgoAnnouncements(t *testing.T, s *cmpServer) {
	var plugin struct {
		Spec struct {
			Parameters struct {
				Static []testtools.ArgoCDAnnouncement `json:"static"`
			} `json:"parameters"`
		} `json:"spec"`
	}
	readExample(t, "plugin.yaml", &plugin)
	want := plugin.Spec.Parameters.Static
	r := s.run(t, "parameters", argoApp{name: "params", namespace: "kube-system", plugin: argoPluginName})
	if r.Error != "" {
		t.Fatal(r.Error)
	}
	got := r.ParametersAnnouncement
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("%d parameters announced, plugin.yaml has %d: %+v", len(got), len(want), got)
	}
	var table strings.Builder
	for i := range want {
		g, w := got[i], want[i]
		if len(g.Array) == 0 && len(w.Array) == 0 {
			g.Array, w.Array = nil, nil
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("parameter %d: announced %+v, plugin.yaml says %+v", i, g, w)
		}
		def := fmt.Sprint(g.Array)
		if g.String != nil {
			def = *g.String
		}
		fmt.Fprintf(&table, "%-14s %-26s %-6s %s\n", g.Name, g.Title, map[bool]string{true: "array", false: "string"}[g.CollectionType == "array"], def)
	}
	t.Log("the Parameters tab:\n" + table.String())
}

// argoCase is an Application of the plugin, and the helm and renderer
// commands docs/argocd.md says the plugin runs for it.
type argoCase struct {
	name     string
	distros  []string // the fixtures whose control-plane nodes get the CCM
	params   []argoParam
	env      map[string]string
	files    map[string][]byte
	kube     string   // the destination cluster's version; the test cluster's if empty
	chart    []string // helm template's chart and the flags that find it
	helm     []string // helm template's other flags, before --kube-version and --api-versions
	distro   string   // aws-ccm-renderer's --distro
	mode     string   // aws-ccm-renderer's --mode
	renderer []string // aws-ccm-renderer's flags between --kube-version and --strict
	strict   string   // the value of --strict; true if empty
	extra    []string // aws-ccm-renderer's flags after --strict (RENDERER_ARGS)
}

// testArgoGenerate: the parameter sets of docs/argocd.md generate what the
// renderer makes of the chart, with Argo CD's tracking label; applied to
// the test cluster, the DaemonSet controller puts the CCM on exactly the
// control-plane nodes.
func testArgoGenerate(t *testing.T, s *cmpServer, chartPkg []byte, minor int) {
	repo := chartRepo(t)
	latest := testtools.LatestChartVersion
	ownNames := func(app string) []string { return names(app, app, minor) }
	valuesOf := func(items []string) []byte { // helm-set items as a values file
		values := map[string]any{}
		for _, kv := range items {
			k, v, _ := strings.Cut(kv, "=")
			path := strings.Split(k, ".")
			m := values
			for _, p := range path[:len(path)-1] {
				if _, ok := m[p].(map[string]any); !ok {
					m[p] = map[string]any{}
				}
				m = m[p].(map[string]any)
			}
			m[path[len(path)-1]] = v
		}
		b, err := yaml.Marshal(values)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	setFlags := func(items []string) []string {
		var out []string
		for _, kv := range items {
			out = append(out, "--set", kv)
		}
		return out
	}
	example := exampleApplication(t)
	exampleParams := slices.Clone(example.params)
	own := names("argo-example", "argo-example", minor)[:4] // its names, not its image.tag
	if i := slices.IndexFunc(exampleParams, func(p argoParam) bool { return p.Name == "helm-set" }); i >= 0 {
		exampleParams[i].Array = append(slices.Clone(exampleParams[i].Array), own...)
	} else {
		exampleParams = append(exampleParams, argoParam{Name: "helm-set", Array: own})
	}
	exampleParams = append(exampleParams, argoParam{Name: "repo", String: str(repo)})

	cases := []argoCase{{
		// Nothing but the chart repository (loopback) and the names and
		// CCM release of this cluster.
		name: "argo-defaults", distros: fixtureDistros,
		params: []argoParam{{Name: "repo", String: str(repo)}, {Name: "helm-set", Array: ownNames("argo-defaults")}},
		chart:  []string{upstream.ChartName, "--repo", repo, "--version", latest},
		helm:   setFlags(ownNames("argo-defaults")),
		distro: "auto", mode: "install",
	}, {
		name: "argo-set-arg", distros: []string{"rke2"},
		params: []argoParam{{Name: "chart", String: str(argoChartPath)}, {Name: "distro", String: str("rke2")},
			{Name: "set-arg", Array: []string{"cluster-name=prod two", "allocate-node-cidrs=false"}},
			{Name: "remove-arg", Array: []string{"v"}}, {Name: "helm-set", Array: ownNames("argo-set-arg")}},
		files:  map[string][]byte{argoChartPath: chartPkg},
		chart:  []string{argoChartPath, "--version", latest},
		helm:   setFlags(ownNames("argo-set-arg")),
		distro: "rke2", mode: "install", renderer: []string{"--set-arg=cluster-name=prod two", "--set-arg=allocate-node-cidrs=false", "--remove-arg=v"},
	}, {
		// values-files names another file than values.yaml, which is then
		// not read; helm-set items override the files.
		name: "argo-values-files", distros: []string{"kubeadm"},
		params: []argoParam{{Name: "chart", String: str(argoChartPath)}, {Name: "distro", String: str("kubeadm")},
			{Name: "values-files", Array: []string{"env/prod.yaml"}}, {Name: "helm-set", Array: []string{"resources.requests.cpu=300m"}}},
		files: map[string][]byte{argoChartPath: chartPkg, "values.yaml": []byte("image:\n  tag: v1.30.0\n"),
			"env/prod.yaml": valuesOf(append(ownNames("argo-values-files"), "resources.requests.cpu=500m"))},
		chart:  []string{argoChartPath, "--version", latest},
		helm:   []string{"--values", "env/prod.yaml", "--set", "resources.requests.cpu=300m"},
		distro: "kubeadm", mode: "install",
	}, {
		// An Application of the plugin's first version: the plugin env,
		// and values.yaml.
		name: "argo-first-version", distros: []string{"rke"},
		env:    map[string]string{"DISTRO": "rke", "MODE": "install", "CHART": argoChartPath, "RENDERER_ARGS": "--set-arg=cluster-name=prod --set-arg=v=4"},
		files:  map[string][]byte{argoChartPath: chartPkg, "values.yaml": valuesOf(ownNames("argo-first-version"))},
		chart:  []string{argoChartPath, "--version", latest},
		helm:   []string{"--values", "values.yaml"},
		distro: "rke", mode: "install",
		extra: []string{"--set-arg=cluster-name=prod", "--set-arg=v=4"},
	}, {
		// A migration: the CCM of the destination cluster's minor pinned.
		name: "argo-migrate", distros: []string{"rke2"}, kube: "v1.26.15",
		params: []argoParam{{Name: "chart", String: str(argoChartPath)}, {Name: "distro", String: str("rke2")},
			{Name: "mode", String: str("migrate")}, {Name: "helm-set", Array: names("argo-migrate", "argo-migrate", releases.LastInTreeMinor)}},
		files:  map[string][]byte{argoChartPath: chartPkg},
		chart:  []string{argoChartPath, "--version", latest},
		helm:   setFlags(names("argo-migrate", "argo-migrate", releases.LastInTreeMinor)),
		distro: "rke2", mode: "migrate",
	}, {
		// strict false: a warning does not stop the render.
		name: "argo-not-strict", distros: []string{"rke2"},
		params: []argoParam{{Name: "chart", String: str(argoChartPath)}, {Name: "distro", String: str("rke2")},
			{Name: "set-arg", Array: []string{"configure-cloud-routes=true"}}, {Name: "strict", String: str("false")},
			{Name: "helm-set", Array: ownNames("argo-not-strict")}},
		files:  map[string][]byte{argoChartPath: chartPkg},
		chart:  []string{argoChartPath, "--version", latest},
		helm:   setFlags(ownNames("argo-not-strict")),
		distro: "rke2", mode: "install", renderer: []string{"--set-arg=configure-cloud-routes=true"},
		strict: "false",
	}, {
		// A parameter wins over the plugin env.
		name: "argo-k3s", distros: []string{"k3s"},
		params: []argoParam{{Name: "chart", String: str(argoChartPath)}, {Name: "distro", String: str("k3s")},
			{Name: "helm-set", Array: ownNames("argo-k3s")}},
		env:    map[string]string{"DISTRO": "rke"},
		files:  map[string][]byte{argoChartPath: chartPkg},
		chart:  []string{argoChartPath, "--version", latest},
		helm:   setFlags(ownNames("argo-k3s")),
		distro: "k3s", mode: "install",
	}, {
		// examples/argocd/application.yaml's parameters, the chart from the
		// loopback repository and names of its own added, for a destination
		// cluster of the minor of the CCM it pins.
		name: "argo-example", distros: []string{example.distro},
		params: exampleParams, kube: example.kube,
		chart:  []string{upstream.ChartName, "--repo", repo, "--version", example.chartVersion},
		helm:   setFlags(append(slices.Clone(example.sets), own...)),
		distro: example.distro, mode: example.mode, renderer: example.setArgs,
	}}
	// ccm-version auto: the CCM of the minor of the destination's version,
	// as the repo server sends it, for clusters of three minors (the
	// migration's on the last in-tree one).
	for _, c := range []struct {
		minor int
		mode  string
	}{{releases.LastInTreeMinor, "migrate"}, {minor - 3, "install"}, {minor, "install"}} {
		name := fmt.Sprintf("argo-auto-1-%d", c.minor)
		sets := names(name, name, c.minor)
		cases = append(cases, argoCase{
			name: name, distros: []string{"rke2"}, kube: fmt.Sprintf("v1.%d.3+rke2r1", c.minor),
			params: []argoParam{{Name: "chart", String: str(argoChartPath)}, {Name: "distro", String: str("rke2")},
				{Name: "mode", String: str(c.mode)}, {Name: "ccm-version", String: str("auto")},
				{Name: "helm-set", Array: sets[:4]}},
			files:  map[string][]byte{argoChartPath: chartPkg},
			chart:  []string{argoChartPath, "--version", latest},
			helm:   setFlags(sets),
			distro: "rke2", mode: c.mode,
		})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ns := namespace(t, c.name)
			r := s.run(t, "generate", argoApp{name: c.name, namespace: ns, plugin: argoPluginName, params: c.params, env: c.env, files: c.files, kubeVersion: c.kube})
			if r.Error != "" {
				t.Fatal(r.Error)
			}
			if r.SourceType != "Plugin" {
				t.Errorf("source type %q, want Plugin", r.SourceType)
			}
			var got []*unstructured.Unstructured
			for _, m := range r.Manifests {
				u := &unstructured.Unstructured{}
				if err := u.UnmarshalJSON([]byte(m)); err != nil {
					t.Fatal(err)
				}
				got = append(got, u)
			}
			want := argoExpected(t, c, ns)
			sameObjects(t, got, want)
			if c.strict == "false" {
				// The warning reaches only the sidecar's log: the stderr
				// field of the CMP server's "Plugin command successful".
				harness.WaitForState(t, 10*time.Second, "the warning in the sidecar's log", func() (bool, string) {
					for _, line := range strings.Split(s.proc.Log(), "\n") {
						if strings.Contains(line, `msg="Plugin command successful"`) &&
							strings.Contains(line, "aws-ccm-renderer: warning: --configure-cloud-routes=true: the CCM's route controller") {
							t.Logf("the sidecar's log: %s", cut(line, 300))
							return true, ""
						}
					}
					return false, tail(s.proc.Log(), 2000)
				})
			}
			if err := cp.Apply(context.Background(), got); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cp.Remove(context.Background(), got) })
			var ds string
			for _, u := range got {
				if u.GetKind() == "DaemonSet" {
					ds = u.GetName()
				}
			}
			nodes := settle(t, ns, ds)
			for _, d := range c.distros {
				if got, want := onFixture(nodes, d), controlPlaneNodes(d); !slices.Equal(got, want) {
					t.Errorf("on the %s fixture: pods on %v, want exactly the control-plane nodes %v", d, got, want)
				}
			}
		})
	}
}

// argoExpected runs the commands the docs say the plugin runs, in a source
// directory like the Application's, and adds the label Argo CD's label
// tracking puts on every object (app.kubernetes.io/instance: the
// Application's name).
func argoExpected(t *testing.T, c argoCase, ns string) []*unstructured.Unstructured {
	t.Helper()
	dir := t.TempDir()
	for name, b := range c.files {
		testtools.WriteFile(t, filepath.Join(dir, filepath.FromSlash(name)), b)
	}
	kube, apis := clusterVersion(t)
	if c.kube != "" {
		kube = c.kube
	}
	args := append([]string{"template", c.name}, c.chart...)
	args = append(append(append(args, "--namespace", ns), c.helm...), "--kube-version", kube, "--api-versions", strings.Join(apis, ","))
	helm := exec.Command(testtools.Helm3(t), args...)
	helm.Dir, helm.Env = dir, append(testtools.HelmEnv(t), "SSL_CERT_FILE="+testCA(t))
	rendered, err := helm.Output()
	if err != nil {
		t.Fatalf("helm %v: %v", args, err)
	}
	flags := append(append([]string{"--distro", c.distro, "--mode", c.mode, "--kube-version", kube}, c.renderer...), "--strict="+cmp.Or(c.strict, "true"))
	cmd := exec.Command(testtools.Renderer(t), append(flags, c.extra...)...)
	cmd.Stdin = bytes.NewReader(rendered)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("aws-ccm-renderer %v: %v\n%s", flags, err, errOut.Bytes())
	}
	objs, err := harness.Decode(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		labels := o.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels["app.kubernetes.io/instance"] = c.name
		o.SetLabels(labels)
	}
	return objs
}

// sameObjects compares two sets of objects by kind, namespace and name,
// and by their JSON.
func sameObjects(t *testing.T, got, want []*unstructured.Unstructured) {
	t.Helper()
	index := func(objs []*unstructured.Unstructured) map[string]any {
		m := map[string]any{}
		for _, o := range objs {
			b, err := o.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			m[harness.ID(o)] = v
		}
		return m
	}
	g, w := index(got), index(want)
	if ids := slices.Sorted(maps.Keys(g)); !slices.Equal(ids, slices.Sorted(maps.Keys(w))) {
		t.Fatalf("objects %v, the renderer's %v", ids, slices.Sorted(maps.Keys(w)))
	}
	for id, v := range g {
		if !reflect.DeepEqual(v, w[id]) {
			gb, _ := json.MarshalIndent(v, "", " ")
			wb, _ := json.MarshalIndent(w[id], "", " ")
			t.Errorf("%s differs from the renderer's:\n%s\nthe renderer's:\n%s", id, gb, wb)
		}
	}
}

// exampleApp is what the tests take from examples/argocd/application.yaml.
type exampleApp struct {
	params                           []argoParam
	distro, mode, chartVersion, kube string
	setArgs                          []string // the renderer's --set-arg flags
	sets                             []string // the chart values it gives, image.tag's included
}

// exampleApplication reads the example Application: its plugin and
// parameters, and the destination cluster's version it is for (the minor
// of the CCM its helm-set pins).
func exampleApplication(t *testing.T) exampleApp {
	t.Helper()
	var app struct {
		Spec struct {
			Source argoSource `json:"source"`
		} `json:"spec"`
	}
	readExample(t, "application.yaml", &app)
	if app.Spec.Source.Plugin.Name != argoPluginName {
		t.Fatalf("application.yaml names plugin %q, want %s", app.Spec.Source.Plugin.Name, argoPluginName)
	}
	e := exampleApp{params: app.Spec.Source.Plugin.Parameters, distro: "auto", mode: "install", chartVersion: testtools.LatestChartVersion}
	for _, p := range e.params {
		switch {
		case p.Name == "distro" && p.String != nil:
			e.distro = *p.String
		case p.Name == "mode" && p.String != nil:
			e.mode = *p.String
		case p.Name == "chart-version" && p.String != nil:
			e.chartVersion = *p.String
		case p.Name == "set-arg":
			for _, a := range p.Array {
				e.setArgs = append(e.setArgs, "--set-arg="+a)
			}
		case p.Name == "helm-set":
			for _, kv := range p.Array {
				if tag, ok := strings.CutPrefix(kv, "image.tag="); ok {
					e.kube = tag // a cluster of the CCM's release
				}
			}
			e.sets = append(e.sets, p.Array...)
		case p.Name == "ccm-version" && p.String != nil && *p.String == "auto":
			// A destination of the test cluster's minor: auto pins its CCM.
			e.kube = fmt.Sprintf("v1.%d.0", harness.Current.Minor)
			e.sets = append(e.sets, "image.tag="+releases.Pin(releases.Tag(harness.Current.Minor)))
		default:
			t.Fatalf("application.yaml sets parameter %s, which this test does not read", p.Name)
		}
	}
	if e.kube == "" || e.chartVersion != testtools.LatestChartVersion || e.distro == "auto" {
		t.Fatalf("application.yaml: %+v; the test expects a distribution, the chart version the tests run and ccm-version auto or a pinned image.tag", e)
	}
	return e
}

// argoFailure is how the repo server reports a plugin whose generate
// command failed (GenerateManifests, runConfigManagementPluginSidecars and
// generateManifestsCMP on the repo server's side, the CMP server's
// generateManifest and runCommand on the sidecar's): the command as Argo
// CD logs it, then its exit status and its stderr. Argo CD's application
// controller shows it in the Application's ComparisonError condition.
const argoFailurePrefix = "plugin sidecar failed. error generating manifests in cmp: rpc error: code = Unknown desc = error generating manifests: `"

// argoFailureExit is what follows the command in the error: the exit status
// of the generate command (the plugin's refusals and the renderer's
// refused input: 1; the renderer's usage errors and strict warnings: 2),
// then its stderr.
func argoFailureExit(status int) string { return fmt.Sprintf("` failed exit status %d: ", status) }

// testArgoRefused: a strict warning, a migrate render with a CCM of another
// minor than the destination cluster's, and each refused parameter fail
// generate with the line docs/dev/argocd.md shows, and nothing is generated.
func testArgoRefused(t *testing.T, s *cmpServer, withChart map[string][]byte, minor int) {
	docs, err := os.ReadFile(filepath.Join(testtools.Root(), "docs", "dev", "argocd.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(docs, []byte(argoFailurePrefix)) || !bytes.Contains(docs, []byte("` failed exit status N: STDERR")) {
		t.Errorf("docs/dev/argocd.md does not show how Argo CD reports a failed generate: %q ... %q", argoFailurePrefix, "` failed exit status N: STDERR")
	}
	chart := argoParam{Name: "chart", String: str(argoChartPath)}
	pinned := argoParam{Name: "helm-set", Array: []string{"image.tag=" + releases.Tag(minor)}}
	const plugin = "aws-ccm-renderer: "
	for _, c := range []struct {
		name   string
		params []argoParam
		kube   string
		status int
		want   string
	}{
		{"strict warning", []argoParam{chart, pinned, {Name: "set-arg", Array: []string{"configure-cloud-routes=true"}}}, "", 2,
			"aws-ccm-renderer: --configure-cloud-routes=true: the CCM's route controller then writes pod CIDR routes into the VPC's route tables; " +
				"only clusters whose pod network relies on cloud routes want that (--strict: warnings are errors)"},
		{"migrate: the chart's CCM on a 1.26 cluster", []argoParam{chart, {Name: "distro", String: str("rke2")}, {Name: "mode", String: str("migrate")}}, "v1.26.15", 1,
			"aws-ccm-renderer: document 5 (line 145, aws-cloud-controller-manager/templates/daemonset.yaml): DaemonSet kube-system/aws-cloud-controller-manager: " +
				"the CCM (image registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0) is 1.35 and the cluster (--kube-version v1.26.15) 1.26: " +
				"a migration runs the CCM of the cluster's minor; pin the CCM release of the cluster's minor, v1.26.14 (with the upstream chart: --set image.tag=" + releases.Pin("v1.26.14") + "), " +
				"or pass --allow-version-skew to render it anyway"},
		{"strict: maybe", []argoParam{chart, pinned, {Name: "strict", String: str("maybe")}}, "", 2,
			`aws-ccm-renderer: the renderer's flags (parameters, RENDERER_ARGS): invalid argument "maybe" for "--strict" flag: strconv.ParseBool: parsing "maybe": invalid syntax`},
		{"values-files: absolute", []argoParam{chart, pinned, {Name: "values-files", Array: []string{"/etc/passwd"}}}, "", 1,
			plugin + "values-files: /etc/passwd is not a path in the Application's source directory"},
		{"values-files: ..", []argoParam{chart, pinned, {Name: "values-files", Array: []string{"../secrets.yaml"}}}, "", 1,
			plugin + "values-files: ../secrets.yaml is not a path in the Application's source directory"},
		{"values-files: URL", []argoParam{chart, pinned, {Name: "values-files", Array: []string{"https://attacker.example/values.yaml"}}}, "", 1,
			plugin + "values-files: https://attacker.example/values.yaml is a URL, which helm would fetch; name a file in the Application's source directory"},
		{"values-files: -", []argoParam{chart, pinned, {Name: "values-files", Array: []string{"-"}}}, "", 1,
			plugin + `values-files: "-" is not a file`},
		{"chart: absolute", []argoParam{pinned, {Name: "chart", String: str("/etc/charts/x.tgz")}}, "", 1,
			plugin + "chart: /etc/charts/x.tgz is not a path in the Application's source directory"},
		{"chart: ..", []argoParam{pinned, {Name: "chart", String: str("../other-team/chart")}}, "", 1,
			plugin + "chart: ../other-team/chart is not a path in the Application's source directory"},
		{"chart: URL", []argoParam{pinned, {Name: "chart", String: str("file:///etc/charts/x.tgz")}}, "", 1,
			plugin + "chart: file:///etc/charts/x.tgz is neither a chart name, a path in the source directory, an https:// URL nor an oci:// reference"},
		{"chart: -", []argoParam{pinned, {Name: "chart", String: str("--kubeconfig=x")}}, "", 1,
			plugin + "chart: --kubeconfig=x is neither a chart name, a path in the source directory, an https:// URL nor an oci:// reference"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := s.run(t, "generate", argoApp{name: "refused", namespace: "kube-system", plugin: argoPluginName, params: c.params, files: withChart, kubeVersion: c.kube})
			if len(r.Manifests) != 0 {
				t.Errorf("%d manifests generated", len(r.Manifests))
			}
			if !strings.HasPrefix(r.Error, argoFailurePrefix) || !strings.HasSuffix(r.Error, argoFailureExit(c.status)+c.want) {
				t.Errorf("the repo server says\n%s\nwant %q ... %q", r.Error, argoFailurePrefix, argoFailureExit(c.status)+c.want)
			}
			t.Logf("the repo server: %s", cut(r.Error, 160))
			if !bytes.Contains(docs, []byte(c.want)) {
				t.Errorf("docs/dev/argocd.md does not show %q", c.want)
			}
		})
	}
}

// readExample reads a file of examples/argocd into v.
func readExample(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testtools.Root(), "examples", "argocd", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("examples/argocd/%s: %v", name, err)
	}
}

// sidecarEnv returns the env of the sidecar container of
// examples/argocd/repo-server-patch.yaml, after checking that it runs
// argocd-cmp-server from the repo server's var-files volume.
func sidecarEnv(t *testing.T) []struct{ Name, Value string } {
	t.Helper()
	var patch struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Name    string                         `json:"name"`
						Command []string                       `json:"command"`
						Env     []struct{ Name, Value string } `json:"env"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	readExample(t, "repo-server-patch.yaml", &patch)
	for _, c := range patch.Spec.Template.Spec.Containers {
		if c.Name == "aws-ccm-renderer" {
			if !slices.Equal(c.Command, []string{"/var/run/argocd/argocd-cmp-server"}) {
				t.Fatalf("repo-server-patch.yaml: the sidecar runs %q, not argocd-cmp-server", c.Command)
			}
			return c.Env
		}
	}
	t.Fatal("repo-server-patch.yaml: no sidecar container aws-ccm-renderer")
	return nil
}
