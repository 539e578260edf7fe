package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// TestGivenOptions: the options given on the command line or in the
// --config file, by flag name.
func TestGivenOptions(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	var f OptionFlags
	f.Register(fs)
	config := filepath.Join(t.TempDir(), "renderer.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: aws-ccm-renderer.io/v1alpha1\nkind: RendererConfig\nmode: migrate\nsetArgs: [v=2]\nkubeVersion: v1.26.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--distro=rke", "--config", config}); err != nil {
		t.Fatal(err)
	}
	given, err := f.Given(fs)
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
	f.Config = filepath.Join(t.TempDir(), "none.yaml")
	if _, err := f.Given(fs); !renderer.IsUsageError(err) {
		t.Errorf("missing config: %v", err)
	}
}
