package wrapperchart

import (
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
)

// TestWrapperChartNotes: a chart cannot set its dependency's values from
// the cluster's version, so in install mode the wrapper chart's notes (what
// helm install prints, and Rancher's Apps show) warn of a CCM of another
// minor than the cluster's, naming the tag to pin, as the renderer's
// warning does; the CCM of the cluster's minor, and allowVersionSkew, warn
// of nothing. Helm 3's own install, client-only, with the cluster's version.
func TestWrapperChartNotes(t *testing.T) {
	dir := testtools.WrapperChart(t)
	install := filepath.Join(dir, "presets", "rke2-install.yaml")
	tag := func(v string) string { return "aws-cloud-controller-manager.image.tag=" + v }
	for _, c := range []struct {
		name, kube string
		sets       []string
		want       string // the warning; "" none
	}{
		{"the chart's CCM on a 1.34 cluster", "v1.34.2", nil,
			"WARNING: the CCM v1.35.0 is 1.35 and the cluster 1.34 (v1.34.2 as Helm sees it): the AWS CCM is released per Kubernetes minor and meant to run at the cluster's; set aws-cloud-controller-manager.image.tag to " + releases.Tag(34)},
		{"the CCM of the cluster's minor", "v1.34.2", []string{tag(releases.Tag(34))}, ""},
		{"a 1.33 CCM on a 1.37 cluster", "v1.37.2", []string{tag(releases.Tag(33))}, "set aws-cloud-controller-manager.image.tag to " + releases.Tag(37)},
		{"skew allowed", "v1.34.2", []string{"allowVersionSkew=true"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			notes := installNotes(t, dir, c.kube, []string{install}, c.sets)
			if !strings.HasPrefix(notes, "The AWS cloud controller manager runs on the control-plane nodes of this rke2 cluster, in install mode.") {
				t.Errorf("notes:\n%s", notes)
			}
			if got := strings.Contains(notes, "WARNING"); got != (c.want != "") || c.want != "" && !strings.Contains(notes, c.want) {
				t.Errorf("notes:\n%s\nwant the warning %q", notes, c.want)
			}
		})
	}
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
