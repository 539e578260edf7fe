package wrapperchart

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// TestWrapperChartInstallVersions: in install mode too the wrapper chart
// refuses a CCM of another minor than the cluster's, the upstream chart's
// default tag included, with one message in the renderer's words that
// names the tag to set (the release data's newest of the cluster's minor):
// a chart's notes reach no one where charts install with values alone (an
// RKE2 HelmChart), and it cannot pick the tag from the cluster's version
// itself. The CCM of the cluster's minor renders without a warning;
// allowVersionSkew renders, and the notes warn in the same words. Helm 3's
// own install, client-only, with the cluster's version; it reads no Helm
// home (the chart from a directory, values from files and flags).
func TestWrapperChartInstallVersions(t *testing.T) {
	dir := testtools.WrapperChart(t)
	def, ok := releases.DefaultImageTag(upstream.LatestChartVersion)
	if !ok {
		t.Fatalf("no default tag for chart %s", upstream.LatestChartVersion)
	}
	defMinor := minorOfTag(t, def)
	tag := func(v string) string { return "aws-cloud-controller-manager.image.tag=" + v }
	const skew = "allowVersionSkew=true"
	// The problem, as the refusal and the warning say it.
	problem := func(ccm string, kube string, kubeMinor int) string {
		return fmt.Sprintf("mode install: the CCM %s is 1.%d and the cluster 1.%d (%s as Helm sees it; helm template and --dry-run without --kube-version assume one): %s; "+
			"set aws-cloud-controller-manager.image.tag to %s", ccm, minorOfTag(t, ccm), kubeMinor, kube, renderer.VerdictSkewInstall.Reason, releases.PinHint(releases.Tag(kubeMinor)))
	}
	older := fmt.Sprintf("v1.%d.2", defMinor-1)
	newest := releases.LastMinor()
	newer := fmt.Sprintf("v1.%d.2", newest)
	for _, c := range []struct {
		name, kube string
		sets       []string
		refused    string // the whole message after Helm's prefix; "" renders
		warning    string // in the notes; "" none
	}{
		{name: "the chart's default CCM on a cluster of its minor", kube: fmt.Sprintf("v1.%d.2", defMinor)},
		{name: "the chart's default CCM on an older cluster", kube: older,
			refused: problem(def, older, defMinor-1) + ", or allowVersionSkew to true to install it anyway"},
		// Helm sees an RKE2 cluster's version without its build suffix.
		{name: "the chart's default CCM on a newer cluster", kube: newer + "+rke2r1",
			refused: problem(def, newer, newest) + ", or allowVersionSkew to true to install it anyway"},
		{name: "the tag the refusal names", kube: older, sets: []string{tag(releases.Tag(defMinor - 1))}},
		{name: "an older CCM on a newer cluster", kube: newer, sets: []string{tag(releases.Tag(defMinor - 2))},
			refused: problem(releases.Tag(defMinor-2), newer, newest) + ", or allowVersionSkew to true to install it anyway"},
		{name: "a minor without a known release", kube: fmt.Sprintf("v1.%d.0", newest+1),
			refused: fmt.Sprintf("set aws-cloud-controller-manager.image.tag to v1.%d.<patch>, or allowVersionSkew to true to install it anyway", newest+1)},
		{name: "skew allowed", kube: older, sets: []string{skew},
			warning: "WARNING: " + problem(def, older, defMinor-1) + " (installed anyway: allowVersionSkew is true)."},
		{name: "skew allowed, the CCM of the cluster's minor", kube: older, sets: []string{skew, tag(releases.Tag(defMinor - 1))}},
		{name: "a tag that is not a version", kube: older, sets: []string{tag("latest")}},
		// A tag pinned by digest is judged by its version part.
		{name: "the cluster's minor pinned by digest", kube: older, sets: []string{tag(releases.Tag(defMinor-1) + "@sha256:" + strings.Repeat("a", 64))}},
		{name: "another minor pinned by digest", kube: older, sets: []string{tag(def + "@sha256:" + strings.Repeat("a", 64))},
			refused: problem(def+"@sha256:"+strings.Repeat("a", 64), older, defMinor-1) + ", or allowVersionSkew to true to install it anyway"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			manifests, notes, err := install(t, dir, c.kube, []string{filepath.Join(dir, "presets", "rke2-install.yaml")}, c.sets)
			if c.refused != "" {
				const prefix = "execution error at (aws-ccm-rancher/templates/validate.yaml:"
				if err == nil || manifests != "" || !strings.HasPrefix(err.Error(), prefix) || strings.Count(err.Error(), "\n") != 0 ||
					!strings.HasSuffix(err.Error(), c.refused) || strings.Count(err.Error(), "mode install:") != 1 {
					t.Fatalf("err %v, %d bytes of manifests; want one refusal %q", err, len(manifests), c.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(manifests, "kind: DaemonSet") {
				t.Errorf("no DaemonSet:\n%s", manifests)
			}
			if !strings.HasPrefix(notes, "The AWS cloud controller manager runs on the control-plane nodes of this rke2 cluster, in install mode.") {
				t.Errorf("notes:\n%s", notes)
			}
			if got := strings.Contains(notes, "WARNING"); got != (c.warning != "") || !strings.Contains(notes, c.warning) {
				t.Errorf("notes:\n%s\nwant the warning %q", notes, c.warning)
			}
		})
	}
}

// minorOfTag is the Kubernetes minor of a CCM tag ("v1.35.0" gives 35).
func minorOfTag(t *testing.T, tag string) int {
	t.Helper()
	var minor int
	if _, err := fmt.Sscanf(tag, "v1.%d.", &minor); err != nil {
		t.Fatalf("%q is not a CCM tag: %v", tag, err)
	}
	return minor
}

// installNotes renders the chart's notes as helm install does, without a
// cluster, for a cluster of version kube.
func installNotes(t *testing.T, dir, kube string, files, sets []string) string {
	t.Helper()
	_, notes, err := install(t, dir, kube, files, sets)
	if err != nil {
		t.Fatal(err)
	}
	return notes
}

// install renders the chart as helm install does, without a cluster, for
// a cluster of version kube: its manifests and notes, or why it fails.
func install(t *testing.T, dir, kube string, files, sets []string) (manifests, notes string, err error) {
	t.Helper()
	chart, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := (&values.Options{ValueFiles: files, Values: sets}).MergeValues(getter.Providers{})
	if err != nil {
		t.Fatal(err)
	}
	kv, err := chartutil.ParseKubeVersion(kube)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &action.Configuration{Releases: storage.Init(driver.NewMemory()), Capabilities: chartutil.DefaultCapabilities}
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace, in.DryRun, in.ClientOnly, in.KubeVersion = "aws-ccm", "kube-system", true, true, kv
	rel, err := in.Run(chart, vals)
	if err != nil {
		return "", "", err
	}
	return rel.Manifest, rel.Info.Notes, nil
}

// defaultTagKube is a cluster version of the minor of the CCM the upstream
// chart deploys by default: the wrapper chart's defaults render for it.
func defaultTagKube(t *testing.T) string {
	t.Helper()
	def, ok := releases.DefaultImageTag(upstream.LatestChartVersion)
	if !ok {
		t.Fatalf("no default tag for chart %s", upstream.LatestChartVersion)
	}
	return fmt.Sprintf("v1.%d.2", minorOfTag(t, def))
}
