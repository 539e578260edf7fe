package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/images"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// argoModuleDir is the Argo CD module's directory in the Go module cache,
// from the tool module that pins it.
func argoModuleDir(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/argoproj/argo-cd/v2")
	cmd.Dir = filepath.Join(testtools.Root(), "e2e", "tools", "argocd")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m github.com/argoproj/argo-cd/v2: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// appSetCluster is a cluster registered with Argo CD: its Secret's labels,
// and the control plane its server is.
type appSetCluster struct {
	name, stage, provider string
	migrate               bool // labelled aws-ccm-renderer.io/mode=migrate
	cp                    *harness.ControlPlane
}

// TestArgoCDApplicationSet: the example ApplicationSet over 30 clusters on
// two API servers of different minors (this package's 1.37 one and a 1.26
// one), with Argo CD's own code: its CRD takes the example as it is, the
// ApplicationSet controller's generation (the cluster generator over the
// cluster Secrets) gives one Application per labelled cluster with its
// stage, and the plugin, sent each destination's version as the repo
// server sends it, pins each the CCM of its minor. No file per cluster.
func TestArgoCDApplicationSet(t *testing.T) {
	ctx := context.Background()
	old := harness.StartRelease(t, testtools.Root(), harness.Kube126)

	// The CRD of the Argo CD release the tools run takes the example.
	crd, err := os.ReadFile(filepath.Join(argoModuleDir(t), "manifests", "crds", "applicationset-crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crds, err := harness.Decode(crd)
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Apply(ctx, crds); err != nil {
		t.Fatal(err)
	}
	if err := cp.WaitServed(ctx, "argoproj.io/v1alpha1", "applicationsets", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile(filepath.Join(testtools.Root(), "examples", "argocd", "applicationset.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var obj unstructured.Unstructured
	if err := yaml.Unmarshal(example, &obj.Object); err != nil {
		t.Fatal(err)
	}
	const argoNS = "argocd"
	if _, err := cp.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: argoNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	appsets := dyn.Resource(schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applicationsets"}).Namespace(argoNS)
	if _, err := appsets.Create(ctx, &obj, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
		t.Fatalf("the API server with Argo CD's ApplicationSet CRD refuses the example: %v", err)
	}

	// 30 clusters: 3 canaries on the 1.37 API server, 27 in prod on both;
	// RKE2, K3s and RKE1 (the last only at 1.26, which RKE1 runs), and
	// three Secrets without the stage label, which the selector leaves out.
	var clusters []appSetCluster
	for i := 1; i <= 30; i++ {
		c := appSetCluster{name: fmt.Sprintf("cluster-%02d", i), stage: "prod", provider: "rke2", cp: cp}
		switch {
		case i <= 3:
			c.stage = "canary"
		case i%2 == 0:
			c.cp, c.provider = old, "rke"
			c.migrate = i%4 == 0 // half of them migrate
		case i%3 == 0:
			c.provider = "k3s"
		}
		clusters = append(clusters, c)
	}
	byServer := map[string]*harness.ControlPlane{cp.Config.Host: cp, old.Config.Host: old}
	secret := func(name, server string, labels map[string]string) *corev1.Secret {
		labels["argocd.argoproj.io/secret-type"] = "cluster"
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: argoNS, Labels: labels},
			StringData: map[string]string{"name": name, "server": server, "config": `{"tlsClientConfig":{"insecure":true}}`}}
	}
	var secrets []*corev1.Secret
	for _, c := range clusters {
		labels := map[string]string{"aws-ccm-renderer.io/stage": c.stage, "provider.cattle.io": c.provider}
		if c.migrate {
			labels["aws-ccm-renderer.io/mode"] = "migrate"
		}
		secrets = append(secrets, secret(c.name, c.cp.Config.Host, labels))
	}
	for i := 1; i <= 3; i++ {
		secrets = append(secrets, secret(fmt.Sprintf("unstaged-%d", i), cp.Config.Host, map[string]string{"provider.cattle.io": "rke2"}))
	}
	for _, s := range secrets {
		if _, err := cp.Client.CoreV1().Secrets(argoNS).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// The ApplicationSet controller's generation.
	path := filepath.Join(t.TempDir(), "applicationset.yaml")
	testtools.WriteFile(t, path, example)
	out, errOut, err := testtools.Run(t, nil, argoTool(t, "ARGOCD_APPSET", "argocd-appset-generate"), "-kubeconfig", cp.Kubeconfig, "-namespace", argoNS, path)
	if err != nil {
		t.Fatalf("argocd-appset-generate: %v\n%s\n%s", err, out, errOut)
	}
	var apps []struct {
		Metadata struct {
			Name   string            `json:"name"`
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Spec struct {
			Destination struct{ Server, Namespace string } `json:"destination"`
			Source      argoSource                         `json:"source"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(out, &apps); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(apps) != len(clusters) {
		t.Fatalf("%d Applications for %d labelled clusters", len(apps), len(clusters))
	}
	want := map[string]appSetCluster{}
	for _, c := range clusters {
		want["aws-ccm-"+c.name] = c
	}
	s := startCMPServer(t)
	chartPkg, err := os.ReadFile(testtools.UpstreamChart(t, testtools.LatestChartVersion))
	if err != nil {
		t.Fatal(err)
	}
	picked := map[string]int{}
	// One Application's manifests on the 1.26 cluster, applied below.
	var applied, manifests string
	for _, a := range apps {
		c, ok := want[a.Metadata.Name]
		if !ok {
			t.Fatalf("Application %s is for no labelled cluster", a.Metadata.Name)
		}
		delete(want, a.Metadata.Name)
		if a.Metadata.Labels["stage"] != c.stage || a.Spec.Destination.Server != c.cp.Config.Host || a.Spec.Source.Plugin.Name != argoPluginName {
			t.Errorf("Application %s: stage %q, server %s, plugin %s; want %s, %s, %s", a.Metadata.Name, a.Metadata.Labels["stage"],
				a.Spec.Destination.Server, a.Spec.Source.Plugin.Name, c.stage, c.cp.Config.Host, argoPluginName)
		}
		// KUBE_VERSION is the destination's version, as the application
		// controller's cluster cache reads it from the API server.
		v, err := byServer[a.Spec.Destination.Server].Client.Discovery().ServerVersion()
		if err != nil {
			t.Fatal(err)
		}
		params := append(a.Spec.Source.Plugin.Parameters, argoParam{Name: "chart", String: str(argoChartPath)})
		r := s.run(t, "generate", argoApp{name: a.Metadata.Name, namespace: "kube-system", plugin: a.Spec.Source.Plugin.Name,
			params: params, files: map[string][]byte{argoChartPath: chartPkg}, kubeVersion: v.GitVersion})
		if r.Error != "" {
			t.Fatalf("%s (KUBE_VERSION %s): %s", a.Metadata.Name, v.GitVersion, r.Error)
		}
		objs, err := manifest.Split([]byte(strings.Join(r.Manifests, "\n---\n")))
		if err != nil {
			t.Fatal(err)
		}
		ccm, err := manifest.CCM(objs)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := releases.ForCluster(v.GitVersion)
		if err != nil {
			t.Fatal(err)
		}
		image := fmt.Sprint(manifest.Containers(ccm)[0]["image"])
		if !strings.HasSuffix(image, ":"+releases.Pin(r2.Latest)) {
			t.Errorf("%s on %s: image %s, want the CCM of its minor, %s", a.Metadata.Name, v.GitVersion, image, releases.Pin(r2.Latest))
		}
		migrating := slices.Contains(manifest.Args(ccm), "--enable-leader-migration=true")
		if migrating != c.migrate {
			t.Errorf("%s (mode label %v): the CCM's args %q", a.Metadata.Name, c.migrate, manifest.Args(ccm))
		}
		mode := "install"
		if migrating {
			mode = "migrate"
		}
		// The guard, as the example pins it, judging the CCM the plugin
		// picked in the Application's mode.
		inits, _ := manifest.Get(ccm.Doc, "spec", "template", "spec", "initContainers").([]any)
		if len(inits) != 1 {
			t.Fatalf("%s: init containers %v, want the guard alone", a.Metadata.Name, inits)
		}
		guard := inits[0].(map[string]any)
		wantArgs := []any{"--mode=" + mode, renderer.GuardCCMVersionFlag + "=" + r2.Latest}
		if guard["image"] != images.PinnedGuard || !reflect.DeepEqual(guard["args"], wantArgs) {
			t.Errorf("%s: the guard %v %v, want %s %v", a.Metadata.Name, guard["image"], guard["args"], images.PinnedGuard, wantArgs)
		}
		if !slices.ContainsFunc(objs, func(o manifest.Object) bool { return o.Kind == "Role" && strings.HasSuffix(o.Name, ":guard") }) {
			t.Errorf("%s: no guard Role among %d objects", a.Metadata.Name, len(objs))
		}
		picked[fmt.Sprintf("%s %s %s %s", c.stage, v.GitVersion, image[strings.LastIndexByte(image, ':')+1:], mode)]++
		if c.cp == old && applied == "" {
			applied, manifests = a.Metadata.Name, strings.Join(r.Manifests, "\n---\n")
		}
	}
	if len(want) != 0 {
		t.Errorf("no Application for %d labelled clusters", len(want))
	}
	t.Logf("one ApplicationSet, %d clusters: %v", len(apps), picked)

	// What Argo CD applies, marked by its application controller's own
	// tracking code (label: Argo CD 2's default; annotation), applied to
	// the 1.26 cluster: check, with no release to read, says who applied
	// the CCM.
	for method, by := range map[string]string{
		"label":      "installed by Argo CD (Application " + applied + ", by its tracking label app.kubernetes.io/instance)",
		"annotation": "installed by Argo CD (Application " + applied + "):",
	} {
		cmd := exec.Command(testtools.ArgoCDTrack(t), "-app", applied, "-namespace", "kube-system", "-method", method)
		cmd.Stdin = strings.NewReader(manifests)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		marked, err := cmd.Output()
		if err != nil {
			t.Fatalf("argocd-track -method %s: %v\n%s", method, err, stderr.String())
		}
		objs, err := harness.Decode(marked)
		if err != nil {
			t.Fatal(err)
		}
		if err := old.Apply(ctx, objs); err != nil {
			t.Fatal(err)
		}
		out, errOut, err := testtools.Run(t, testtools.HelmEnv(t), testtools.Renderer(t), "check", "--kubeconfig", old.Kubeconfig)
		if code := testtools.ExitCode(err); code > 1 || !strings.Contains(string(out), by) {
			t.Errorf("check after Argo CD's %s tracking: exit %d, want it to say %q:\n%s%s", method, code, by, out, errOut)
		}
	}
}
