package chartops

// Code that follows the Helm CLI's (helm.sh/helm/v3 v3.22.0), where the SDK
// has no function for what the CLI does: each piece names the file it
// follows and how it differs.

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// DefaultKubeVersion is the Kubernetes version a chart sees without a
// cluster: 1.<minor> of the client-go linked in, as Helm's own build stamps
// it into chartutil.DefaultCapabilities (Makefile, LDFLAGS k8sversion;
// the SDK's unstamped default is 1.20).
func DefaultKubeVersion() *chartutil.KubeVersion {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path != "k8s.io/client-go" {
				continue
			}
			if d.Replace != nil {
				d = d.Replace
			}
			if minor, _, ok := strings.Cut(strings.TrimPrefix(d.Version, "v0."), "."); ok {
				if kv, err := chartutil.ParseKubeVersion("v1." + minor + ".0"); err == nil {
					return kv
				}
			}
		}
	}
	return &chartutil.DefaultCapabilities.KubeVersion
}

// manifestOf returns a release's manifests as `helm template` prints them:
// cmd/helm/template.go writes the manifest, then each hook with its
// "# Source:" line.
func manifestOf(rel *release.Release) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(rel.Manifest))
	b.WriteString("\n")
	for _, h := range rel.Hooks {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", h.Path, h.Manifest)
	}
	return b.String()
}

// showOnly keeps the manifests of the templates named, as --show-only of
// cmd/helm/template.go: the manifests split and sorted as Helm installs
// them, patterns matched with filepath.Match against the path after the
// chart's name in each manifest's "# Source:" line. Unlike Helm's, a
// pattern that matches nothing names the templates there are.
func showOnly(manifests string, patterns []string) (string, error) {
	if len(patterns) == 0 {
		return manifests, nil
	}
	split := releaseutil.SplitManifests(manifests)
	keys := make([]string, 0, len(split))
	for k := range split {
		keys = append(keys, k)
	}
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	var b strings.Builder
	for _, p := range patterns {
		p = filepath.ToSlash(p)
		if _, err := filepath.Match(p, ""); err != nil {
			return "", &renderer.UsageError{Err: fmt.Errorf("--show-only %q: %w", p, err)}
		}
		found := false
		for _, k := range keys {
			m := split[k]
			path := sourcePath(m)
			if ok, _ := filepath.Match(p, path); !ok || path == "" {
				continue
			}
			fmt.Fprintf(&b, "---\n%s\n", m)
			found = true
		}
		if !found {
			return "", &renderer.InputError{Err: fmt.Errorf("--show-only %s: no such template in the chart's output (its templates: %s)", p, strings.Join(sources(split, keys), ", "))}
		}
	}
	return b.String(), nil
}

// sourcePath is the template path of a manifest, from its "# Source:
// CHART/PATH" line.
func sourcePath(m string) string {
	for _, l := range strings.Split(m, "\n") {
		if rest, ok := strings.CutPrefix(l, "# Source: "); ok {
			if _, p, ok := strings.Cut(rest, "/"); ok {
				return strings.TrimSpace(p)
			}
		}
	}
	return ""
}

func sources(split map[string]string, keys []string) []string {
	var out []string
	for _, k := range keys {
		if p := sourcePath(split[k]); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// releaseGone tells whether a release does not exist for upgrade
// --install: never installed, or uninstalled with its history kept
// (uninstalled), as isReleaseUninstalled in cmd/helm/upgrade.go; the
// newest revision is the highest, not the last the storage lists.
// Released tells whether the release is there to compare with or
// upgrade: installed, and not uninstalled since.
func (c *Client) Released(name string) (bool, error) {
	gone, _, err := c.releaseGone(name)
	return !gone && err == nil, err
}

func (c *Client) releaseGone(name string) (gone, uninstalled bool, err error) {
	h, err := action.NewHistory(c.Config).Run(name)
	if errors.Is(err, driver.ErrReleaseNotFound) || (err == nil && len(h) == 0) {
		return true, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("release %s: %w", name, err)
	}
	last := h[0]
	for _, r := range h {
		if r.Version > last.Version {
			last = r
		}
	}
	uninstalled = last.Info != nil && last.Info.Status == release.StatusUninstalled
	return uninstalled, uninstalled, nil
}

// upgradePatch is the patch Helm's kube client sends to update an object,
// as createPatch in pkg/kube/client.go: a three-way strategic merge patch
// for the API's own kinds, a JSON merge patch of the release's object to
// the upgrade's for custom resources. Unlike Helm's, it takes the cluster's
// object from the caller rather than reading it again, and custom
// resources' merge is always two-way (Helm's default, without
// --server-side or its three-way flag).
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
