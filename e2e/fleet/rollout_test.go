package fleet

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/generated"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

var (
	fleetBundles = schema.GroupVersionResource{Group: "fleet.cattle.io", Version: "v1alpha1", Resource: "bundles"}
	fleetBDs     = schema.GroupVersionResource{Group: "fleet.cattle.io", Version: "v1alpha1", Resource: "bundledeployments"}
)

// rolloutNamespace holds the clusters of the rollout test, apart from the
// other tests' (a GitRepo's bundle targets its own namespace's clusters).
const rolloutNamespace = "fleet-rollout"

// rollout is one BundleDeployment as the rollout test reads it: the
// deployment its agent is to apply, the one the controller staged, the one
// the agent applied.
type rollout struct {
	deploymentID, staged, applied string
	ready                         bool
	tag                           string // the CCM's image tag of its options, as the controller templated it
}

// rollouts returns the bundle's BundleDeployments by cluster, and whether
// the bundle controller has reconciled the bundle's current generation and
// counts ready the clusters the agents reported ready, ready of them unless
// ready is -1 (else why not).
func rollouts(dyn dynamic.Interface, ready int) (map[string]rollout, string) {
	ctx := context.Background()
	b, err := dyn.Resource(fleetBundles).Namespace(rolloutNamespace).Get(ctx, bundleName, metav1.GetOptions{})
	if err != nil {
		return nil, err.Error()
	}
	list, err := dyn.Resource(fleetBDs).List(ctx, metav1.ListOptions{LabelSelector: "fleet.cattle.io/bundle-name=" + bundleName + ",fleet.cattle.io/bundle-namespace=" + rolloutNamespace})
	if err != nil {
		return nil, err.Error()
	}
	out := map[string]rollout{}
	for _, bd := range list.Items {
		var r rollout
		r.deploymentID, _, _ = unstructured.NestedString(bd.Object, "spec", "deploymentID")
		r.staged, _, _ = unstructured.NestedString(bd.Object, "spec", "stagedDeploymentID")
		r.applied, _, _ = unstructured.NestedString(bd.Object, "status", "appliedDeploymentID")
		r.ready, _, _ = unstructured.NestedBool(bd.Object, "status", "ready")
		r.tag, _, _ = unstructured.NestedString(bd.Object, "spec", "options", "helm", "values", "image", "tag")
		out[bd.GetLabels()["fleet.cattle.io/cluster"]] = r
	}
	observed, _, _ := unstructured.NestedInt64(b.Object, "status", "observedGeneration")
	if observed != b.GetGeneration() {
		return out, fmt.Sprintf("observed generation %d of %d", observed, b.GetGeneration())
	}
	if n, _, _ := unstructured.NestedInt64(b.Object, "status", "summary", "ready"); ready >= 0 && n != int64(ready) {
		return out, fmt.Sprintf("%d clusters ready, want %d", n, ready)
	}
	return out, ""
}

// waitRollout waits until the clusters' BundleDeployments are each in the
// state want says for its cluster (ok false: none), as the bundle
// controller leaves them once it counts ready clusters ready, and fails
// with what they are then.
func waitRollout(t *testing.T, dyn dynamic.Interface, what string, ready int, clusters []string, want func(cluster string, r rollout, ok bool) bool) map[string]rollout {
	t.Helper()
	var rs map[string]rollout
	harness.WaitForState(t, 60*time.Second, what, func() (bool, string) {
		var why string
		rs, why = rollouts(dyn, ready)
		var bad []string
		for _, c := range clusters {
			if r, ok := rs[c]; !want(c, r, ok) {
				bad = append(bad, fmt.Sprintf("%s %+v (exists: %v)", c, r, ok))
			}
		}
		if why != "" {
			bad = append([]string{why}, bad...)
		}
		return len(bad) == 0, strings.Join(bad, "; ")
	})
	return rs
}

// TestFleetRollout: the example bundle rolled out by Fleet v0.12.0's own
// controller, whose bundle controller stages BundleDeployments by the
// bundle's rollout partitions; the test plays each cluster's agent,
// reporting its BundleDeployment applied and ready. 30 clusters of three
// minors, two of them canaries, one bundle: on install the canaries get the
// bundle and the others nothing until one canary is ready, each with the
// CCM of its minor; a change then reaches one cluster at a time
// (maxUnavailable: 1), the canaries first, each once the one before is
// ready.
func TestFleetRollout(t *testing.T) {
	ctx := context.Background()
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	canaries := []string{"canary-1", "canary-2"}
	var prod []string
	for i := 1; i <= 28; i++ {
		prod = append(prod, fmt.Sprintf("prod-%02d", i))
	}
	all := append(slices.Clone(canaries), prod...)
	labels := map[string]map[string]string{}
	minor := map[string]int{}
	for i, c := range all {
		stage := "prod"
		if slices.Contains(canaries, c) {
			stage = "canary"
		}
		minor[c] = harness.Current.Minor - i%3
		labels[c] = map[string]string{providerLabel: "rke2", stageLabel: stage, generated.FleetMinorLabel: fmt.Sprintf("1.%d", minor[c])}
	}
	registerClusters(t, rolloutNamespace, labels)
	if err := cp.Apply(ctx, []*unstructured.Unstructured{{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": agentNamespace}}}}); err != nil {
		t.Fatal(err)
	}
	ctrl, err := cp.RunEnv("fleetcontroller", testtools.FleetController(t), []string{"FLEET_HEALTHPROBE_BIND_ADDRESS=0"},
		"--kubeconfig", cp.Kubeconfig, "--namespace", agentNamespace, "--disable-metrics")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctrl.Stop()
		if t.Failed() {
			t.Logf("the Fleet controller's log:\n%s", ctrl.Log())
		}
	})

	b, err := harness.Decode(applyIn(t, bundleCopy(t), rolloutNamespace))
	if err != nil || len(b) != 1 {
		t.Fatalf("the bundle: %v, %d objects", err, len(b))
	}
	if _, err := dyn.Resource(fleetBundles).Namespace(rolloutNamespace).Create(ctx, b[0], metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = dyn.Resource(fleetBundles).Namespace(rolloutNamespace).Delete(context.Background(), bundleName, metav1.DeleteOptions{})
	})

	// Install: the canaries, then the rest.
	// Deploying, with the CCM of the cluster's minor: one bundle, no file
	// per cluster.
	deploying := func(c string, r rollout, ok bool) bool {
		return ok && r.deploymentID != "" && r.deploymentID == r.staged && r.tag == releases.Pin(releases.Tag(minor[c]))
	}
	none := func(_ string, _ rollout, ok bool) bool { return !ok }
	waitRollout(t, dyn, "install: the canaries deploy, the prod clusters wait", 0, all, func(c string, r rollout, ok bool) bool {
		if slices.Contains(canaries, c) {
			return deploying(c, r, ok)
		}
		return none(c, r, ok)
	})
	report(t, dyn, canaries[0])
	first := waitRollout(t, dyn, "install: all canaries but one ready, the prod clusters deploy", 1, prod, deploying)
	for _, c := range append(prod, canaries[1]) {
		report(t, dyn, c)
	}
	first = waitRollout(t, dyn, "install: every cluster ready", len(all), all, deploying)

	// A change (a commit to the bundle's values).
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		bundle, err := dyn.Resource(fleetBundles).Namespace(rolloutNamespace).Get(ctx, bundleName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := unstructured.SetNestedField(bundle.Object, "2", "spec", "helm", "values", "podAnnotations", "example.com/revision"); err != nil {
			return err
		}
		_, err = dyn.Resource(fleetBundles).Namespace(rolloutNamespace).Update(ctx, bundle, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatalf("changing the bundle: %v", err)
	}
	// Each cluster's deployment differs (its CCM is its minor's).
	changed := func(c string, r rollout, ok bool) bool {
		return ok && r.deploymentID != first[c].deploymentID && r.deploymentID == r.staged
	}
	held := func(c string, r rollout, ok bool) bool { return ok && r.deploymentID == first[c].deploymentID }
	// One stage at a time, at most max of its clusters changing at once:
	// each round, exactly one more cluster of the stage gets the change,
	// the next stage none, until the agent reports it.
	var done []string
	for _, stage := range [][]string{canaries, prod} {
		for range stage {
			var picked []string
			harness.WaitForState(t, 60*time.Second, fmt.Sprintf("change: one more cluster than %q", done), func() (bool, string) {
				// (What Fleet counts ready varies here, -1: a cluster the
				// change has not reached is out of sync once staged. That
				// one more cluster got the change shows the controller
				// acted on the last report.)
				rs, why := rollouts(dyn, -1)
				picked = nil
				var bad []string
				for _, c := range all {
					r, ok := rs[c]
					switch {
					case slices.Contains(done, c):
						if !changed(c, r, ok) || r.applied != r.deploymentID {
							bad = append(bad, fmt.Sprintf("%s, done, %+v", c, r))
						}
					case changed(c, r, ok):
						picked = append(picked, c)
						if !slices.Contains(stage, c) {
							bad = append(bad, fmt.Sprintf("%s, of a later stage, got it", c))
						}
					case !held(c, r, ok):
						bad = append(bad, fmt.Sprintf("%s %+v (exists: %v)", c, r, ok))
					}
				}
				if why != "" {
					bad = append(bad, why)
				}
				if len(picked) != 1 {
					bad = append(bad, fmt.Sprintf("clusters that got it: %q, want one", picked))
				}
				return len(bad) == 0, strings.Join(bad, "; ")
			})
			t.Logf("change: %s gets it after %q", picked[0], done)
			report(t, dyn, picked[0])
			done = append(done, picked[0])
		}
	}
}

// report plays a cluster's Fleet agent: its BundleDeployment's status says
// the deployment it names is applied and ready.
func report(t *testing.T, dyn dynamic.Interface, cluster string) {
	t.Helper()
	ctx := context.Background()
	res := dyn.Resource(fleetBDs).Namespace(clusterNamespace(rolloutNamespace, cluster))
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		bd, err := res.Get(ctx, bundleName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		id, _, _ := unstructured.NestedString(bd.Object, "spec", "deploymentID")
		if err := unstructured.SetNestedMap(bd.Object, map[string]any{"appliedDeploymentID": id, "ready": true, "nonModified": true}, "status"); err != nil {
			return err
		}
		_, err = res.UpdateStatus(ctx, bd, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("reporting %s's BundleDeployment ready: %v", cluster, err)
	}
}
