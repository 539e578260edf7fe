//go:build helmsdk

package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
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

const ccmDaemonSet = `apiVersion: v1
kind: ConfigMap
metadata:
  name: other
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: ccm
  namespace: kube-system
spec:
  template:
    spec:
      containers:
        - name: ccm
          image: registry.k8s.io/provider-aws/cloud-controller-manager:v1.30.0
          args: [--v=2]
`

func TestRecordedOptionsOf(t *testing.T) {
	o := renderer.DefaultOptions()
	o.Distro, o.Mode, o.SetArgs, o.LeaderName = renderer.DistroRKE, renderer.ModeMigrate, []string{"v=4"}, "other-lease"
	f := false
	o.HostNetwork = &f
	got, ok, err := recordedOptionsOf(renderedManifest(t, o, ccmDaemonSet))
	if err != nil || !ok {
		t.Fatalf("%v %v", ok, err)
	}
	var spelled []string
	for _, op := range recordedOptions() {
		spelled = append(spelled, renderer.FlagArgs(got, op.Opt)...)
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
	o.Distro, o.Target = renderer.DistroK3s, "DaemonSet/kube-system/ccm"
	custom := strings.Replace(ccmDaemonSet, "registry.k8s.io/provider-aws/cloud-controller-manager:v1.30.0", "example.com/my-ccm:1", 1)
	got, ok, err = recordedOptionsOf(renderedManifest(t, o, custom))
	if err != nil || !ok || got.Distro != renderer.DistroK3s || got.Target != o.Target {
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

func TestExplicitOptions(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	var f optionFlags
	f.register(fs)
	config := filepath.Join(t.TempDir(), "renderer.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: aws-ccm-renderer.io/v1alpha1\nkind: RendererConfig\nmode: migrate\nsetArgs: [v=2]\nkubeVersion: v1.26.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--distro=rke", "--config", config}); err != nil {
		t.Fatal(err)
	}
	given, err := explicitOptions(fs, config)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"distro", "mode", "set-arg", "kube-version"} {
		if !given[name] {
			t.Errorf("%s not taken as given", name)
		}
	}
	for _, name := range []string{"host-network", "remove-arg", "leader-name"} {
		if given[name] {
			t.Errorf("%s taken as given", name)
		}
	}
	if _, err := explicitOptions(fs, filepath.Join(t.TempDir(), "none.yaml")); !renderer.IsUsageError(err) {
		t.Errorf("missing config: %v", err)
	}
}
