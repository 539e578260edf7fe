package e2e

import (
	"context"
	"errors"
	"io"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// access is the expectation that a service account may (allowed) or may
// not do a verb to a resource in kube-system, as the real authorizer
// answers.
func access(ns, sa, verb, resource, subresource string, allowed bool) harness.AccessExpectation {
	return harness.AccessExpectation{ServiceAccount: ns + "/" + sa, Verb: verb, Resource: resource, Subresource: subresource,
		Namespace: "kube-system", Allowed: allowed}
}

// TestRBAC: through the real RBAC authorizer, the CCM's service account may
// get and create service accounts and request their tokens after the
// renderer, and may not before it.
func TestRBAC(t *testing.T) {
	for _, c := range []struct {
		name     string
		renderer []string
		want     bool
	}{
		{"defaults", nil, false},
		{"rendered", []string{"--distro=rke2"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ns, name := install(t, "rbac-"+c.name, c.renderer)
			sa := name + "-sa"
			// The release's RBAC as a whole in the authorizer's view, which
			// takes each object a moment after Helm wrote it: get
			// serviceaccounts only after the renderer; create on
			// serviceaccounts and their tokens; nothing more than the CCM
			// needs (no delete, no secrets).
			harness.WaitAccess(t, cp.Client, 30*time.Second, []harness.AccessExpectation{
				access(ns, sa, "get", "serviceaccounts", "", c.want),
				access(ns, sa, "create", "serviceaccounts", "", true),
				access(ns, sa, "create", "serviceaccounts", "token", true),
				access(ns, sa, "delete", "serviceaccounts", "", false),
				access(ns, sa, "get", "secrets", "", false),
			})
		})
	}
}

// liveDaemonSet returns a DaemonSet's generation and its CCM container's args.
func liveDaemonSet(t *testing.T, ns, name string) (int64, []string) {
	t.Helper()
	ds, err := cp.Client.AppsV1().DaemonSets(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ds.Generation, ds.Spec.Template.Spec.Containers[0].Args
}

func hasArgPrefix(args []string, prefix string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, prefix) })
}

// releaseObjects lists the kinds and names in a release's manifest.
func releaseObjects(t *testing.T, ns, release string) []string {
	t.Helper()
	var objs []string
	for _, u := range objects(t, helm(t, "get", "manifest", release, "--namespace", ns)) {
		objs = append(objs, u.GetKind()+"/"+u.GetName())
	}
	sort.Strings(objs)
	return objs
}

// objects decodes the objects of a manifest stream.
func objects(t *testing.T, stream string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(stream), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatal(err)
		}
		if u.Object != nil {
			out = append(out, u)
		}
	}
}

// TestLifecycle walks a release through a migration: install, upgrade to
// --mode=migrate, back to --mode=install, roll back; and checks that an
// upgrade with unchanged options causes no rollout.
func TestLifecycle(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	ns, name := install(t, "life", []string{"--distro=rke2"})
	cm := renderer.LeaderMigrationConfigMapName(name)
	// The CCM a migration pins: the renderer refuses the chart's 1.35 in
	// migrate mode.
	set := "namespace=" + ns + ",nameOverride=" + name + ",clusterRoleName=" + name + ",serviceAccountName=" + name + "-sa" +
		",image.tag=" + releases.Tag(releases.LastInTreeMinor)
	upgrade := func(flags ...string) {
		helm(t, append([]string{"upgrade", name, chart, "--namespace", ns, "--set", set}, rendererArgs(t, flags...)...)...)
	}
	configMapExists := func() bool {
		_, err := cp.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), cm, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	installed := releaseObjects(t, ns, name)
	gen1, args := liveDaemonSet(t, ns, name)
	if hasArgPrefix(args, "--enable-leader-migration") || configMapExists() {
		t.Fatalf("install: leader migration present: %q", args)
	}

	upgrade("--distro=rke2", "--mode=migrate")
	gen2, args := liveDaemonSet(t, ns, name)
	if !slices.Contains(args, "--enable-leader-migration=true") || !slices.Contains(args, "--leader-migration-config="+renderer.LeaderMigrationConfigPath) || !configMapExists() {
		t.Fatalf("migrate: args %q, ConfigMap present %v", args, configMapExists())
	}
	if gen2 == gen1 {
		t.Error("migrate did not change the DaemonSet")
	}
	lease := renderer.MigrationLeaseRBACName(name)
	if got, want := releaseObjects(t, ns, name), append(slices.Clone(installed), "ConfigMap/"+cm, "Role/"+lease, "RoleBinding/"+lease); !sameSet(got, want) {
		t.Errorf("migrate: objects %v, want %v: the install's plus the ConfigMap and the lease Role and RoleBinding", got, want)
	}

	// The same options again: no rollout.
	upgrade("--distro=rke2", "--mode=migrate")
	if gen, _ := liveDaemonSet(t, ns, name); gen != gen2 {
		t.Errorf("an upgrade with unchanged options moved the generation from %d to %d", gen2, gen)
	}

	upgrade("--distro=rke2", "--mode=install")
	_, args = liveDaemonSet(t, ns, name)
	if hasArgPrefix(args, "--enable-leader-migration") || hasArgPrefix(args, "--leader-migration-config") || configMapExists() {
		t.Errorf("back to install: args %q, ConfigMap present %v", args, configMapExists())
	}
	if got := releaseObjects(t, ns, name); !slices.Equal(got, installed) {
		t.Errorf("back to install: objects %v, want %v", got, installed)
	}

	helm(t, "rollback", name, "--namespace", ns) // to the previous revision: migrate
	_, args = liveDaemonSet(t, ns, name)
	if !slices.Contains(args, "--enable-leader-migration=true") || !configMapExists() {
		t.Errorf("rollback: args %q, ConfigMap present %v", args, configMapExists())
	}
	if nodes := settle(t, ns, name); !slices.Equal(onFixture(nodes, "rke2"), controlPlaneNodes("rke2")) {
		t.Errorf("after the rollback: pods on %v", nodes)
	}
}

// sameSet reports whether two lists hold the same elements.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestServerAcceptsEveryVersion: the API server accepts every object the
// renderer writes for every chart version, distribution and mode (a
// server-side dry run: validation and admission, nothing stored).
func TestServerAcceptsEveryVersion(t *testing.T) {
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cp.Client.Discovery()))
	ctx := context.Background()
	for _, version := range testtools.ChartVersions {
		chart := testtools.UpstreamChart(t, version)
		for _, d := range distros.All {
			profile, _ := distros.RecordOf(d)
			for _, mode := range renderer.ModesOf(profile) {
				if version == "0.0.2" && mode == renderer.ModeMigrate {
					continue // refused: its CCM (v1.20) has no leader migration (integration/helm3 checks the refusal)
				}
				flags := []string{"--distro=" + string(d), "--mode=" + string(mode)}
				if mode == renderer.ModeMigrate {
					// The charts' CCMs from 1.27 on are refused in migrate
					// mode (integration/helm3 checks it): what the server
					// accepts is under test here.
					flags = append(flags, "--allow-version-skew")
				}
				out := helm(t, append([]string{"template", "ccm", chart, "--namespace", "kube-system"}, rendererArgs(t, flags...)...)...)
				n := 0
				for _, u := range objects(t, out) {
					gvk := u.GroupVersionKind()
					m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
					if err != nil {
						t.Fatalf("%s %s: %v", version, gvk, err)
					}
					var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
					if m.Scope.Name() == meta.RESTScopeNameNamespace {
						ri = dyn.Resource(m.Resource).Namespace(u.GetNamespace())
					}
					if _, err := ri.Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
						t.Errorf("chart %s --distro=%s --mode=%s: the API server rejects %s %s: %v", version, d, mode, u.GetKind(), u.GetName(), err)
					}
					n++
				}
				if n < 5 {
					t.Errorf("chart %s --distro=%s --mode=%s: only %d objects", version, d, mode, n)
				}
			}
		}
	}
}
