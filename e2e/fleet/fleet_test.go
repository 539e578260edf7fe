package fleet

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/generated"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/images"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

const (
	bundleName = "aws-ccm"
	// fleetNamespace is where Rancher keeps its downstream clusters and
	// their GitRepos; agentNamespace is where Fleet's agent runs.
	fleetNamespace = "fleet-default"
	agentNamespace = "cattle-fleet-system"
	// The example's release.
	releaseNamespace = "kube-system"
	releaseName      = "aws-cloud-controller-manager"
	// providerLabel is the label Rancher puts on each Fleet cluster.
	providerLabel = "provider.cattle.io"
)

// A fleetCluster is a Fleet Cluster of the tests: its labels pick one
// distribution's customization, and its nodes are that distribution's
// fixture.
type fleetCluster struct {
	name    string
	distro  string            // the node fixture, testdata/nodes/<distro>.yaml
	labels  map[string]string // what Rancher (and the operator) labels it with
	dir     string            // the kustomize.dir Fleet should pick for it
	overlay distros.Distro    // the distribution of that directory's component
}

// tag is the CCM image tag the bundle should give a cluster it deploys to:
// the release of the minor its generated.FleetMinorLabel names, by digest
// where the promotion list gives one.
func (c fleetCluster) tag(t *testing.T) string {
	t.Helper()
	minor, ok := c.labels[generated.FleetMinorLabel]
	if !ok {
		t.Fatalf("%s has no minor label: the bundle deploys nothing there", c.name)
	}
	r, err := releases.ForCluster(minor)
	if err != nil {
		t.Fatal(err)
	}
	return releases.Pin(r.Latest)
}

// clusters: an RKE1, an RKE2 and a K3s cluster as Rancher labels them, and
// a cluster without Rancher's label (an imported kubeadm cluster, say). The
// customizations of examples/fleet/fleet.yaml pick rke, rke2 and k3s (each
// distribution whose record names its provider.cattle.io value); the others
// get the bundle's top-level kustomize.dir. The four are labelled with
// their Kubernetes minor, four different ones. A cluster without the minor
// label, one with no label at all and one whose label names a minor the
// release data does not serve get nothing (minor-not-served).
var clusters = []fleetCluster{
	{"rke1-cluster", "rke", map[string]string{providerLabel: "rke", generated.FleetMinorLabel: fmt.Sprintf("1.%d", releases.RKELastMinor)}, "kustomize/rke", distros.RKE},
	{"rke2-cluster", "rke2", map[string]string{providerLabel: "rke2", generated.FleetMinorLabel: fmt.Sprintf("1.%d", harness.Current.Minor-3)}, "kustomize/rke2", distros.RKE2},
	{"k3s-cluster", "k3s", map[string]string{providerLabel: "k3s", generated.FleetMinorLabel: fmt.Sprintf("1.%d", harness.Current.Minor)}, "kustomize/k3s", distros.K3s},
	{"kubeadm-cluster", "kubeadm", map[string]string{"env": "imported", generated.FleetMinorLabel: fmt.Sprintf("1.%d", harness.Current.Minor-1)}, "kustomize/auto", distros.Auto},
	{"unlabelled-minor", "kubeadm", map[string]string{"env": "imported"}, "", distros.Auto},
	{"bare-cluster", "kubeadm", nil, "", distros.Auto},
	{"future-minor", "rke2", map[string]string{providerLabel: "rke2", generated.FleetMinorLabel: fmt.Sprintf("1.%d", releases.LastMinor()+1)}, "", distros.RKE2},
	// Still on the in-tree provider: the install bundle skips them; the
	// canary is the first a staged migration moves (TestFleetStagedMigration).
	{"rke2-in-tree", "rke2", map[string]string{providerLabel: "rke2", generated.FleetMinorLabel: fmt.Sprintf("1.%d", releases.LastInTreeMinor)}, "", distros.RKE2},
	{"rke2-canary", "rke2", map[string]string{providerLabel: "rke2", generated.FleetMinorLabel: fmt.Sprintf("1.%d", releases.LastInTreeMinor), stageLabel: "canary"}, "", distros.RKE2},
}

// stageLabel is the label docs/fleet.md's staged migration selects the
// clusters of a stage by.
const stageLabel = "aws-ccm-renderer.io/stage"

// deployed are the clusters the install bundle deploys to: all but those
// whose minor label names a release with the in-tree provider.
func deployed() []fleetCluster {
	return slices.DeleteFunc(slices.Clone(clusters), func(c fleetCluster) bool { return c.dir == "" })
}

// fleet runs the Fleet CLI in dir with the test's environment.
func fleet(t *testing.T, dir string, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	env := append(testtools.HelmEnv(t), "HOME="+t.TempDir())
	start := time.Now()
	cmd := exec.Command(testtools.Fleet(t), args...)
	cmd.Dir, cmd.Env = dir, env
	testtools.OwnSession(cmd)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	stdout, stderr = o.Bytes(), e.Bytes()
	t.Logf("fleet %s: %v in %s", args[0], err, time.Since(start).Round(time.Millisecond))
	return stdout, stderr, err
}

// mustFleet is fleet that fails the test when the command fails.
func mustFleet(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	out, errOut, err := fleet(t, dir, args...)
	if err != nil {
		t.Fatalf("fleet %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// bundleCopy copies examples/fleet into a directory of the test, the way a
// user copies it into the Git repository Fleet watches, with fleet.yaml's
// helm.repo pointed at a chart repository of the test on loopback (the
// only change: `fleet apply` downloads the chart from the repository
// fleet.yaml names, as Fleet's gitjob does), and returns the directory.
func bundleCopy(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), bundleName)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(testtools.Root(), "examples", "fleet"))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "fleet.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	line := "  repo: " + upstream.ChartRepo + "\n"
	if strings.Count(string(b), line) != 1 {
		t.Fatalf("examples/fleet/fleet.yaml does not name the upstream repository once as %q:\n%s", line, b)
	}
	testtools.WriteFile(t, path, []byte(strings.Replace(string(b), line, "  repo: "+testtools.LoopbackChartRepo(t)+"\n", 1)))
	return dir
}

// gitRepoTargets is the targets file Fleet's GitRepo controller hands
// `fleet apply` for a GitRepo without targets, as docs/fleet.md's is: the
// cluster group "default", as a target and as the only target restriction.
// Mirrors newTargetsConfigMap and targetsOrDefault of Fleet v0.12.0
// (internal/cmd/controller/gitops/reconciler/targetsyaml.go), which are not
// exported.
const gitRepoTargets = `{"targets":[{"name":"default","clusterGroup":"default"}],"targetRestrictions":[{"name":"default","clusterGroup":"default"}]}`

// apply runs `fleet apply` on a bundle directory as Fleet's gitjob does for
// a GitRepo path, and returns the Bundle it writes.
func apply(t *testing.T, dir string) []byte { return applyIn(t, dir, fleetNamespace) }

// applyIn is apply for a GitRepo in namespace ns.
func applyIn(t *testing.T, dir, ns string) []byte {
	t.Helper()
	targets := filepath.Join(t.TempDir(), "targets.yaml")
	testtools.WriteFile(t, targets, []byte(gitRepoTargets))
	out := filepath.Join(t.TempDir(), "bundle.yaml")
	mustFleet(t, dir, "apply", "--namespace", ns, "--targets-file", targets, "--output", out, bundleName, ".")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// bundle is the part of a Bundle the tests read.
type bundle struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     struct {
		DefaultNamespace string `json:"defaultNamespace"`
		Helm             *struct {
			Repo        string `json:"repo"`
			Chart       string `json:"chart"`
			Version     string `json:"version"`
			ReleaseName string `json:"releaseName"`
		} `json:"helm"`
		Kustomize          *kustomizeOptions `json:"kustomize"`
		Targets            []bundleTarget    `json:"targets"`
		TargetRestrictions []bundleTarget    `json:"targetRestrictions"`
		Resources          []struct {
			Name     string `json:"name"`
			Content  string `json:"content"`
			Encoding string `json:"encoding"`
		} `json:"resources"`
	} `json:"spec"`
}

type kustomizeOptions struct {
	Dir string `json:"dir"`
}

type bundleTarget struct {
	Name            string                `json:"name"`
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector"`
	ClusterGroup    string                `json:"clusterGroup"`
	Kustomize       *kustomizeOptions     `json:"kustomize"`
	DoNotDeploy     bool                  `json:"doNotDeploy"`
}

// files returns the bundle's resources by name, decoded as Fleet's
// content.Decode does ("", "base64", "base64+gz").
func (b bundle) files(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, r := range b.Spec.Resources {
		data := []byte(r.Content)
		if strings.HasPrefix(r.Encoding, "base64") {
			var err error
			if data, err = base64.StdEncoding.DecodeString(r.Content); err != nil {
				t.Fatalf("resource %s: %v", r.Name, err)
			}
		}
		if strings.HasSuffix(r.Encoding, "+gz") {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("resource %s: %v", r.Name, err)
			}
			if data, err = io.ReadAll(zr); err != nil {
				t.Fatalf("resource %s: %v", r.Name, err)
			}
		}
		out[r.Name] = data
	}
	return out
}

// TestFleetApply: `fleet apply` turns examples/fleet into a Bundle whose
// targets are the two customizations, in order, then the GitRepo's default
// cluster group; which carries the chart of fleet.yaml, the kustomization
// of each distribution and the components it uses (install, and migrate
// for the switch docs/fleet.md describes), byte for byte as
// examples/fleet/overlays has them (internal/generated holds that copy to
// the repository's overlays/).
func TestFleetApply(t *testing.T) {
	var b bundle
	if err := yaml.Unmarshal(apply(t, bundleCopy(t)), &b); err != nil {
		t.Fatal(err)
	}
	if b.Metadata.Name != bundleName || b.Metadata.Namespace != fleetNamespace {
		t.Errorf("Bundle %s/%s, want %s/%s", b.Metadata.Namespace, b.Metadata.Name, fleetNamespace, bundleName)
	}
	s := b.Spec
	if s.DefaultNamespace != releaseNamespace {
		t.Errorf("defaultNamespace %q, want %s", s.DefaultNamespace, releaseNamespace)
	}
	if s.Helm == nil || s.Helm.Chart != upstream.ChartName || s.Helm.Version != testtools.LatestChartVersion || s.Helm.ReleaseName != releaseName {
		t.Errorf("helm %+v, want chart %s %s as release %s", s.Helm, upstream.ChartName, testtools.LatestChartVersion, releaseName)
	}
	if s.Kustomize == nil || s.Kustomize.Dir != "kustomize/auto" {
		t.Errorf("kustomize %+v, want dir kustomize/auto for the clusters no customization picks", s.Kustomize)
	}
	var got []string
	for _, tg := range s.Targets {
		got = append(got, describeTarget(tg))
	}
	inTree := metav1.LabelSelectorRequirement{Key: generated.FleetMinorLabel, Operator: metav1.LabelSelectorOpIn}
	for minor := releases.FirstMinor(); minor <= releases.LastInTreeMinor; minor++ {
		inTree.Values = append(inTree.Values, fmt.Sprintf("1.%d", minor))
	}
	served := metav1.LabelSelectorRequirement{Key: generated.FleetMinorLabel, Operator: metav1.LabelSelectorOpNotIn}
	for minor := releases.LastInTreeMinor + 1; minor <= releases.LastMinor(); minor++ {
		served.Values = append(served.Values, fmt.Sprintf("1.%d", minor))
	}
	want := []string{
		fmt.Sprintf("in-tree-provider: clusters labelled  and %v, nothing deployed", []metav1.LabelSelectorRequirement{inTree}),
		fmt.Sprintf("minor-not-served: clusters labelled  and %v, nothing deployed", []metav1.LabelSelectorRequirement{served}),
	}
	// A customization for each distribution whose record names Rancher's
	// provider.cattle.io value, in the records' order.
	var provided []string
	for _, p := range distros.Named(distros.Records()) {
		if p.RancherProvider != "" {
			want = append(want, fmt.Sprintf("%s: clusters labelled %s=%s, kustomize.dir kustomize/%s", p.Distro, providerLabel, p.RancherProvider, p.Distro))
			provided = append(provided, string(p.Distro))
		}
	}
	want = append(want, "default: cluster group default")
	if !slices.Equal(got, want) {
		t.Errorf("targets, in order:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
	if len(s.TargetRestrictions) != 1 || describeTarget(s.TargetRestrictions[0]) != "default: cluster group default" {
		t.Errorf("target restrictions %+v, want only the GitRepo's cluster group default", s.TargetRestrictions)
	}

	files := b.files(t)
	var names []string
	chartYAML := 0
	for name, data := range files {
		names = append(names, name)
		if strings.HasPrefix(name, ".chart/") && strings.HasSuffix(name, "/"+upstream.ChartName+"/Chart.yaml") {
			chartYAML++
			if !strings.Contains(string(data), "\nversion: "+testtools.LatestChartVersion+"\n") {
				t.Errorf("%s is not chart %s:\n%s", name, testtools.LatestChartVersion, data)
			}
		}
	}
	slices.Sort(names)
	if chartYAML != 1 {
		t.Errorf("%d charts in the bundle, want the one fleet.yaml names; resources %q", chartYAML, names)
	}
	overlays := os.DirFS(filepath.Join(testtools.Root(), "examples", "fleet", "overlays"))
	for _, distro := range append([]string{"auto"}, provided...) {
		k, ok := files["kustomize/"+distro+"/kustomization.yaml"]
		if !ok {
			t.Errorf("the bundle carries no kustomize/%s/kustomization.yaml; resources %q", distro, names)
			continue
		}
		if !strings.Contains(string(k), "- ../../overlays/"+distro+"/install\n") {
			t.Errorf("kustomize/%s/kustomization.yaml does not use the %s install component:\n%s", distro, distro, k)
		}
		profile, _ := distros.RecordOf(distros.Distro(distro))
		if m := files["kustomize/"+distro+"-migrate/kustomization.yaml"]; slices.Contains(renderer.ModesOf(profile), renderer.ModeMigrate) &&
			!strings.Contains(string(m), "- ../../overlays/"+distro+"/migrate\n") {
			t.Errorf("kustomize/%s-migrate/kustomization.yaml does not use the %s migrate component:\n%s", distro, distro, m)
		}
		for _, mode := range renderer.ModesOf(profile) {
			err := fs.WalkDir(overlays, distro+"/"+string(mode), func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				want, err := fs.ReadFile(overlays, path)
				if err != nil {
					return err
				}
				if got, ok := files["overlays/"+path]; !ok {
					t.Errorf("the bundle does not carry overlays/%s", path)
				} else if !bytes.Equal(got, want) {
					t.Errorf("the bundle's overlays/%s is not examples/fleet/overlays/%s", path, path)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

func describeTarget(tg bundleTarget) string {
	var parts []string
	if tg.ClusterSelector != nil {
		var labels []string
		for k, v := range tg.ClusterSelector.MatchLabels {
			labels = append(labels, k+"="+v)
		}
		slices.Sort(labels)
		sel := "clusters labelled " + strings.Join(labels, ",")
		if len(tg.ClusterSelector.MatchExpressions) > 0 {
			sel += fmt.Sprintf(" and %v", tg.ClusterSelector.MatchExpressions)
		}
		parts = append(parts, sel)
	}
	if tg.ClusterGroup != "" {
		parts = append(parts, "cluster group "+tg.ClusterGroup)
	}
	if tg.Kustomize != nil {
		parts = append(parts, "kustomize.dir "+tg.Kustomize.Dir)
	}
	if tg.DoNotDeploy {
		parts = append(parts, "nothing deployed")
	}
	return tg.Name + ": " + strings.Join(parts, ", ")
}

var clustersOnce sync.Once

// createClusters creates the Fleet clusters in fleet-default as Rancher
// registers them (a status namespace each, where their BundleDeployments
// go) and the cluster group "default" that selects them all, which the
// GitRepo's default target names.
func createClusters(t *testing.T) {
	t.Helper()
	clustersOnce.Do(func() {
		labels := map[string]map[string]string{}
		for _, c := range clusters {
			labels[c.name] = c.labels
		}
		registerClusters(t, fleetNamespace, labels)
	})
}

var fleetClusterR = schema.GroupVersionResource{Group: "fleet.cattle.io", Version: "v1alpha1", Resource: "clusters"}

// registerClusters creates in namespace ns the cluster group default (every
// cluster of ns) and a Fleet Cluster of each name with its labels, and
// writes in each one's status the namespace of its BundleDeployments, which
// it creates, as Fleet's cluster registration would.
func registerClusters(t *testing.T, ns string, labels map[string]map[string]string) {
	t.Helper()
	ctx := context.Background()
	objs := []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}},
		{Object: map[string]any{"apiVersion": "fleet.cattle.io/v1alpha1", "kind": "ClusterGroup",
			"metadata": map[string]any{"name": "default", "namespace": ns},
			"spec":     map[string]any{"selector": map[string]any{}}}},
	}
	for name, l := range labels {
		m := map[string]any{}
		for k, v := range l {
			m[k] = v
		}
		objs = append(objs, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "fleet.cattle.io/v1alpha1", "kind": "Cluster",
			"metadata": map[string]any{"name": name, "namespace": ns, "labels": m}}},
			&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": clusterNamespace(ns, name)}}})
	}
	if err := cp.Apply(ctx, objs); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	res := dyn.Resource(fleetClusterR).Namespace(ns)
	for name := range labels {
		status := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "fleet.cattle.io/v1alpha1", "kind": "Cluster",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"status":   map[string]any{"namespace": clusterNamespace(ns, name)}}}
		if _, err := res.ApplyStatus(ctx, name, status, metav1.ApplyOptions{FieldManager: "aws-ccm-e2e", Force: true}); err != nil {
			t.Fatalf("status of Cluster %s: %v", name, err)
		}
	}
}

// clusterNamespace is the namespace of a Fleet cluster's
// BundleDeployments.
func clusterNamespace(ns, cluster string) string { return "cluster-" + ns + "-" + cluster }

// deployment is what `fleet target` gives one cluster: its
// BundleDeployment with the bundle's Content, the input of `fleet deploy`.
type deployment struct {
	file string // Content and BundleDeployment, as fleet deploy reads them
	dir  string // the BundleDeployment's kustomize.dir
}

// target runs `fleet target` on a Bundle against the clusters in the API
// server (the Fleet controller's own targeting code) and returns the
// deployment of each cluster it picks, by cluster name.
func target(t *testing.T, bundleYAML []byte) map[string]deployment {
	t.Helper()
	createClusters(t)
	return targetIn(t, bundleYAML, fleetNamespace)
}

// targetIn is target for the clusters of namespace ns, registered before.
func targetIn(t *testing.T, bundleYAML []byte, ns string) map[string]deployment {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "bundle.yaml")
	testtools.WriteFile(t, path, bundleYAML)
	out := mustFleet(t, dir, "target", "--bundle-file", path, "--namespace", ns, "--kubeconfig", cp.Kubeconfig)
	objs, err := harness.Decode(out)
	if err != nil {
		t.Fatalf("fleet target's output: %v\n%s", err, out)
	}
	var content *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Content" {
			content = o
		}
	}
	if content == nil {
		t.Fatalf("fleet target printed no Content:\n%s", out)
	}
	got := map[string]deployment{}
	for _, o := range objs {
		if o.GetKind() != "BundleDeployment" {
			continue
		}
		cluster := o.GetLabels()["fleet.cattle.io/cluster"]
		if _, dup := got[cluster]; dup || cluster == "" {
			t.Fatalf("BundleDeployment %s: cluster %q (twice, or none)", o.GetName(), cluster)
		}
		kdir, _, _ := unstructured.NestedString(o.Object, "spec", "options", "kustomize", "dir")
		var file bytes.Buffer
		for _, doc := range []*unstructured.Unstructured{content, o} {
			b, err := yaml.Marshal(doc.Object)
			if err != nil {
				t.Fatal(err)
			}
			file.WriteString("---\n")
			file.Write(b)
		}
		path := filepath.Join(dir, cluster+".yaml")
		testtools.WriteFile(t, path, file.Bytes())
		got[cluster] = deployment{file: path, dir: kdir}
	}
	return got
}

// deploy runs `fleet deploy`, the Fleet agent's Helm deployer, for one
// cluster's BundleDeployment into the API server, as the agent on that
// cluster does; dryRun renders only (helmdeployer.Template).
func deploy(t *testing.T, d deployment, dryRun bool) (stdout, stderr []byte, err error) {
	t.Helper()
	args := []string{"deploy", "--input-file", d.file, "--agent-namespace", agentNamespace, "--kubeconfig", cp.Kubeconfig}
	if dryRun {
		args = append(args, "--dry-run")
	}
	return fleet(t, filepath.Dir(d.file), args...)
}

// fleetLabel and fleetAnnotation are what Fleet's deployer adds to every
// object of a bundle (desiredset.GetLabelsAndAnnotations): the object set's
// hash and ID.
const (
	fleetLabel      = "objectset.rio.cattle.io/hash"
	fleetAnnotation = "objectset.rio.cattle.io/id"
)

// deployedObjects reads what `fleet deploy` prints (the release's objects,
// as a YAML list), checks that Fleet marked each as its own, and returns
// them without Fleet's marks, as the renderer's objects to compare.
func deployedObjects(t *testing.T, out []byte) []manifest.Object {
	t.Helper()
	var list []map[string]any
	if err := yaml.Unmarshal(out, &list); err != nil {
		t.Fatalf("fleet deploy's output: %v\n%s", err, out)
	}
	var stream bytes.Buffer
	for _, o := range list {
		u := unstructured.Unstructured{Object: o}
		labels, annotations := u.GetLabels(), u.GetAnnotations()
		if labels[fleetLabel] == "" || annotations[fleetAnnotation] == "" {
			t.Errorf("%s %s lacks Fleet's label %s or annotation %s", u.GetKind(), u.GetName(), fleetLabel, fleetAnnotation)
		}
		delete(labels, fleetLabel)
		delete(annotations, fleetAnnotation)
		u.SetLabels(labels)
		u.SetAnnotations(annotations)
		if len(labels) == 0 {
			unstructured.RemoveNestedField(u.Object, "metadata", "labels")
		}
		if len(annotations) == 0 {
			unstructured.RemoveNestedField(u.Object, "metadata", "annotations")
		}
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		stream.WriteString("---\n")
		stream.Write(b)
	}
	objs, err := manifest.Split(stream.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// chartOutput is the example chart's plain output, as Helm renders it for
// the release Fleet installs.
func chartOutput(t *testing.T, extra ...string) []byte {
	t.Helper()
	args := append([]string{"template", releaseName, testtools.UpstreamChart(t, testtools.LatestChartVersion), "--namespace", releaseNamespace}, extra...)
	return testtools.MustRun(t, testtools.HelmEnv(t), testtools.Helm3(t), args...)
}

// helmRevision is the release's latest revision, as Helm stores it (the
// version label of its Secrets; Fleet keeps the last two).
// postRendered is the post-renderer's output for the chart's with the
// options the example's components were generated with: the distribution,
// the mode and the guard, pinned as the example pins it.
func postRendered(t *testing.T, chartOutput []byte, distro distros.Distro, mode renderer.Mode) []manifest.Object {
	t.Helper()
	o := renderer.DefaultOptions()
	o.Distro, o.Mode, o.GuardImage = distro, mode, images.PinnedGuard
	return testtools.PostRenderedWith(t, chartOutput, o)
}

// guardResolved returns objs with the guard of the CCM's DaemonSet
// judging the CCM's image tag where it reads it from its pod
// (--ccm-version=auto, as the install components run it: the tag is the
// cluster's, set by the bundle's values), which is what the post-renderer
// writes for that image. It fails unless the guard is there, pinned as the
// example pins it, and reads the tag from its pod.
func guardResolved(t *testing.T, objs []manifest.Object) []manifest.Object {
	t.Helper()
	ccm, err := manifest.CCM(objs)
	if err != nil {
		t.Fatal(err)
	}
	cs := manifest.Containers(ccm)
	inits, _ := manifest.Get(ccm.Doc, "spec", "template", "spec", "initContainers").([]any)
	if len(cs) != 1 || len(inits) != 1 || manifest.Get(inits[0].(map[string]any), "image") != images.PinnedGuard {
		t.Fatalf("the CCM's init containers %v, want the guard alone, %s", inits, images.PinnedGuard)
	}
	tag := renderer.ImageTag(fmt.Sprint(cs[0]["image"])) // the tag, without a digest
	args, _ := manifest.Get(inits[0].(map[string]any), "args").([]any)
	auto := renderer.GuardCCMVersionFlag + "=" + renderer.GuardAutoVersion
	i := slices.Index(args, any(auto))
	if i < 0 {
		t.Fatalf("the guard's args %v, want %s", args, auto)
	}
	args[i] = renderer.GuardCCMVersionFlag + "=" + tag
	return objs
}

func helmRevision(t *testing.T) int {
	t.Helper()
	secrets, err := cp.Client.CoreV1().Secrets(releaseNamespace).List(context.Background(),
		metav1.ListOptions{LabelSelector: "owner=helm,name=" + releaseName})
	if err != nil {
		t.Fatal(err)
	}
	latest := 0
	for _, s := range secrets.Items {
		v, err := strconv.Atoi(s.Labels["version"])
		if err != nil {
			t.Fatalf("Helm's Secret %s: version %q", s.Name, s.Labels["version"])
		}
		latest = max(latest, v)
	}
	return latest
}

// TestFleetDeploy: `fleet target` picks, for each cluster, the kustomize
// directory its labels select; `fleet deploy` installs (then upgrades) the
// release with it into the API server. Each time the objects mean what the
// renderer's output for that distribution means; the DaemonSet controller
// puts the CCM on exactly the control-plane nodes of the cluster's node
// fixture; the authorizer lets the CCM's account get service accounts and
// create tokens; a second deploy with nothing changed upgrades the release
// and rolls nothing out.
func TestFleetDeploy(t *testing.T) {
	deployments := target(t, apply(t, bundleCopy(t)))
	for _, c := range clusters {
		if _, ok := deployments[c.name]; ok != (c.dir != "") {
			t.Errorf("fleet target: a BundleDeployment for %s (labels %v): %v, want %v", c.name, c.labels, ok, c.dir != "")
		}
	}
	if len(deployments) != len(deployed()) {
		t.Fatalf("fleet target picked %d clusters, want the %d whose minor label the bundle serves", len(deployments), len(deployed()))
	}
	nodes := testtools.Fixtures(t)
	ctx := context.Background()
	tags := map[string]bool{}
	for _, c := range deployed() {
		tags[c.tag(t)] = true
	}
	if len(tags) != len(deployed()) {
		t.Fatalf("the clusters' labels pin %d image tags for %d clusters: the test needs one each", len(tags), len(deployed()))
	}
	for _, c := range deployed() {
		t.Run(c.name, func(t *testing.T) {
			// The chart's output with the image the cluster's label pins.
			plain := chartOutput(t, "--set", "image.tag="+c.tag(t))
			d, ok := deployments[c.name]
			if !ok {
				t.Fatalf("no BundleDeployment for %s", c.name)
			}
			if d.dir != c.dir {
				t.Fatalf("Fleet picked kustomize.dir %q for %s, want %s", d.dir, c.name, c.dir)
			}
			out, errOut, err := deploy(t, d, false)
			if err != nil {
				bd, _ := os.ReadFile(d.file)
				_, bdText, _ := strings.Cut(string(bd), "kind: BundleDeployment")
				t.Fatalf("fleet deploy: %v\n%s\nthe BundleDeployment:%s", err, errOut, bdText)
			}
			objs := deployedObjects(t, out)
			ccm, err := manifest.CCM(objs)
			if err != nil {
				t.Fatal(err)
			}
			if cs := manifest.Containers(ccm); len(cs) != 1 || !strings.HasSuffix(fmt.Sprint(cs[0]["image"]), ":"+c.tag(t)) {
				t.Errorf("%s (labels %v): the CCM's containers %v, want the image tag %s", c.name, c.labels, cs, c.tag(t))
			}
			testtools.CheckMeaning(t, objs, nodes, c.overlay, renderer.ModeInstall)
			testtools.SameAsRenderer(t, guardResolved(t, objs), postRendered(t, plain, c.overlay, renderer.ModeInstall), nodes)

			placed := harness.Settle(t, cp.Client, releaseNamespace, releaseName)
			want := harness.ControlPlaneNodes(fixtures[c.distro])
			got := harness.OnFixture(placed, fixtures[c.distro])
			if !slices.Equal(got, want) {
				t.Errorf("the CCM's pods on the %s fixture: %v, want exactly its control-plane nodes %v", c.distro, got, want)
			}
			var ids []string
			for _, o := range objs {
				ids = append(ids, o.ID())
			}
			t.Logf("%s: Fleet picked %s and deployed %s; the CCM's pods on the %s fixture: %v", c.name, d.dir, strings.Join(ids, ", "), c.distro, got)
			ds, err := cp.Client.AppsV1().DaemonSets(releaseNamespace).Get(ctx, releaseName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			account := releaseNamespace + "/" + ds.Spec.Template.Spec.ServiceAccountName
			var access []harness.AccessExpectation
			for _, p := range renderer.CCMServiceAccountPermissions {
				resource, sub, _ := strings.Cut(p.Resource, "/")
				access = append(access, harness.AccessExpectation{ServiceAccount: account, Verb: p.Verb, Resource: resource,
					Subresource: sub, Namespace: releaseNamespace, Allowed: true})
			}
			harness.WaitAccess(t, cp.Client, 30*time.Second, access)

			revision := helmRevision(t)
			if _, errOut, err := deploy(t, d, false); err != nil {
				t.Fatalf("fleet deploy, again: %v\n%s", err, errOut)
			}
			if got := helmRevision(t); got != revision+1 {
				t.Fatalf("the release's revision after the second deploy: %d, want %d (Fleet upgrades the release each time)", got, revision+1)
			}
			again := harness.Settle(t, cp.Client, releaseNamespace, releaseName)
			after, err := cp.Client.AppsV1().DaemonSets(releaseNamespace).Get(ctx, releaseName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if after.Generation != ds.Generation || !reflect.DeepEqual(after.Spec.Template, ds.Spec.Template) {
				t.Errorf("the second deploy with nothing changed rolled the DaemonSet out: generation %d -> %d", ds.Generation, after.Generation)
			}
			if !slices.Equal(again, placed) {
				t.Errorf("pods on %v after the second deploy, %v before", again, placed)
			}
		})
	}
}

// TestFleetNoWarningAtDeployTime: chart values that the renderer warns
// about in a post-render (args that turn cloud routes on and the service
// account credentials off) reach no cluster through the bundle: Fleet's
// deployer, rendering the BundleDeployment of each cluster, gives the CCM
// the safe values. The values do reach the chart: the image tag set beside
// them is the DaemonSet's.
func TestFleetNoWarningAtDeployTime(t *testing.T) {
	dir := bundleCopy(t)
	path := filepath.Join(dir, "fleet.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const tag = "v1.34.1"
	// The bundle's values: one tag for every cluster instead of the
	// generated per-minor line, and the args.
	text := regexp.MustCompile(`(?m)^      tag: '\$\{.*$`).ReplaceAllString(string(b), "      tag: "+tag)
	args := "    args:\n    - --v=2\n    - --cloud-provider=aws\n" +
		"    - --configure-cloud-routes=true\n    - --use-service-account-credentials=false\n"
	line := "  values:\n"
	if !strings.Contains(text, "      tag: "+tag+"\n") || !strings.Contains(text, line) {
		t.Fatalf("fleet.yaml has no values.image.tag line to replace:\n%s", b)
	}
	testtools.WriteFile(t, path, []byte(strings.Replace(text, line, line+args, 1)))
	deployments := target(t, apply(t, dir))
	for _, c := range deployed() {
		out, errOut, err := deploy(t, deployments[c.name], true)
		if err != nil {
			t.Fatalf("fleet deploy --dry-run for %s: %v\n%s", c.name, err, errOut)
		}
		ccm, err := manifest.CCM(deployedObjects(t, out))
		if err != nil {
			t.Fatal(err)
		}
		if cs := manifest.Containers(ccm); len(cs) != 1 || !strings.HasSuffix(fmt.Sprint(cs[0]["image"]), ":"+tag) {
			t.Fatalf("%s: the CCM's containers %v do not have the values' image tag %s: the values did not reach the chart", c.name, cs, tag)
		}
		args := manifest.Args(ccm)
		for flag, want := range map[string]string{"configure-cloud-routes": "false", "use-service-account-credentials": "true"} {
			if got, _ := manifest.Flag(args, flag); got != want {
				t.Errorf("%s: --%s=%s, want %s; args %q", c.name, flag, got, want, args)
			}
		}
	}
}

// TestFleetMigrateOtherMinor: the migration docs/fleet.md describes (the
// distribution's kustomization switched to the migrate component, which
// pins the CCM of the minor it was generated for) on a cluster of another
// minor. Fleet deploys it without a word: nothing in the bundle can see the
// cluster's version. `aws-ccm-renderer check` on the cluster is where it
// fails, naming the skew.
func TestFleetMigrateOtherMinor(t *testing.T) {
	dir := bundleCopy(t)
	kpath := filepath.Join(dir, "kustomize", "rke", "kustomization.yaml")
	k, err := os.ReadFile(kpath)
	if err != nil {
		t.Fatal(err)
	}
	install := "- ../../overlays/rke/install\n"
	if !strings.Contains(string(k), install) {
		t.Fatalf("kustomize/rke does not use the rke install component:\n%s", k)
	}
	testtools.WriteFile(t, kpath, []byte(strings.Replace(string(k), install, "- ../../overlays/rke/migrate\n", 1)))

	d := target(t, apply(t, dir))["rke1-cluster"]
	out, errOut, err := deploy(t, d, false)
	if err != nil {
		t.Fatalf("fleet deploy of the migrate bundle: %v\n%s", err, errOut)
	}
	tag := releases.Tag(releases.LastInTreeMinor)
	objs := deployedObjects(t, out)
	testtools.CheckMeaning(t, objs, testtools.Fixtures(t), distros.RKE, renderer.ModeMigrate)
	pinned := chartOutput(t, "--set", "image.tag="+releases.Pin(tag))
	testtools.SameAsRenderer(t, objs, postRendered(t, pinned, distros.RKE, renderer.ModeMigrate), testtools.Fixtures(t))
	placed := harness.Settle(t, cp.Client, releaseNamespace, releaseName)
	if got, want := harness.OnFixture(placed, fixtures["rke"]), harness.ControlPlaneNodes(fixtures["rke"]); !slices.Equal(got, want) {
		t.Errorf("the migrating CCM's pods on the rke fixture: %v, want %v", got, want)
	}

	version, err := cp.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	res, checkErr, err := testtools.Run(t, testtools.HelmEnv(t), testtools.Renderer(t), "check", "--kubeconfig", cp.Kubeconfig)
	if code := testtools.ExitCode(err); code != 1 {
		t.Fatalf("check on the cluster: exit %d, want 1 (problems found)\n%s%s", code, res, checkErr)
	}
	skew := fmt.Sprintf("CCM %s is %d minors older than the API server %s", tag, harness.Current.Minor-releases.LastInTreeMinor, version.GitVersion)
	noInTree := fmt.Sprintf("Kubernetes %s has no in-tree AWS provider (removed in 1.27)", version.GitVersion)
	var shown []string
	for _, line := range strings.Split(string(res), "\n") {
		if strings.Contains(line, skew) || strings.Contains(line, noInTree) {
			shown = append(shown, line)
		}
	}
	if len(shown) != 2 {
		t.Fatalf("check does not say both %q and %q:\n%s", skew, noInTree, res)
	}
	t.Logf("what Fleet's user sees from check:\n%s", strings.Join(shown, "\n"))
	// check reads what Fleet applied, with no release of its own named,
	// and says so from the marks Fleet's deployer left.
	if by := "installed by Fleet (Helm release " + releaseNamespace + "/" + releaseName + ")"; !strings.Contains(string(res), by) {
		t.Errorf("check does not say %q:\n%s", by, res)
	}
	// docs/fleet.md shows these lines as this test sees them.
	doc, err := os.ReadFile(filepath.Join(testtools.Root(), "docs", "fleet.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "(1.26's migrate bundle on a 1.37 cluster):\n\n```\n")
	block, _, closed := strings.Cut(after, "```")
	if !ok || !closed {
		t.Fatal("docs/fleet.md has no fenced block after \"(1.26's migrate bundle on a 1.37 cluster):\"")
	}
	if got, want := strings.TrimSpace(block), strings.TrimSpace(strings.Join(shown, "\n")); got != want {
		t.Errorf("docs/fleet.md shows check's lines as\n%s\nthe test sees\n%s", got, want)
	}
}

// TestFleetFailsOnOtherNames: with chart values that rename the CCM's
// objects (nameOverride), the component's patches find no DaemonSet and
// Fleet's deployer fails instead of installing the chart unpatched: the
// error the agent puts on the BundleDeployment, and nothing on stdout.
func TestFleetFailsOnOtherNames(t *testing.T) {
	dir := bundleCopy(t)
	path := filepath.Join(dir, "fleet.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	line := "\n  values:\n"
	if !bytes.Contains(b, []byte(line)) {
		t.Fatalf("fleet.yaml has no helm.values:\n%s", b)
	}
	testtools.WriteFile(t, path, []byte(strings.Replace(string(b), line, line+"    nameOverride: ccm\n", 1)))
	d := target(t, apply(t, dir))["rke2-cluster"]
	before := helmRevision(t)
	out, errOut, err := deploy(t, d, false)
	if err == nil || len(out) != 0 {
		t.Fatalf("fleet deploy of a renamed chart: %v, stdout:\n%s", err, out)
	}
	want := `no matches for Id DaemonSet.v1.apps/aws-cloud-controller-manager.kube-system`
	if !strings.Contains(string(errOut), want) {
		t.Fatalf("fleet deploy's error does not say %q:\n%s", want, errOut)
	}
	if got := helmRevision(t); got != before {
		t.Errorf("the release went from revision %d to %d on a failed deploy", before, got)
	}
	t.Logf("what Fleet says:\n%s", lastLine(errOut))
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// TestFleetStagedMigration: the staged migration of docs/fleet.md. Its
// customization, added before in-tree-provider as the doc says, gives the
// RKE2 canary on 1.26 the migrate component, whose deploy is the
// renderer's migrate output for the CCM of 1.26; the other 1.26 cluster
// still gets nothing, and every other cluster what the install bundle
// gives it.
func TestFleetStagedMigration(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testtools.Root(), "docs", "fleet.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "<!-- fleet: staged migration -->\n```yaml\n")
	snippet, _, ok2 := strings.Cut(after, "```\n")
	if !ok || !ok2 {
		t.Fatal("docs/fleet.md has no staged migration snippet")
	}
	dir := bundleCopy(t)
	path := filepath.Join(dir, "fleet.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const first = "  - name: in-tree-provider\n"
	if !strings.Contains(string(b), first) {
		t.Fatalf("fleet.yaml has no in-tree-provider customization:\n%s", b)
	}
	testtools.WriteFile(t, path, []byte(strings.Replace(string(b), first, snippet+first, 1)))
	deployments := target(t, apply(t, dir))
	for _, c := range clusters {
		d, ok := deployments[c.name]
		want := c.dir
		if c.name == "rke2-canary" {
			want = "kustomize/rke2-migrate"
		}
		if ok != (want != "") || d.dir != want {
			t.Errorf("%s (labels %v): deployed %v with kustomize.dir %q; want %q", c.name, c.labels, ok, d.dir, want)
		}
	}
	tag := releases.Pin(releases.Tag(releases.LastInTreeMinor))
	out, errOut, err := deploy(t, deployments["rke2-canary"], true)
	if err != nil {
		t.Fatalf("fleet deploy --dry-run for the canary: %v\n%s", err, errOut)
	}
	objs := deployedObjects(t, out)
	nodes := testtools.Fixtures(t)
	testtools.CheckMeaning(t, objs, nodes, distros.RKE2, renderer.ModeMigrate)
	testtools.SameAsRenderer(t, objs, postRendered(t, chartOutput(t, "--set", "image.tag="+tag), distros.RKE2, renderer.ModeMigrate), nodes)
	t.Logf("the canary gets %s with the CCM %s; rke2-in-tree nothing; %d clusters the install component", deployments["rke2-canary"].dir, tag, len(deployed()))
}
