//go:build helmsdk

package cli

import (
	"encoding/json"
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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/diff"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/terminal"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// Helm's ownership metadata, which it puts on every object of a release.
const (
	helmManagedByLabel        = "app.kubernetes.io/managed-by"
	helmReleaseNameAnnotation = "meta.helm.sh/release-name"
	helmReleaseNSAnnotation   = "meta.helm.sh/release-namespace"
)

// diff prints chart output → patched, release → upgrade (--deployed), or
// the cluster's objects → after the upgrade (--live).
func (w *wrapper) diff(ch *chart.Chart, vals map[string]any, pr postrender.PostRenderer) error {
	var (
		changes []diff.Change
		sum     diff.Summary
		drift   []diff.Change
		what    string
		err     error
	)
	switch {
	case w.flags.deployed || w.flags.live:
		w.progress.Begin(fmt.Sprintf("comparing with release %s in namespace %s (server-side dry run)", w.release, w.namespace))
		changes, sum, drift, what, err = w.clusterDiff(ch, vals, pr)
		w.progress.End(err)
	default:
		changes, sum, what, err = w.chartDiff(ch, vals, pr)
	}
	if err != nil {
		return err
	}
	sum.Drifted = len(drift)
	if !w.flags.live {
		// With --live the changes made outside Helm are in the diff
		// itself; the summary still counts them.
		changes = append(changes, drift...)
	}
	if w.flags.output == "json" {
		if changes == nil {
			changes = []diff.Change{}
		}
		b, err := json.MarshalIndent(changes, "", "  ")
		if err != nil {
			return err
		}
		if _, err := w.out.Write(append(b, '\n')); err != nil {
			return writeErr(err)
		}
	} else if text := diff.Text(changes, sum, what, w.colour()); text != "" {
		if _, err := io.WriteString(w.out, text); err != nil {
			return writeErr(err)
		}
	} else if w.progress.Shown() {
		fmt.Fprintf(w.errOut, "aws-ccm-renderer: no changes: %d objects the same (%s)\n", sum.Unchanged, what)
	}
	if len(changes) > 0 && w.flags.detailedExit {
		return errChanges
	}
	return nil
}

// colour tells whether to colour the text diff: --color, and for auto
// what terminal.Colour says.
func (w *wrapper) colour() bool {
	switch w.flags.color {
	case "always":
		return true
	case "never":
		return false
	}
	return terminal.Colour(w.out)
}

// chartDiff compares the chart's own output with the patched output.
func (w *wrapper) chartDiff(ch *chart.Chart, vals map[string]any, pr postrender.PostRenderer) ([]diff.Change, diff.Summary, string, error) {
	plain, err := w.render(ch, vals, nil)
	if err != nil {
		return nil, diff.Summary{}, "", err
	}
	patched, err := w.render(ch, vals, pr)
	if err != nil {
		return nil, diff.Summary{}, "", err
	}
	name := ch.Metadata.Name + "-" + ch.Metadata.Version
	changes, sum, err := diff.CompareStreams(name+"'s output", manifestOf(plain), "the patched output", manifestOf(patched), w.namespace, w.flags.context)
	return changes, sum, name + "'s output → patched by aws-ccm-renderer", err
}

// clusterDiff compares with the cluster: the release's manifest (or, with
// --live, the cluster's objects) with what the upgrade would make, and
// finds the objects changed outside Helm.
func (w *wrapper) clusterDiff(ch *chart.Chart, vals map[string]any, pr postrender.PostRenderer) (changes []diff.Change, sum diff.Summary, drift []diff.Change, what string, err error) {
	fail := func(err error) ([]diff.Change, diff.Summary, []diff.Change, string, error) {
		return nil, diff.Summary{}, nil, "", err
	}
	rel, err := action.NewGet(w.cfg).Run(w.release)
	uninstalled := false
	var failed *release.Release // the last revision, when it failed
	switch {
	case errors.Is(err, driver.ErrReleaseNotFound):
		rel = nil
	case err != nil:
		return fail(&ioError{fmt.Errorf("release %s in namespace %s: %w", w.release, w.namespace, err)})
	case rel.Info != nil && rel.Info.Status == release.StatusUninstalled:
		// Uninstalled with its history kept: gone, as for upgrade
		// --install.
		rel, uninstalled = nil, true
	case rel.Info != nil && rel.Info.Status == release.StatusFailed:
		// The last upgrade failed: an upgrade now patches from the
		// deployed revision, as Helm's does, and that is what the
		// cluster was last given successfully.
		if dep, derr := w.cfg.Releases.Deployed(w.release); derr == nil {
			failed = rel
			rel = dep
		}
	}
	var next *release.Release
	if rel == nil {
		// Nothing deployed yet: everything an install would create.
		inst := w.newInstall(pr)
		inst.DryRun, inst.DryRunOption, inst.ClientOnly, inst.Wait, inst.Atomic = true, "server", false, false, false
		inst.Replace = uninstalled
		next, err = inst.Run(ch, vals)
		what = fmt.Sprintf("no release %s in namespace %s → install", w.release, w.namespace)
	} else {
		up := w.newUpgrade(pr)
		up.DryRun, up.DryRunOption, up.Wait, up.Atomic = true, "server", false, false
		next, err = up.Run(w.release, ch, vals)
		what = fmt.Sprintf("release %s revision %d → upgrade", rel.Name, rel.Version)
		if failed != nil {
			what = fmt.Sprintf("release %s revision %d, the deployed one; revision %d failed → upgrade", rel.Name, rel.Version, failed.Version)
		}
	}
	if err != nil {
		return fail(renderError(err))
	}
	lc, err := w.newLiveClient()
	if err != nil {
		return fail(err)
	}
	var original kube.ResourceList
	if rel != nil {
		if original, err = lc.build(rel.Manifest); err != nil {
			return fail(err)
		}
		if drift, err = lc.drift(original, rel.Name, rel.Namespace, w.progress); err != nil {
			return fail(err)
		}
	}
	if !w.flags.live {
		fromText := ""
		if rel != nil {
			fromText = manifestOf(rel)
		}
		changes, sum, err = diff.CompareStreams("the release's manifest", fromText, "the upgrade's manifest", manifestOf(next), w.namespace, w.flags.context)
		if err != nil {
			return fail(err)
		}
		return changes, sum, drift, what, nil
	}
	target, err := lc.build(next.Manifest)
	if err != nil {
		return fail(err)
	}
	from, to, err := lc.afterUpgrade(original, target, w.release, w.namespace)
	if err != nil {
		return fail(err)
	}
	if rel == nil {
		what = fmt.Sprintf("the cluster's objects → after installing %s", w.release)
	} else {
		what = fmt.Sprintf("the cluster's objects → after upgrading %s (revision %d)", rel.Name, rel.Version)
	}
	changes, sum = diff.Compare(from, to, w.flags.context)
	return changes, sum, drift, what, nil
}

// liveClient reads and dry-runs the cluster's objects with Helm's kube
// client.
type liveClient struct {
	kc        *kube.Client
	namespace string
}

func (w *wrapper) newLiveClient() (*liveClient, error) {
	kc, ok := w.cfg.KubeClient.(*kube.Client)
	if !ok {
		return nil, fmt.Errorf("the Helm SDK's kube client is a %T", w.cfg.KubeClient)
	}
	return &liveClient{kc: kc, namespace: w.namespace}, nil
}

func (lc *liveClient) build(manifest string) (kube.ResourceList, error) {
	list, err := lc.kc.Build(strings.NewReader(manifest), false)
	if err != nil {
		return nil, renderError(fmt.Errorf("reading the manifests with the cluster's API: %w", err))
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
	err = fmt.Errorf("%s %s %s/%s: %w", doing, info.Mapping.GroupVersionKind.Kind, info.Namespace, info.Name, err)
	if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || unreachable(err) {
		return &ioError{err}
	}
	return &renderer.InputError{Err: err}
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

// upgradePatch is the patch Helm's kube client sends to update an object: a
// three-way strategic merge patch for the API's own kinds, a JSON merge
// patch of the release's object to the upgrade's for custom resources.
func upgradePatch(info *resource.Info, original, target, live *unstructured.Unstructured) ([]byte, types.PatchType, error) {
	oldData, err := json.Marshal(original)
	if err != nil {
		return nil, "", err
	}
	newData, err := json.Marshal(target)
	if err != nil {
		return nil, "", err
	}
	liveData, err := json.Marshal(live)
	if err != nil {
		return nil, "", err
	}
	versioned := kube.AsVersioned(info)
	if _, ok := versioned.(runtime.Unstructured); ok {
		patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch(oldData, newData, oldData)
		return patch, types.MergePatchType, err
	}
	meta, err := strategicpatch.NewPatchMetaFromStruct(versioned)
	if err != nil {
		return nil, "", err
	}
	patch, err := strategicpatch.CreateThreeWayMergePatch(oldData, newData, liveData, meta, true)
	return patch, types.StrategicMergePatchType, err
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
