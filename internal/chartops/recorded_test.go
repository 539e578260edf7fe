package chartops

import (
	"slices"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools/ccmtest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// renderedManifest is a release manifest as the renderer leaves it.
func renderedManifest(t *testing.T, o renderer.Options, workload string) string {
	t.Helper()
	r, err := renderer.New(o)
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Render([]byte(workload))
	if err != nil {
		t.Fatal(err)
	}
	return string(out.Bytes())
}

// releaseManifest is a release's manifest: a ConfigMap, then the CCM of
// the shared fixture running image with --v=2.
func releaseManifest(image string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n---\n" +
		ccmtest.Manifest(ccmtest.Options{Image: image, Args: []string{"--v=2"}})
}

// ccmDaemonSet is a release of the CCM of Kubernetes 1.26.
var ccmDaemonSet = releaseManifest(ccmtest.ImageTag("v1.26.14"))

func TestRecordedOptionsOf(t *testing.T) {
	o := renderer.DefaultOptions()
	o.Distro, o.Mode, o.SetArgs, o.LeaderName = distros.RKE, renderer.ModeMigrate, []string{"v=4"}, "other-lease"
	f := false
	o.HostNetwork = &f
	got, ok, err := recordedOptionsOf(renderedManifest(t, o, ccmDaemonSet))
	if err != nil || !ok {
		t.Fatalf("%v %v", ok, err)
	}
	var spelled []string
	for _, op := range renderer.OptionTable {
		if op.Recorded {
			spelled = append(spelled, renderer.FlagArgs(got, op.Opt)...)
		}
	}
	want := []string{"--distro=rke", "--mode=migrate", "--host-network=false", "--set-arg=v=4", "--leader-name=other-lease"}
	if !slices.Equal(spelled, want) {
		t.Errorf("spelled %q, want %q", spelled, want)
	}

	// Not rendered: nothing recorded.
	if _, ok, err := recordedOptionsOf(ccmDaemonSet); ok || err != nil {
		t.Errorf("plain manifest: %v %v", ok, err)
	}
	// A workload named with --target (an image the rule does not know)
	// is found by its annotation.
	o = renderer.DefaultOptions()
	o.Distro, o.Target = distros.K3s, "DaemonSet/kube-system/ccm"
	custom := releaseManifest("example.com/my-ccm:1")
	got, ok, err = recordedOptionsOf(renderedManifest(t, o, custom))
	if err != nil || !ok || got.Distro != distros.K3s || got.Target != o.Target {
		t.Errorf("--target workload: %+v %v %v", got, ok, err)
	}
	// A broken annotation is an error; so is a manifest that is no YAML.
	broken := strings.Replace(ccmDaemonSet, "  namespace: kube-system\n", "  namespace: kube-system\n  annotations:\n    "+renderer.OptionsAnnotation+": '{'\n", 1)
	if _, _, err := recordedOptionsOf(broken); err == nil {
		t.Error("a broken annotation is accepted")
	}
	if _, _, err := recordedOptionsOf("a: [\n"); err == nil {
		t.Error("a broken manifest is accepted")
	}
}
