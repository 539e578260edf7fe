package chartops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/postrender"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/diff"
)

// Helm's ownership metadata, which it puts on every object of a release.
const (
	helmManagedByLabel        = "app.kubernetes.io/managed-by"
	helmReleaseNameAnnotation = "meta.helm.sh/release-name"
	helmReleaseNSAnnotation   = "meta.helm.sh/release-namespace"
)

// Compare is what diff compares.
type Compare int

// The comparisons.
const (
	// ChartOutput compares the chart's own output with the patched one.
	ChartOutput Compare = iota
	// Deployed compares the release's deployed manifest with what the
	// upgrade would deploy, and finds the objects the cluster has changed.
	Deployed
	// Live compares the cluster's objects with what the upgrade would
	// make of them.
	Live
)

// Diff is a diff as its flags say: the upgrade it compares with, and how
// many lines of context (-1: whole objects).
type Diff struct {
	Upgrade
	Compare Compare
	Context int
}

// DiffResult is what a diff found.
type DiffResult struct {
	Changes []diff.Change
	Summary diff.Summary
	// What names the two sides: "release ccm revision 3 → upgrade".
	What string
}

// Diff compares the chart's output with the patched output, the release
// with the upgrade (Deployed), or the cluster's objects with what the
// upgrade would make of them (Live). The objects the cluster has changed
// since the release (drift) are counted, and are changes of their own but
// with Live, where they are in the diff already.
func (c *Client) Diff(ctx context.Context, ch *chart.Chart, vals map[string]any, pr postrender.PostRenderer, d Diff) (*DiffResult, error) {
	if d.Compare == ChartOutput {
		return c.chartDiff(ctx, ch, vals, pr, d)
	}
	c.Progress.Begin(fmt.Sprintf("comparing with release %s in namespace %s (server-side dry run)", d.Release, d.Namespace))
	res, drift, err := c.clusterDiff(ctx, ch, vals, pr, d)
	c.Progress.End(err)
	if err != nil {
		return nil, err
	}
	res.Summary.Drifted = len(drift)
	if d.Compare != Live {
		res.Changes = append(res.Changes, drift...)
	}
	return res, nil
}

// chartDiff compares the chart's own output with the patched output.
func (c *Client) chartDiff(ctx context.Context, ch *chart.Chart, vals map[string]any, pr postrender.PostRenderer, d Diff) (*DiffResult, error) {
	t := Template{Release: d.Release, Namespace: d.Namespace, KubeVersion: d.KubeVersion}
	plain, err := c.render(ctx, ch, vals, nil, t)
	if err != nil {
		return nil, err
	}
	patched, err := c.render(ctx, ch, vals, pr, t)
	if err != nil {
		return nil, err
	}
	name := ch.Metadata.Name + "-" + ch.Metadata.Version
	changes, sum, err := diff.CompareStreams(name+"'s output", manifestOf(plain), "the patched output", manifestOf(patched), d.Namespace, d.Context)
	if err != nil {
		return nil, err
	}
	return &DiffResult{Changes: changes, Summary: sum, What: name + "'s output → patched by aws-ccm-renderer"}, nil
}

// clusterDiff compares with the cluster: the release's manifest (or, with
// Live, the cluster's objects) with what the upgrade would make, and finds
// the objects changed outside Helm.
func (c *Client) clusterDiff(ctx context.Context, ch *chart.Chart, vals map[string]any, pr postrender.PostRenderer, d Diff) (*DiffResult, []diff.Change, error) {
	rel, err := action.NewGet(c.Config).Run(d.Release)
	uninstalled := false
	var failed *release.Release // the last revision, when it failed
	switch {
	case errors.Is(err, driver.ErrReleaseNotFound):
		rel = nil
	case err != nil:
		return nil, nil, fmt.Errorf("release %s in namespace %s: %w", d.Release, d.Namespace, err)
	case rel.Info != nil && rel.Info.Status == release.StatusUninstalled:
		// Uninstalled with its history kept: gone, as for upgrade
		// --install.
		rel, uninstalled = nil, true
	case rel.Info != nil && rel.Info.Status == release.StatusFailed:
		// The last upgrade failed: an upgrade now patches from the
		// deployed revision, as Helm's does, and that is what the
		// cluster was last given successfully.
		if dep, derr := c.Config.Releases.Deployed(d.Release); derr == nil {
			failed = rel
			rel = dep
		}
	}
	res := &DiffResult{}
	var next *release.Release
	if rel == nil {
		if err := c.OwnedElsewhere(d.Release, d.Namespace); err != nil {
			return nil, nil, err
		}
	}
	if rel == nil {
		// Nothing deployed yet: everything an install would create.
		inst := c.newInstall(pr, d.Install)
		inst.DryRun, inst.DryRunOption, inst.ClientOnly, inst.Wait, inst.Atomic = true, "server", false, false, false
		inst.Replace = uninstalled
		next, err = inst.RunWithContext(ctx, ch, vals)
		res.What = fmt.Sprintf("no release %s in namespace %s → install", d.Release, d.Namespace)
	} else {
		up := c.newUpgrade(pr, d.Upgrade)
		up.DryRun, up.DryRunOption, up.Wait, up.Atomic = true, "server", false, false
		next, err = up.RunWithContext(ctx, d.Release, ch, vals)
		res.What = fmt.Sprintf("release %s revision %d → upgrade", rel.Name, rel.Version)
		if failed != nil {
			res.What = fmt.Sprintf("release %s revision %d, the deployed one; revision %d failed → upgrade", rel.Name, rel.Version, failed.Version)
		}
	}
	if err != nil {
		return nil, nil, Classify(err)
	}
	lc, err := c.newLiveClient(d.Namespace)
	if err != nil {
		return nil, nil, err
	}
	var original kube.ResourceList
	var drift []diff.Change
	if rel != nil {
		if original, err = lc.build(rel.Manifest); err != nil {
			return nil, nil, err
		}
		if drift, err = lc.drift(original, rel.Name, rel.Namespace, c.Progress); err != nil {
			return nil, nil, err
		}
	}
	if d.Compare != Live {
		fromText := ""
		if rel != nil {
			fromText = manifestOf(rel)
		}
		res.Changes, res.Summary, err = diff.CompareStreams("the release's manifest", fromText, "the upgrade's manifest", manifestOf(next), d.Namespace, d.Context)
		if err != nil {
			return nil, nil, err
		}
		return res, drift, nil
	}
	target, err := lc.build(next.Manifest)
	if err != nil {
		return nil, nil, err
	}
	from, to, err := lc.afterUpgrade(original, target, d.Release, d.Namespace)
	if err != nil {
		return nil, nil, err
	}
	if rel == nil {
		res.What = fmt.Sprintf("the cluster's objects → after installing %s", d.Release)
	} else {
		res.What = fmt.Sprintf("the cluster's objects → after upgrading %s (revision %d)", rel.Name, rel.Version)
	}
	res.Changes, res.Summary = diff.Compare(from, to, d.Context)
	return res, drift, nil
}

// liveClient reads and dry-runs the cluster's objects with Helm's kube
// client.
type liveClient struct {
	kc        *kube.Client
	namespace string
}

func (c *Client) newLiveClient(namespace string) (*liveClient, error) {
	var kc *kube.Client
	switch k := c.Config.KubeClient.(type) {
	case *kube.Client:
		kc = k
	case *readiness:
		kc = k.Client
	default:
		return nil, fmt.Errorf("the Helm SDK's kube client is a %T", c.Config.KubeClient)
	}
	return &liveClient{kc: kc, namespace: namespace}, nil
}

func (lc *liveClient) build(manifest string) (kube.ResourceList, error) {
	list, err := lc.kc.Build(strings.NewReader(manifest), false)
	if err != nil {
		return nil, Classify(fmt.Errorf("reading the manifests with the cluster's API: %w", err))
	}
	return list, nil
}

func helper(info *resource.Info) *resource.Helper {
	return resource.NewHelper(info.Client, info.Mapping).WithFieldManager("aws-ccm-renderer")
}

// get returns the cluster's copy of an object, or nil when there is none.
func (lc *liveClient) get(info *resource.Info) (*unstructured.Unstructured, error) {
	obj, err := helper(info).Get(info.Namespace, info.Name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, clusterError(info, "reading", err)
	}
	return toUnstructured(obj)
}

func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}

func clusterError(info *resource.Info, doing string, err error) error {
	return Classify(fmt.Errorf("%s %s %s/%s: %w", doing, info.Mapping.GroupVersionKind.Kind, info.Namespace, info.Name, err))
}

// owned returns a copy of a release's object with the ownership metadata
// Helm puts on it when it installs or upgrades.
func owned(info *resource.Info, releaseName, releaseNS string) (*unstructured.Unstructured, error) {
	u, err := toUnstructured(info.Object)
	if err != nil {
		return nil, err
	}
	u = u.DeepCopy()
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[helmManagedByLabel] = "Helm"
	u.SetLabels(labels)
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[helmReleaseNameAnnotation], ann[helmReleaseNSAnnotation] = releaseName, releaseNS
	u.SetAnnotations(ann)
	return u, nil
}

// drift compares each object of the release with the cluster's copy: the
// release's object as the API server would store it now (a server-side
// dry-run replace, so defaults fill in the same way) with the cluster's.
// What differs was changed outside Helm, e.g. by kubectl edit. An API
// server that refuses the dry run (no update permission) gets a warning,
// not an error: the rest of the diff needs only reads.
func (lc *liveClient) drift(original kube.ResourceList, releaseName, releaseNS string, errOut io.Writer) ([]diff.Change, error) {
	var out []diff.Change
	for _, info := range original {
		live, err := lc.get(info)
		if err != nil {
			return nil, err
		}
		if live == nil {
			o, err := lc.object(info.Object)
			if err != nil {
				return nil, err
			}
			c := diff.Whole(o, diff.Drifted)
			c.Diff = "@@ (deleted from the cluster) @@\n" + c.Diff
			out = append(out, c)
			continue
		}
		want, err := owned(info, releaseName, releaseNS)
		if err != nil {
			return nil, err
		}
		want.SetResourceVersion(live.GetResourceVersion())
		stored, err := helper(info).DryRun(true).Replace(info.Namespace, info.Name, true, want)
		if apierrors.IsForbidden(err) {
			fmt.Fprintf(errOut, "aws-ccm-renderer: warning: cannot tell whether the cluster's objects differ from the release: %v\n", oneLine(err.Error()))
			return nil, nil
		}
		if err != nil {
			return nil, clusterError(info, "comparing", err)
		}
		a, err := lc.object(stored)
		if err != nil {
			return nil, err
		}
		b, err := lc.object(live)
		if err != nil {
			return nil, err
		}
		if changes, _ := diff.Compare([]*diff.Object{a}, []*diff.Object{b}, 3); len(changes) == 1 {
			c := changes[0]
			c.Change = diff.Drifted
			out = append(out, c)
		}
	}
	return out, nil
}

// afterUpgrade returns the cluster's objects of the release and the
// upgrade, and what each would be after the upgrade: the patch Helm would
// send (a three-way merge of the release's object, the upgrade's and the
// cluster's) applied in a server-side dry run, or the object created in
// one. Objects of the release the upgrade drops are not on the after side.
func (lc *liveClient) afterUpgrade(original, target kube.ResourceList, releaseName, releaseNS string) (before, after []*diff.Object, err error) {
	for _, info := range target {
		want, err := owned(info, releaseName, releaseNS)
		if err != nil {
			return nil, nil, err
		}
		live, err := lc.get(info)
		if err != nil {
			return nil, nil, err
		}
		var result runtime.Object
		if live == nil {
			if result, err = helper(info).DryRun(true).Create(info.Namespace, true, want); err != nil {
				return nil, nil, clusterError(info, "creating (dry run)", err)
			}
		} else {
			o, err := lc.object(live)
			if err != nil {
				return nil, nil, err
			}
			before = append(before, o)
			base := live
			if orig := original.Get(info); orig != nil {
				if base, err = toUnstructured(orig.Object); err != nil {
					return nil, nil, err
				}
			}
			patch, pt, err := upgradePatch(info, base, want, live)
			if err != nil {
				return nil, nil, clusterError(info, "patching", err)
			}
			result = live
			if string(patch) != "{}" {
				if result, err = helper(info).DryRun(true).Patch(info.Namespace, info.Name, pt, patch, nil); err != nil {
					return nil, nil, clusterError(info, "patching (dry run)", err)
				}
			}
		}
		o, err := lc.object(result)
		if err != nil {
			return nil, nil, err
		}
		after = append(after, o)
	}
	for _, info := range original {
		if target.Get(info) != nil {
			continue
		}
		live, err := lc.get(info)
		if err != nil {
			return nil, nil, err
		}
		if live != nil {
			o, err := lc.object(live)
			if err != nil {
				return nil, nil, err
			}
			before = append(before, o)
		}
	}
	return before, after, nil
}

// object makes a cluster's object comparable: without what the API server
// keeps for itself (status, managedFields, resourceVersion, uid,
// generation, creationTimestamp, the DaemonSet's template generation and
// kubectl's last-applied-configuration).
func (lc *liveClient) object(obj runtime.Object) (*diff.Object, error) {
	u, err := toUnstructured(obj)
	if err != nil {
		return nil, err
	}
	m := u.DeepCopy().Object
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		for _, k := range []string{"managedFields", "resourceVersion", "uid", "generation", "creationTimestamp", "selfLink"} {
			delete(meta, k)
		}
		if ann, ok := meta["annotations"].(map[string]any); ok {
			delete(ann, "deprecated.daemonset.template.generation")
			delete(ann, "kubectl.kubernetes.io/last-applied-configuration")
			if len(ann) == 0 {
				delete(meta, "annotations")
			}
		}
	}
	return diff.NewObject(m, lc.namespace)
}
