package cli

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/overlays"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// checkOverlaysIn asserts that dir holds every file the spec generates
// (the repository's, written to dir), as generated.
func checkOverlaysIn(t *testing.T, dir string) {
	t.Helper()
	files, err := overlays.Files(overlays.DefaultSpec(filepath.ToSlash(dir)))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: not as generated (%v)", name, err)
		}
	}
}

// wantListing is what the command prints: the component directories, each
// distribution in the modes it has.
func wantListing(dir string) string {
	var b strings.Builder
	for _, d := range distros.All {
		p, _ := distros.RecordOf(d)
		for _, m := range renderer.ModesOf(p) {
			b.WriteString(filepath.Join(dir, string(d), string(m)) + "\n")
		}
	}
	return b.String()
}

func TestOverlaysOut(t *testing.T) {
	for _, flag := range []string{"--out", "-o", "--out="} {
		t.Run(flag, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "a", "new", "dir")
			args := []string{"overlays", flag, dir}
			if strings.HasSuffix(flag, "=") {
				args = []string{"overlays", flag + dir}
			}
			code, out, errOut := run(t, "", args...)
			if code != ExitOK || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if out != wantListing(dir) {
				t.Errorf("stdout %q, want %q", out, wantListing(dir))
			}
			checkOverlaysIn(t, dir)
		})
	}
}

func TestOverlaysDefaultOut(t *testing.T) {
	t.Chdir(t.TempDir())
	code, out, errOut := run(t, "", "overlays")
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if out != wantListing("overlays") {
		t.Errorf("stdout %q", out)
	}
	checkOverlaysIn(t, "overlays")
}

// TestOverlaysRewrite: a second run replaces the component directories
// whole (a file an older version wrote goes) and leaves other files alone.
func TestOverlaysRewrite(t *testing.T) {
	dir := t.TempDir()
	keep := []string{"notes.md", "rke2/custom/kustomization.yaml"}
	for _, f := range append(keep, "rke2/install/old-patch.yaml", "rke2/install/daemonset.yaml") {
		path := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("# mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if code, _, errOut := run(t, "", "overlays", "--out", dir); code != ExitOK {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	}
	checkOverlaysIn(t, dir)
	if _, err := os.Stat(filepath.Join(dir, "rke2", "install", "old-patch.yaml")); !os.IsNotExist(err) {
		t.Errorf("a file no longer generated is still there: %v", err)
	}
	for _, f := range keep {
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f))); err != nil || string(b) != "# mine\n" {
			t.Errorf("%s was not left alone: %q, %v", f, b, err)
		}
	}
}

func TestOverlaysErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	targetConfig := filepath.Join(dir, "target.yaml")
	if err := os.WriteFile(targetConfig, []byte("apiVersion: aws-ccm-renderer.io/v1alpha1\nkind: RendererConfig\ntarget: DaemonSet/kube-system/ccm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A file where a distro's directory goes.
	clash := filepath.Join(dir, "clash")
	if err := os.MkdirAll(clash, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(clash, "rke2"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"empty --out", []string{"--out", ""}, ExitUsage, "--out must name a directory"},
		{"--out without a value", []string{"--out"}, ExitUsage, "flag needs an argument"},
		{"positional argument", []string{"overlays"}, ExitUsage, `unknown command "overlays"`},
		{"unknown flag", []string{"--target=DaemonSet/kube-system/ccm"}, ExitUsage, "unknown flag: --target"},
		{"K3s in migrate mode", []string{"--out", dir, "--distro=k3s", "--mode=migrate"}, ExitUsage,
			"--mode migrate: --distro=k3s has no migrate mode: it is built without the in-tree cloud providers"},
		{"migrate on a cluster without the in-tree provider", []string{"--out", dir, "--mode=migrate", "--kube-version=v1.28.3"}, ExitUsage,
			"the cluster (--kube-version v1.28.3) is 1.28 and has no in-tree AWS provider to migrate from (it ends with 1.26): use --mode=install"},
		{"migrate with a CCM newer than any cluster that migrates", []string{"--out", dir, "--mode=migrate", "--image-tag=v1.35.2"}, ExitUsage,
			"the CCM (image registry.k8s.io/provider-aws/cloud-controller-manager:" + releases.Pin("v1.35.2") + ") is 1.35, newer than any cluster that can migrate"},
		{"migrate with a CCM of another minor than the cluster", []string{"--out", dir, "--mode=migrate", "--kube-version=1.25", "--image-tag=v1.26.14"}, ExitUsage,
			"is 1.26 and the cluster (--kube-version 1.25) 1.25: a migration runs the CCM of the cluster's minor; pin the CCM release of the cluster's minor, v1.25.15"},
		{"a minor without a known release", []string{"--out", dir, "--mode=migrate", "--kube-version=v1.21.14"}, ExitUsage,
			"no CCM release of Kubernetes 1.21 is known to be promoted to registry.k8s.io: pin one with --image-tag"},
		{"an image tag that is not a release", []string{"--out", dir, "--image-tag=latest"}, ExitUsage, `--image-tag: "latest" is not a CCM release tag`},
		{"a tag with another digest than the promotion list's", []string{"--out", dir, "--image-tag=v1.26.14@sha256:" + strings.Repeat("cd", 32)}, ExitUsage,
			"--image-tag: \"v1.26.14@sha256:" + strings.Repeat("cd", 32) + "\": registry.k8s.io's promotion list gives v1.26.14 the digest"},
		{"the newest release of a minor, not promoted yet", []string{"--out", dir, "--kube-version=v1.37.2"}, ExitUsage,
			"the CCM of 1.37: v1.37.1 is not in registry.k8s.io's promotion list yet, so its digest is not known here: read it with crane digest registry.k8s.io/provider-aws/cloud-controller-manager:v1.37.1"},
		{"a bad renderer option", []string{"--out", dir, "--set-arg=cloud-provider=gce"}, ExitUsage, "--set-arg cloud-provider: the CCM must run with --cloud-provider=aws"},
		{"a config file with an option overlays does not take", []string{"--out", dir, "--config", targetConfig}, ExitUsage,
			"--config " + targetConfig + ": target does not apply to this command"},
		{"the guard by tag", []string{"--out", dir, "--kube-version=v1.35.2", "--guard-image=registry.example/r:v1"}, ExitUsage,
			`"registry.example/r:v1" is not pinned by digest: pin the image by digest`},
		{"--out is a file", []string{"--out", file}, ExitOther, "writing the overlays: mkdir " + file + ": not a directory"},
		{"--out below a file", []string{"--out", filepath.Join(file, "overlays")}, ExitOther, "writing the overlays:"},
		{"a file in the way", []string{"--out", clash}, ExitOther, "writing the overlays:"},
	}
	if os.Geteuid() != 0 { // root writes to read-only directories
		ro := filepath.Join(dir, "read-only")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name string
			args []string
			code int
			want string
		}{"read-only directory", []string{"--out", ro}, ExitOther, "permission denied"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := run(t, "", append([]string{"overlays"}, c.args...)...)
			if code != c.code {
				t.Errorf("exit %d, want %d", code, c.code)
			}
			if out != "" {
				t.Errorf("stdout is not empty: %q", out)
			}
			if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "aws-ccm-renderer: ") || !strings.Contains(errOut, c.want) {
				t.Errorf("stderr %q: want one line saying %q", errOut, c.want)
			}
		})
	}
}

func TestOverlaysHelp(t *testing.T) {
	code, out, errOut := run(t, "", "overlays", "--help")
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"--out", "DIR/<distro>/<mode>/", "docs/overlays.md", "kustomize build fails"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
}

// TestOverlaysFlux: --format=flux writes the Flux format, into flux by
// default; an unknown format is a usage error; the values complete.
func TestOverlaysFlux(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	code, out, errOut := run(t, "", "overlays", "--format=flux")
	if code != ExitOK || errOut != "" || out != wantListing("flux") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	files, err := overlays.FluxFiles(overlays.DefaultSpec("flux"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, "flux", filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: not as generated (%v)", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "overlays")); !os.IsNotExist(err) {
		t.Errorf("--format=flux wrote the kustomize components too: %v", err)
	}
	code, _, errOut = run(t, "", "overlays", "--format=helmfile")
	if code != ExitUsage || !strings.Contains(errOut, `--format "helmfile": use kustomize or flux`) {
		t.Errorf("unknown format: exit %d, %q", code, errOut)
	}
	if _, out, _ := run(t, "", "__completeNoDesc", "overlays", "--format", ""); out != "kustomize\nflux\n:4\n" {
		t.Errorf("completion: %q", out)
	}
}

// TestOverlaysOptions: the renderer's options reach every component;
// --distro and --mode write only theirs; migrate mode pins the CCM of the
// cluster's minor with the leader migration configuration that CCM reads;
// each file names the command that wrote it, and that command, run again,
// writes the same files.
func TestOverlaysOptions(t *testing.T) {
	t.Chdir(t.TempDir())
	cases := []struct {
		name    string
		args    []string
		listing string
		want    map[string][]string // file: what it holds
		notWant map[string][]string
	}{
		{name: "one component for a 1.25 cluster, with a flag of one's own",
			args:    []string{"--out", "gitops/ccm", "--distro=rke2", "--mode=migrate", "--kube-version=v1.25.16", "--set-arg=cluster-name=prod"},
			listing: "gitops/ccm/rke2/migrate\n",
			want: map[string][]string{
				"rke2/migrate/daemonset.yaml": {"#   aws-ccm-renderer overlays --out=gitops/ccm --distro=rke2 --mode=migrate --set-arg=cluster-name=prod --kube-version=v1.25.16\n",
					"image: registry.k8s.io/provider-aws/cloud-controller-manager:" + releases.Pin("v1.25.15") + "\n", "- --cluster-name=prod\n", "- --enable-leader-migration=true\n"},
				"rke2/migrate/leader-migration.yaml": {"apiVersion: controllermanager.config.k8s.io/v1\n"},
				"README.md":                          {"| [`rke2/migrate`](rke2/migrate) |", "`" + releases.Pin("v1.25.15") + "`"},
			},
			notWant: map[string][]string{"rke2/migrate/leader-migration.yaml": {"resourceLock"}, "README.md": {"rke2/install", "rke/migrate"}}},
		{name: "a 1.23 cluster: the CCM reads v1beta1",
			args:    []string{"--out", "v123", "--distro=kubeadm", "--mode=migrate", "--kube-version=1.23"},
			listing: "v123/kubeadm/migrate\n",
			want: map[string][]string{
				"kubeadm/migrate/daemonset.yaml":        {"image: registry.k8s.io/provider-aws/cloud-controller-manager:" + releases.Pin("v1.23.20") + "\n"},
				"kubeadm/migrate/leader-migration.yaml": {"apiVersion: controllermanager.config.k8s.io/v1beta1\n", "resourceLock: leases\n"},
			}},
		{name: "a release of one's choice, and other options, in every mode",
			args:    []string{"--out", "mine", "--distro=rke", "--image-tag=v1.26.10", "--host-network=false", "--leader-name=my-lease", "--kcm-user=kcm", "--remove-arg=v"},
			listing: "mine/rke/install\nmine/rke/migrate\n",
			want: map[string][]string{
				"rke/install/daemonset.yaml":        {"--out=mine --distro=rke --host-network=false --remove-arg=v --leader-name=my-lease --kcm-user=kcm --image-tag=v1.26.10\n", "cloud-controller-manager:" + releases.Pin("v1.26.10") + "\n"},
				"rke/migrate/daemonset.yaml":        {"cloud-controller-manager:" + releases.Pin("v1.26.10") + "\n"},
				"rke/migrate/leader-migration.yaml": {`leaderName: "my-lease"`, "name: kcm\n"},
			},
			notWant: map[string][]string{"rke/install/daemonset.yaml": {"hostNetwork: true", "- --v="}}},
		{name: "install mode keeps the chart's image unless the cluster's version is given",
			args: []string{"--out", "plain", "--mode=install"}, listing: "plain/auto/install\nplain/rke/install\nplain/rke2/install\nplain/k3s/install\nplain/kubeadm/install\n",
			notWant: map[string][]string{"rke2/install/daemonset.yaml": {"image:"}}},
		{name: "the guard: judging the pinned CCM, or the pod's where nothing is pinned",
			args:    []string{"--out", "guarded", "--distro=rke2", "--guard-image=registry.example/r@sha256:" + strings.Repeat("ab", 32)},
			listing: "guarded/rke2/install\nguarded/rke2/migrate\n",
			want: map[string][]string{
				"rke2/install/daemonset.yaml":     {"initContainers:\n", "- name: aws-ccm-renderer-guard\n", "image: registry.example/r@sha256:abab", "- --ccm-version=auto\n"},
				"rke2/install/guard.yaml":         {"kind: Role\n", "kind: RoleBinding\n", "- leases\n"},
				"rke2/install/kustomization.yaml": {"- guard.yaml\n"},
				"rke2/migrate/daemonset.yaml":     {"- --mode=migrate\n", "- --ccm-version=v1.26.14\n"},
				"rke2/migrate/kustomization.yaml": {"- leader-migration.yaml\n", "- guard.yaml\n"},
			},
			notWant: map[string][]string{"rke2/migrate/leader-migration.yaml": {":guard"}, "rke2/install/daemonset.yaml": {"--ccm-version=v1."}}},
		{name: "K3s: only install",
			args: []string{"--out", "k3s", "--distro=k3s"}, listing: "k3s/k3s/install\n",
			want: map[string][]string{"k3s/install/kustomization.yaml": {"--out=k3s --distro=k3s\n"}}},
		{name: "Flux: the pin is a chart value",
			args:    []string{"--format=flux", "--out", "flux", "--distro=rke2", "--mode=migrate", "--kube-version=v1.24.17"},
			listing: "flux/rke2/migrate\n",
			want: map[string][]string{
				"rke2/migrate/helmrelease.yaml":      {"#   aws-ccm-renderer overlays --format=flux --out=flux --distro=rke2 --mode=migrate --kube-version=v1.24.17\n", "  values:\n    image:\n      tag: " + releases.Pin("v1.24.19") + "\n"},
				"source/helmrepository.yaml":         {"--format=flux"},
				"rke2/migrate/leader-migration.yaml": {"apiVersion: controllermanager.config.k8s.io/v1\n"},
			},
			notWant: map[string][]string{"rke2/migrate/helmrelease.yaml": {"image: registry"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := run(t, "", append([]string{"overlays"}, c.args...)...)
			if code != ExitOK || errOut != "" || out != c.listing {
				t.Fatalf("exit %d, stdout %q (want %q), stderr %q", code, out, c.listing, errOut)
			}
			dir := c.args[slices.Index(c.args, "--out")+1]
			read := func(name string) string {
				b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			for name, wants := range c.want {
				for _, w := range wants {
					if got := read(name); !strings.Contains(got, w) {
						t.Errorf("%s lacks %q:\n%s", name, w, got)
					}
				}
			}
			for name, nots := range c.notWant {
				for _, w := range nots {
					if got := read(name); strings.Contains(got, w) {
						t.Errorf("%s has %q:\n%s", name, w, got)
					}
				}
			}
			// The command in the header, run again, writes the same files.
			before := readDir(t, dir)
			header := regexp.MustCompile(`(?m)^#   (aws-ccm-renderer overlays .*)$`).FindStringSubmatch(before[firstYAML(before)])
			if header == nil {
				t.Fatalf("no command in the header of %s", firstYAML(before))
			}
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if code, _, errOut := run(t, "", strings.Fields(header[1])[1:]...); code != ExitOK {
				t.Fatalf("%s: exit %d, %s", header[1], code, errOut)
			}
			if after := readDir(t, dir); !maps.Equal(after, before) {
				t.Errorf("%s writes other files than the first run", header[1])
			}
		})
	}
}

// readDir reads every file under dir, by slash-separated relative path.
func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// firstYAML names the first YAML file of a tree.
func firstYAML(files map[string]string) string {
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if strings.HasSuffix(name, ".yaml") {
			return name
		}
	}
	return ""
}
