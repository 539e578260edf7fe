package renderer

import (
	"strings"
	"testing"
)

// TestVersions: the leader migration configuration's API version follows
// the CCM's image; a CCM without leader migration, or newer than the
// cluster, is refused in migrate mode; skew is warned about.
func TestVersions(t *testing.T) {
	withImage := func(image string) string {
		return docs(saDoc, roleDoc, bindDoc, dsWithImage(image))
	}
	cases := []struct {
		name     string
		image    string
		opts     func(*Options)
		want     []string // in the output
		notWant  []string
		warnings []string // each in one of the warnings
		err      []string
		keys     bool // the error as the KRM function spells it
	}{
		{name: "1.21: v1alpha1 and the feature gate", image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.21.2", opts: migrate,
			want: []string{"apiVersion: controllermanager.config.k8s.io/v1alpha1", "resourceLock: leases", "--feature-gates=ControllerManagerLeaderMigration=true"}},
		{name: "1.22 alpha: v1beta1", image: "us.gcr.io/k8s-artifacts-prod/provider-aws/cloud-controller-manager:v1.22.0-alpha.0", opts: migrate,
			want: []string{"apiVersion: controllermanager.config.k8s.io/v1beta1", "resourceLock: leases"}, notWant: []string{"feature-gates"}},
		{name: "1.23: v1beta1", image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.23.4", opts: migrate,
			want: []string{"apiVersion: controllermanager.config.k8s.io/v1beta1", "resourceLock: leases"}},
		{name: "1.24: v1, which has no resourceLock", image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.24.0", opts: migrate,
			want: []string{"apiVersion: controllermanager.config.k8s.io/v1\n"}, notWant: []string{"resourceLock"}},
		{name: "1.20: no leader migration", image: "gcr.io/k8s-staging-provider-aws/cloud-controller-manager:v1.20.0-alpha.0", opts: migrate,
			err: []string{"DaemonSet kube-system/ccm", "v1.20.0-alpha.0) has no leader migration"}},
		{name: "1.20 in install mode is fine", image: "gcr.io/k8s-staging-provider-aws/cloud-controller-manager:v1.20.0-alpha.0",
			want: []string{"--cloud-provider=aws"}},
		{name: "a digest: the version must be given", image: "registry.k8s.io/provider-aws/cloud-controller-manager@" + digest, opts: migrate,
			err: []string{"cannot tell the CCM's version", "--ccm-version=v1.26.1"}},
		{name: "a digest with --ccm-version", image: "registry.k8s.io/provider-aws/cloud-controller-manager@" + digest,
			opts: func(o *Options) { o.Mode, o.CCMVersion = ModeMigrate, "v1.23.0" }, want: []string{"controllermanager.config.k8s.io/v1beta1"}},
		{name: "migrate: a CCM newer than the cluster is refused", image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0",
			opts: func(o *Options) { o.Mode, o.KubeVersion = ModeMigrate, "v1.26.15" },
			err:  []string{"is 1.35 and the cluster (--kube-version v1.26.15) 1.26", "--set image.tag=v1.26.14", "or pass --allow-version-skew"}},
		{name: "migrate: a CCM older than the cluster is refused", image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.24.19",
			opts: func(o *Options) { o.Mode, o.KubeVersion = ModeMigrate, "v1.25.3" },
			err:  []string{"is 1.24 and the cluster (--kube-version v1.25.3) 1.25", "--set image.tag=v1.25.15", "or pass --allow-version-skew"}},
		{name: "migrate: a minor without a known release names the patch to fill in", image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.22.8",
			opts: func(o *Options) { o.Mode, o.KubeVersion = ModeMigrate, "v1.21.14" },
			err:  []string{"is 1.22 and the cluster (--kube-version v1.21.14) 1.21", "--set image.tag=v1.21.<patch>"}},
		{name: "migrate: refused unless allowed, then a warning", image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0",
			opts:     func(o *Options) { o.Mode, o.KubeVersion, o.AllowVersionSkew = ModeMigrate, "v1.26.15", true },
			warnings: []string{"is 1.35 and the cluster (--kube-version v1.26.15) 1.26", "(rendered anyway: --allow-version-skew)"}},
		{name: "migrate without the cluster's version: a CCM newer than any cluster that migrates is refused", image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0", opts: migrate,
			err: []string{"is 1.35, newer than any cluster that can migrate (the in-tree AWS provider ends with 1.26)", "--set image.tag=v1.26.14", "--kube-version", "or pass --allow-version-skew"}},
		{name: "migrate without the cluster's version: 1.27 is refused", image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.27.10", opts: migrate,
			err: []string{"is 1.27, newer than any cluster that can migrate"}},
		{name: "migrate without the cluster's version: allowed, a warning", image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0",
			opts:     func(o *Options) { o.Mode, o.AllowVersionSkew = ModeMigrate, true },
			warnings: []string{"newer than any cluster that can migrate", "(rendered anyway: --allow-version-skew)"}},
		{name: "migrate without the cluster's version: 1.26 is fine", image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.26.14", opts: migrate,
			want: []string{"apiVersion: controllermanager.config.k8s.io/v1\n"}},
		{name: "migrate on a cluster without the in-tree provider is refused", image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.28.11",
			opts: func(o *Options) { o.Mode, o.KubeVersion = ModeMigrate, "v1.28.3" },
			err:  []string{"the cluster (--kube-version v1.28.3) is 1.28 and has no in-tree AWS provider to migrate from (it ends with 1.26): use --mode=install", "or pass --allow-version-skew"}},
		{name: "migrate on a cluster without the in-tree provider, allowed: a warning", image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.34.3",
			opts:     func(o *Options) { o.Mode, o.KubeVersion, o.AllowVersionSkew = ModeMigrate, "v1.34.1", true },
			warnings: []string{"has no in-tree AWS provider to migrate from", "(rendered anyway: --allow-version-skew)"}},
		{name: "migrate on a cluster without the in-tree provider, a CCM of another minor: the mode is what is wrong", image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0",
			opts: func(o *Options) { o.Mode, o.KubeVersion = ModeMigrate, "v1.30.2" },
			err:  []string{"the cluster (--kube-version v1.30.2) is 1.30 and has no in-tree AWS provider to migrate from", "use --mode=install"}},
		{name: "a KRM function's refusal spells its keys", image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0",
			opts: func(o *Options) { o.Mode, o.KubeVersion = ModeMigrate, "v1.26.15" }, keys: true,
			err: []string{"the cluster (kubeVersion v1.26.15) 1.26", "or pass allowVersionSkew"}},
		{name: "install: a CCM newer than any cluster that migrates is fine", image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0",
			want: []string{"--cloud-provider=aws"}},
		{name: "install: skew is a warning", image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.33.0",
			opts: func(o *Options) { o.KubeVersion = "1.35" }, warnings: []string{"is 1.33 and the cluster 1.35"}},
		{name: "the same minor: nothing to say", image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.26.1",
			opts: func(o *Options) { o.Mode, o.KubeVersion = ModeMigrate, "v1.26.15+rke2r1" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, warnings, err := renderCase(t, withImage(c.image), c.opts)
			if len(c.err) > 0 {
				if err == nil {
					t.Fatalf("no error:\n%s", out)
				}
				if out != nil {
					t.Error("an error came with output")
				}
				if !IsInputError(err) || strings.Contains(err.Error(), "\n") {
					t.Errorf("want an input error of one line, got %T %q", err, err)
				}
				text := err.Error()
				if c.keys {
					text = Message(err, KeySpelling)
				}
				for _, w := range c.err {
					if !strings.Contains(text, w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(string(out), w) {
					t.Errorf("output has %q", w)
				}
			}
			if len(c.warnings) == 0 && len(warnings) > 0 {
				t.Errorf("warnings %q", warnings)
			}
			for _, w := range c.warnings {
				if !strings.Contains(strings.Join(warnings, "\n"), w) {
					t.Errorf("warnings %q lack %q", warnings, w)
				}
			}
		})
	}
}
