package awsccm_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rancher/wrangler/v3/pkg/apply"
	"github.com/rancher/wrangler/v3/pkg/objectset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/awsccm"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	ccmreleases "github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// TestClusterManifest runs the new-cluster plan's before.cluster-manifest
// for RKE2 and K3s at the control plane's minor, as written: its render
// writes aws-ccm.yaml, its folder command installs that file in the
// server's manifests folder, and the folder is applied as the
// distribution's deploy controller applies it at the server's start (K3s's
// own; RKE2 runs the same controller). On nodes registered tainted
// uninitialized, the real AWS CCM of that minor then runs with the service
// account and args of the DaemonSet the controller applied, and
// initialises them. It asserts what the controller leaves (an Addon per
// file, every object of the file owned by it as wrangler records an owner),
// that a second apply of the same file changes no object, that the nodes
// wait tainted until the CCM runs, and that the CCM initialises them.
func TestClusterManifest(t *testing.T) {
	r, kube := controlPlaneRelease(t)
	addonCRD(t)
	for _, c := range []struct {
		distro distros.Distro
		// manifests is the folder the server applies: the manifests
		// folder of its server data directory, at each distribution's
		// default data directory (k3s-io/k3s pkg/server/server.go,
		// stageFiles; RKE2's docs, "Auto-Deploying Manifests").
		manifests string
	}{
		{distros.RKE2, "/var/lib/rancher/rke2/server/manifests"},
		{distros.K3s, "/var/lib/rancher/k3s/server/manifests"},
	} {
		t.Run(string(c.distro), func(t *testing.T) {
			start := time.Now()
			clusterManifest(t, r, c.distro, kube, c.manifests)
			t.Logf("%s: %s", c.distro, time.Since(start).Round(time.Millisecond))
		})
	}
}

// controlPlaneRelease is the AWS CCM release of the control plane's
// minor, and that minor as a plan's --kube-version (v1.<minor>.0).
func controlPlaneRelease(t *testing.T) (awsccm.Release, string) {
	t.Helper()
	v, err := cp.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	minor := strings.TrimSuffix(v.Minor, "+")
	i := slices.IndexFunc(releases, func(r awsccm.Release) bool { return fmt.Sprint(r.Minor()) == minor })
	if i < 0 {
		t.Fatalf("no AWS CCM release of the control plane's minor 1.%s among %v", minor, releases)
	}
	return releases[i], "v1." + minor + ".0"
}

func clusterManifest(t *testing.T, r awsccm.Release, distro distros.Distro, kube, manifests string) {
	ctx := context.Background()
	o := plan.DefaultOptions()
	o.Distro, o.From, o.KubeVersion = distro, plan.FromNew, kube
	p, err := plan.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	step := stepOf(t, p, "before.cluster-manifest")
	t.Logf("the %s plan at %s: CCM %s (binary %s)", distro, kube, p.CCM.Image, r.Version)

	// The workstation: the step's main command, as written, but for the
	// chart repository, which a loopback repository serving the same
	// chart version replaces. The plan's tag is the newest of the minor;
	// when the promotion list does not give its digest, the command reads
	// $CCM_DIGEST_<tag>, which the shell sets first as the plan's input
	// says, with crane, from a loopback registry in registry.k8s.io's place
	// (digestInput).
	work := t.TempDir()
	env := append(testtools.HelmEnv(t), "PATH="+strings.Join([]string{
		filepath.Dir(testtools.Renderer(t)), filepath.Dir(testtools.Crane(t)), os.Getenv("PATH")}, string(filepath.ListSeparator)))
	main := mainShell(t, step)
	repo := "--repo " + p.CCM.Repository
	if p.CCM.Repository == "" || strings.Count(main, repo) != 1 {
		t.Fatalf("before.cluster-manifest does not name the chart repository %q once: %s", p.CCM.Repository, main)
	}
	main = strings.Replace(main, repo, "--repo "+testtools.LoopbackChartRepoOf(t, p.CCM.ChartVersion), 1)
	_, file, ok := strings.Cut(main, " > ")
	if !ok || strings.ContainsAny(file, " /$") {
		t.Fatalf("before.cluster-manifest's main command writes no file of the workstation: %s", main)
	}
	assign, image := digestInput(t, p)
	cmd := testtools.Command(t, env, "sh", "-c", "set -e\n"+assign+"\n"+main)
	cmd.Dir = work
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s\n%s: %v\n%s", assign, main, err, out)
	}
	content, err := os.ReadFile(filepath.Join(work, file))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := harness.Decode(content)
	if err != nil {
		t.Fatal(err)
	}

	// The server: the folder command, without sudo, in a directory that
	// stands for the server's root.
	root := t.TempDir()
	target := installManifest(t, env, step, work, file, root)
	if filepath.Dir(target) != manifests {
		t.Errorf("before.cluster-manifest installs %s, not in %s's manifests folder %s", target, distro, manifests)
	}

	ns := registerDistro(t, string(distro))
	d := newDeployer(t, root, manifests)
	t.Cleanup(func() { d.remove(t) })
	forgetRBAC(t, objs)
	if applied := d.listFiles(t, true); !slices.Equal(applied, []string{target}) {
		t.Fatalf("the deploy controller applied %q, want %s", applied, target)
	}

	// The Addon, named after the file, and its objects.
	addon := d.addon(t, addonName(target))
	sum := sha256.Sum256(content)
	if src, _, _ := unstructured.NestedString(addon.Object, "spec", "source"); src != target {
		t.Errorf("Addon %s: spec.source %q, want %s", addon.GetName(), src, target)
	}
	if cs, _, _ := unstructured.NestedString(addon.Object, "spec", "checksum"); cs != hex.EncodeToString(sum[:]) {
		t.Errorf("Addon %s: spec.checksum %q, want the file's SHA-256 %x", addon.GetName(), cs, sum)
	}
	before := map[string]string{}
	var ds *unstructured.Unstructured
	for _, o := range objs {
		got, err := cp.Get(ctx, o)
		if err != nil {
			t.Fatalf("the deploy controller did not apply it: %v", err)
		}
		if got.GetNamespace() != o.GetNamespace() {
			t.Errorf("%s: applied in namespace %q, the file says %q", harness.ID(o), got.GetNamespace(), o.GetNamespace())
		}
		if owner, err := d.apply.FindOwner(got); err != nil || owner.(metav1.Object).GetUID() != addon.GetUID() {
			t.Errorf("%s: not owned by Addon kube-system/%s (%v; annotations %v)", harness.ID(got), addon.GetName(), err, got.GetAnnotations())
		}
		before[harness.ID(got)] = got.GetResourceVersion()
		if got.GetKind() == "DaemonSet" {
			ds = got
		}
	}
	if ds == nil {
		t.Fatalf("%s holds no DaemonSet", file)
	}
	if !slices.Contains(parseGVKs(addon.GetAnnotations()[gvksAnnotation]), ds.GroupVersionKind()) {
		t.Errorf("Addon %s: annotation %s %q does not list the DaemonSet's kind", addon.GetName(), gvksAnnotation, addon.GetAnnotations()[gvksAnnotation])
	}
	containers, _, _ := unstructured.NestedSlice(ds.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("DaemonSet %s has %d containers, want the CCM's", ds.GetName(), len(containers))
	}
	ccmContainer := containers[0].(map[string]any)
	if got := fmt.Sprint(ccmContainer["image"]); got != image {
		t.Errorf("DaemonSet %s runs %s, want %s", ds.GetName(), got, image)
	}
	t.Logf("the deploy controller applied %d objects owned by Addon kube-system/%s (source %s); the CCM image %s", len(objs), addon.GetName(), target, image)

	// Nothing has initialised the nodes: they wait for the CCM.
	for _, n := range ns {
		stillTainted(t, n.node.Name)
	}

	// Applied again, as at the next server start (every file, whatever its
	// checksum) and on the next pass over the folder (the checksum the
	// same: skipped), the file changes no object.
	if applied := d.listFiles(t, true); len(applied) != 1 {
		t.Fatalf("the deploy controller applied %q at the second start", applied)
	}
	if applied := d.listFiles(t, false); len(applied) != 0 {
		t.Errorf("the deploy controller applied %q again, though its checksum is the Addon's", applied)
	}
	for _, o := range objs {
		got, err := cp.Get(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if rv := got.GetResourceVersion(); rv != before[harness.ID(got)] {
			t.Errorf("%s: resourceVersion %s after the same file was applied again, was %s", harness.ID(got), rv, before[harness.ID(got)])
		}
	}

	// The CCM as the applied DaemonSet runs it: its service account, once
	// the authorizer answers as the applied RBAC says, and its args.
	account, _, _ := unstructured.NestedString(ds.Object, "spec", "template", "spec", "serviceAccountName")
	if ds.GetNamespace() != "kube-system" || account == "" {
		t.Fatalf("DaemonSet %s/%s runs as service account %q", ds.GetNamespace(), ds.GetName(), account)
	}
	user, groups := harness.ServiceAccountUser(ds.GetNamespace(), account)
	want, err := harness.Grants(rbac(t, content), user, groups)
	if err != nil {
		t.Fatal(err)
	}
	harness.WaitAccess(t, cp.Client, 30*time.Second, want)
	args, _, _ := unstructured.NestedStringSlice(ccmContainer, "args")
	c := runCCM(t, r, "the "+string(distro)+" plan's policy", policyOf(t, planActions(t, p)), account, args,
		awsccm.CloudConfig{Cluster: cluster, Network: network, URL: aws.URL}, trap)
	c.waitNodes(t, ns)
	for _, n := range ns {
		checkInitialised(t, r, n)
	}
	t.Logf("the AWS CCM %s, run as the applied DaemonSet says, initialised the %d %s nodes", r.Version, len(ns), distro)
	provisioningCheck(t, stepOf(t, p, "during.create"), ns)
}

// provisioningCheck runs the step's check for a cluster Rancher still
// provisions, as written but for its first line, which names the server's
// own kubectl: here the test's kubectl with the control plane's
// kubeconfig. It must show the Addon of the servers' file and every node
// with an aws:/// provider ID and no uninitialized taint.
func provisioningCheck(t *testing.T, step plan.Step, ns []node) {
	t.Helper()
	var shell string
	for _, c := range step.Checks {
		if c.Command != nil && strings.Contains(c.Command.Shell, "addons.k3s.cattle.io") {
			shell = c.Command.Shell
		}
	}
	first, rest, ok := strings.Cut(strings.TrimSpace(shell), "\n")
	if !ok || !strings.HasPrefix(first, `k="sudo `) {
		t.Fatalf("before.cluster-manifest has no check on the first server that sets k to its kubectl:\n%s", shell)
	}
	script := fmt.Sprintf("set -e\nk=%q\n%s", testtools.Kubectl(t)+" --kubeconfig "+cp.Kubeconfig, rest)
	out, errOut, err := testtools.Run(t, nil, "sh", "-c", script)
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, errOut)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "aws-cloud-controller-manager ") }) {
		t.Errorf("the provisioning check shows no Addon aws-cloud-controller-manager:\n%s", out)
	}
	for _, n := range ns {
		i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, n.node.Name+" ") })
		if f := strings.Fields(lines[max(i, 0)]); i < 0 || len(f) != 3 || !strings.HasPrefix(f[1], "aws:///") || strings.Contains(f[2], uninitializedTaint) {
			t.Errorf("the provisioning check's line for node %s: want its aws:/// provider ID and no %s taint:\n%s", n.node.Name, uninitializedTaint, out)
		}
	}
	t.Logf("the provisioning check, as written but for its kubectl:\n%s", out)
}

// digestInput returns the shell line that sets the plan's input for the
// digest of an image tag the promotion list does not give, as the input
// says (VAR=$(crane digest IMAGE)), with a loopback registry in
// registry.k8s.io's place that serves an image under that tag; and the
// image, pinned by the digest, that the render must then run. A plan whose
// tag the list gives has no such input: no line, and its pinned image.
func digestInput(t *testing.T, p *plan.Plan) (line, image string) {
	t.Helper()
	i := slices.IndexFunc(p.Inputs, func(in plan.Input) bool { return strings.HasPrefix(in.Name, "CCM_DIGEST_") })
	if i < 0 {
		return "", p.CCM.Image
	}
	in := p.Inputs[i]
	m := regexp.MustCompile(regexp.QuoteMeta(in.Name) + `=\$\(crane digest ([^ )]+)\)`).FindStringSubmatch(strings.Join(strings.Fields(in.Source), " "))
	if m == nil || m[1] != ccmreleases.ImageRepository+":"+p.CCM.ImageTag {
		t.Fatalf("input %s: %q has no crane digest of %s:%s", in.Name, in.Source, ccmreleases.ImageRepository, p.CCM.ImageTag)
	}
	local, digest := testtools.ServeImage(t, m[1])
	host, _, _ := strings.Cut(ccmreleases.ImageRepository, "/")
	return strings.Replace(m[0], host, local, 1), m[1] + "@" + digest
}

// installManifest runs the step's command for the servers' manifests
// folder (sudo install ... FILE PATH) without sudo, with PATH under root,
// and returns PATH as the server names it.
func installManifest(t *testing.T, env []string, step plan.Step, work, file, root string) string {
	t.Helper()
	for _, c := range step.Commands {
		if c.Kind != plan.KindNode {
			continue
		}
		argv := testtools.ShellWords(t, "sh", c.Shell)
		if len(argv) < 4 || argv[0] != "sudo" || argv[1] != "install" || argv[len(argv)-2] != file || !filepath.IsAbs(argv[len(argv)-1]) {
			t.Fatalf("not an install of %s into the server's folder: %s", file, c.Shell)
		}
		target := argv[len(argv)-1]
		args := append(slices.Clone(argv[2:len(argv)-1]), filepath.Join(root, target))
		cmd := testtools.Command(t, env, argv[1], args...)
		cmd.Dir = work
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", c.Shell, err, out)
		}
		return target
	}
	t.Fatalf("step %s has no command for the servers", step.ID)
	return ""
}

// registerDistro registers a distribution's fixture nodes named by their
// instances, tainted uninitialized as their kubelets register them on the
// external provider, and returns them.
func registerDistro(t *testing.T, distro string) []node {
	t.Helper()
	var ns []node
	for _, n := range ec2Named() {
		if n.distro == distro {
			ns = append(ns, n)
			register(t, n.node)
		}
	}
	if len(ns) == 0 {
		t.Fatalf("no %s fixture nodes", distro)
	}
	return ns
}

// forgetRBAC drops from appliedRBAC the objects the file holds too, which
// the test's cleanup deletes: the next applyRBAC then expects nothing of
// them.
func forgetRBAC(t *testing.T, objs []*unstructured.Unstructured) {
	t.Cleanup(func() {
		appliedRBAC = slices.DeleteFunc(appliedRBAC, func(a *unstructured.Unstructured) bool {
			return slices.ContainsFunc(objs, func(o *unstructured.Unstructured) bool { return harness.ID(o) == harness.ID(a) })
		})
	})
}

// The Addon resource of K3s: the record its deploy controller keeps of
// each manifest file it applies, and the owner of the file's objects.
// k3s-io/api k3s.cattle.io/v1/types.go (v0.2.1), Addon: a namespaced kind
// of group k3s.cattle.io, version v1, whose spec holds the file's path
// (source) and the SHA-256 of the content last applied (checksum); k3s-io/k3s
// pkg/crd/crds.go registers it with those two columns.
var addonGVR = schema.GroupVersionResource{Group: "k3s.cattle.io", Version: "v1", Resource: "addons"}

// gvksAnnotation is where the deploy controller keeps on an Addon the kinds
// it applied from the file, for the next apply to prune by (k3s-io/k3s
// pkg/deploy/controller.go, GVKAnnotation).
const gvksAnnotation = "addon.k3s.cattle.io/gvks"

// addonCRD creates the Addon resource definition; the cleanup removes it.
func addonCRD(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	str := map[string]any{"type": "string"}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": addonGVR.Resource + "." + addonGVR.Group},
		"spec": map[string]any{
			"group": addonGVR.Group,
			"scope": "Namespaced",
			"names": map[string]any{"kind": "Addon", "listKind": "AddonList", "plural": "addons", "singular": "addon"},
			"versions": []any{map[string]any{
				"name": addonGVR.Version, "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"spec": map[string]any{"type": "object", "properties": map[string]any{"source": str, "checksum": str}},
					},
				}},
				"additionalPrinterColumns": []any{
					map[string]any{"name": "Source", "type": "string", "jsonPath": ".spec.source"},
					map[string]any{"name": "Checksum", "type": "string", "jsonPath": ".spec.checksum"},
				},
			}},
		},
	}}
	if err := cp.Apply(ctx, []*unstructured.Unstructured{crd}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Remove(context.Background(), []*unstructured.Unstructured{crd}); err != nil {
			t.Error(err)
		}
	})
	if err := cp.WaitServed(ctx, addonGVR.GroupVersion().String(), addonGVR.Resource, 30*time.Second); err != nil {
		t.Fatal(err)
	}
}

// deployer applies a server's manifests folder as K3s's deploy controller
// does (k3s-io/k3s pkg/deploy/controller.go, master at 0301210f; RKE2 runs
// the same controller on its own folder), with wrangler's apply built as
// K3s builds it (apply.New with a client factory of the server's config,
// WithDynamicLookup):
//   - every file of the folder ending in .yaml, .yml or .json, but for
//     dotfiles, in the order of their paths;
//   - an Addon in kube-system named after the file's base name up to its
//     first dot, spec.source the file's path, created before the apply;
//   - the file's documents decoded as unstructured objects (a List's items
//     each), documents of only comments and separators left out;
//   - when the file's SHA-256 is the Addon's spec.checksum and the pass
//     compares checksums (every pass but the first after the server
//     starts), nothing applied (K3s skips, before that, a file whose
//     modification time it saw on the pass before; here the checksum
//     decides alone);
//   - otherwise applied with wrangler's apply, owned by the Addon (WithOwner)
//     and pruning by the kinds of the file and of the Addon's annotation
//     that the server serves (WithGVK); then the Addon's checksum and
//     annotation updated.
type deployer struct {
	root, folder string
	apply        apply.Apply
	addons       dynamic.ResourceInterface
}

func newDeployer(t *testing.T, root, folder string) *deployer {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &deployer{
		root: root, folder: folder,
		apply:  apply.New(cp.Client.Discovery(), apply.NewClientFactory(cp.Config)).WithDynamicLookup(),
		addons: dyn.Resource(addonGVR).Namespace(metav1.NamespaceSystem),
	}
}

// listFiles makes one pass over the folder: start is the pass at the
// server's start, which applies every file. It returns the paths of the
// files it applied, as the server names them.
func (d *deployer) listFiles(t *testing.T, start bool) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(d.root, d.folder))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range entries {
		n := e.Name()
		ext := strings.ToLower(filepath.Ext(n))
		if e.IsDir() || strings.HasPrefix(n, ".") || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
			continue
		}
		paths = append(paths, filepath.Join(d.folder, n))
	}
	sort.Strings(paths)
	var applied []string
	for _, p := range paths {
		if d.deploy(t, p, !start) {
			applied = append(applied, p)
		}
	}
	return applied
}

// deploy applies one file; it returns false when its checksum is the
// Addon's and compare is set.
func (d *deployer) deploy(t *testing.T, path string, compare bool) bool {
	t.Helper()
	ctx := context.Background()
	addon := d.addonOrNew(t, addonName(path))
	if err := unstructured.SetNestedField(addon.Object, path, "spec", "source"); err != nil {
		t.Fatal(err)
	}
	if addon.GetUID() == "" {
		created, err := d.addons.Create(ctx, addon, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		addon = created
	}
	content, err := os.ReadFile(filepath.Join(d.root, path))
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(content)
	sum := hex.EncodeToString(s[:])
	if old, _, _ := unstructured.NestedString(addon.Object, "spec", "checksum"); compare && old == sum {
		return false
	}
	objs, err := manifestObjects(content)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	set := objectset.NewObjectSet(objs...)
	gvks := append(set.GVKs(), parseGVKs(addon.GetAnnotations()[gvksAnnotation])...)
	if err := d.apply.WithOwner(addon).WithGVK(d.served(t, gvks)...).Apply(set); err != nil {
		t.Fatalf("applying %s: %v", path, err)
	}
	if err := unstructured.SetNestedField(addon.Object, sum, "spec", "checksum"); err != nil {
		t.Fatal(err)
	}
	ann := addon.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	var kinds []string
	for _, g := range set.GVKs() {
		kinds = append(kinds, g.String())
	}
	ann[gvksAnnotation] = strings.Join(kinds, ";")
	addon.SetAnnotations(ann)
	if _, err := d.addons.Update(ctx, addon, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return true
}

// remove deletes what the Addons applied, as the deploy controller does
// for a disabled file (an empty set applied with the Addon as owner and
// its kinds), and the Addons.
func (d *deployer) remove(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	list, err := d.addons.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Error(err)
		return
	}
	for i := range list.Items {
		a := &list.Items[i]
		gvks := d.served(t, parseGVKs(a.GetAnnotations()[gvksAnnotation]))
		if err := d.apply.WithOwner(a).WithGVK(gvks...).ApplyObjects(); err != nil {
			t.Errorf("deleting the objects of Addon %s: %v", a.GetName(), err)
		}
		if err := d.addons.Delete(ctx, a.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
		}
	}
}

// addon reads an Addon.
func (d *deployer) addon(t *testing.T, addonName string) *unstructured.Unstructured {
	t.Helper()
	a, err := d.addons.Get(context.Background(), addonName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("no Addon for the file: %v", err)
	}
	return a
}

// addonOrNew reads an Addon, or returns a new one, not yet created.
func (d *deployer) addonOrNew(t *testing.T, addonName string) *unstructured.Unstructured {
	t.Helper()
	a, err := d.addons.Get(context.Background(), addonName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		a = &unstructured.Unstructured{}
		a.SetGroupVersionKind(addonGVR.GroupVersion().WithKind("Addon"))
		a.SetNamespace(metav1.NamespaceSystem)
		a.SetName(addonName)
		return a
	}
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// served keeps the kinds the API server serves.
func (d *deployer) served(t *testing.T, gvks []schema.GroupVersionKind) []schema.GroupVersionKind {
	t.Helper()
	var out []schema.GroupVersionKind
	for _, g := range gvks {
		list, err := cp.Client.Discovery().ServerResourcesForGroupVersion(g.GroupVersion().String())
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Kind == g.Kind && !strings.Contains(r.Name, "/") }) &&
			!slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// addonName is the Addon's name of a manifest file: its base name up to
// the first dot.
func addonName(path string) string {
	n, _, _ := strings.Cut(filepath.Base(path), ".")
	return n
}

// parseGVKs reads the kinds of an Addon's annotation, as GroupVersionKind's
// String writes them ("apps/v1, Kind=DaemonSet"), separated by ";".
func parseGVKs(s string) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, part := range strings.Split(s, ";") {
		gv, kind, ok := strings.Cut(part, ", Kind=")
		if !ok {
			continue
		}
		g, v, ok := strings.Cut(gv, "/")
		if !ok {
			g, v = "", gv
		}
		out = append(out, schema.GroupVersionKind{Group: g, Version: v, Kind: kind})
	}
	return out
}

// manifestObjects decodes a manifest file's documents.
func manifestObjects(content []byte) ([]runtime.Object, error) {
	var out []runtime.Object
	rd := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(content)))
	for {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if onlyComments(doc) {
			continue
		}
		js, err := utilyaml.ToJSON(doc)
		if err != nil {
			return nil, err
		}
		obj, _, err := unstructured.UnstructuredJSONScheme.Decode(js, nil, nil)
		if err != nil {
			return nil, err
		}
		if l, ok := obj.(*unstructured.UnstructuredList); ok {
			for i := range l.Items {
				out = append(out, &l.Items[i])
			}
			continue
		}
		out = append(out, obj)
	}
}

// onlyComments tells a document of blank lines, comments and separators.
func onlyComments(doc []byte) bool {
	for _, l := range bytes.Split(doc, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if len(l) > 0 && !bytes.HasPrefix(l, []byte("#")) && !bytes.Equal(l, []byte("---")) {
			return false
		}
	}
	return true
}
