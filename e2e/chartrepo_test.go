package e2e

import (
	"bytes"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"sigs.k8s.io/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
)

// TestChartRepository: make dist's chart repository (charts/ of the
// release, signed with a key made for the test) holds the wrapper chart with
// its dependency, and an index.yaml with the annotations Rancher Apps reads;
// helm verify passes on the package with Helm 3 and 4; each installs it from
// the repository served on loopback (helm repo add, helm install --verify)
// and, pushed by Helm 3, from an in-process OCI registry (helm install
// oci://), and the CCM lands on exactly the RKE2 control-plane nodes.
func TestChartRepository(t *testing.T) {
	key := testtools.NewPGPKey(t, "aws-ccm releaser")
	dist := t.TempDir()
	cmd := exec.Command("make", "-s", "-C", testtools.Root(), "dist", "VERSION=v0.9.0", "DIST="+dist, "PLATFORMS=host",
		"HELM3="+testtools.Helm3(t), "HELM4="+testtools.Helm4(t), "CYCLONEDX="+testtools.CycloneDX(t),
		"SIGN_KEY="+key.Name, "KEYRING="+key.SecretRing)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make dist: %v\n%s", err, out)
	}
	charts := filepath.Join(dist, "charts")
	// What Helm and Rancher read of index.yaml.
	var idx struct {
		Entries map[string][]struct {
			Version, Digest string
			URLs            []string          `json:"urls"`
			Annotations     map[string]string `json:"annotations"`
		} `json:"entries"`
	}
	b, err := os.ReadFile(filepath.Join(charts, "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &idx); err != nil {
		t.Fatalf("index.yaml: %v", err)
	}
	versions := idx.Entries["aws-ccm-rancher"]
	if len(versions) != 1 {
		t.Fatalf("index.yaml has %d versions of aws-ccm-rancher", len(versions))
	}
	cv := versions[0]
	for k, want := range map[string]string{
		"catalog.cattle.io/display-name": "AWS Cloud Controller Manager (Rancher)",
		"catalog.cattle.io/namespace":    "kube-system",
		"catalog.cattle.io/release-name": "aws-cloud-controller-manager",
	} {
		if cv.Annotations[k] != want {
			t.Errorf("index.yaml: annotation %s = %q, want %q", k, cv.Annotations[k], want)
		}
	}
	if !slices.Equal(cv.URLs, []string{"aws-ccm-rancher-" + cv.Version + ".tgz"}) || cv.Digest == "" {
		t.Errorf("index.yaml: urls %q, digest %q", cv.URLs, cv.Digest)
	}
	pkg := filepath.Join(charts, cv.URLs[0])
	// Helm packs the dependency unpacked.
	dep := "aws-ccm-rancher/charts/" + upstream.ChartName + "/Chart.yaml"
	if files := testtools.ChartPackage(t, pkg); !bytes.Contains(files[dep], []byte("\nversion: "+testtools.LatestChartVersion+"\n")) {
		t.Errorf("the package's %s is not the dependency's %s:\n%s", dep, testtools.LatestChartVersion, files[dep])
	}
	for _, helm := range []string{testtools.Helm3(t), testtools.Helm4(t)} {
		out := testtools.MustRun(t, testtools.HelmEnv(t), helm, "verify", pkg, "--keyring", key.PublicRing)
		if !strings.Contains(string(out), "aws-ccm releaser") {
			t.Errorf("%s verify: %s", helm, out)
		}
	}
	// One byte changed: helm verify refuses the package.
	changed := filepath.Join(t.TempDir(), filepath.Base(pkg))
	b, err = os.ReadFile(pkg)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	testtools.WriteFile(t, changed, b)
	prov, err := os.ReadFile(pkg + ".prov")
	if err != nil {
		t.Fatal(err)
	}
	testtools.WriteFile(t, changed+".prov", prov)
	if out, errOut, err := testtools.Run(t, testtools.HelmEnv(t), testtools.Helm3(t), "verify", changed, "--keyring", key.PublicRing); err == nil {
		t.Errorf("helm verify passes a changed package:\n%s%s", out, errOut)
	}

	srv := httptest.NewServer(http.FileServer(http.Dir(charts)))
	t.Cleanup(srv.Close)
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	u, err := url.Parse(reg.URL)
	if err != nil {
		t.Fatal(err)
	}
	oci := "oci://" + u.Host + "/charts"
	out, errOut, err := testtools.Run(t, testtools.HelmEnv(t), testtools.Helm3(t), "push", pkg, oci, "--plain-http")
	if err != nil || !bytes.Contains(append(out, errOut...), []byte("Digest: sha256:")) {
		t.Fatalf("helm push: %v\n%s%s", err, out, errOut)
	}

	// --verify with another key's keyring: no release.
	for i, src := range []string{"aws-ccm/aws-ccm-rancher", oci + "/aws-ccm-rancher"} {
		env := testtools.HelmEnv(t)
		testtools.MustRun(t, env, testtools.Helm3(t), "repo", "add", "aws-ccm", srv.URL)
		ns := namespace(t, "chartrepo-refused-"+[]string{"repo", "oci"}[i])
		other := testtools.NewPGPKey(t, "someone else")
		out, errOut, err := testtools.Run(t, env, testtools.Helm3(t), "install", "refused", src, "--version", cv.Version, "--plain-http",
			"--verify", "--keyring", other.PublicRing, "--namespace", ns, "--kubeconfig", cp.Kubeconfig)
		if err == nil || !strings.Contains(string(errOut), "openpgp: signature made by unknown entity") {
			t.Errorf("helm install --verify %s with another key: %v\n%s%s", src, err, out, errOut)
		}
		if list := testtools.MustRun(t, env, testtools.Helm3(t), "list", "-q", "--namespace", ns, "--kubeconfig", cp.Kubeconfig); len(bytes.TrimSpace(list)) > 0 {
			t.Errorf("helm list after a refused install: %s", list)
		}
	}

	for _, h := range []struct{ name, bin string }{{"helm3", testtools.Helm3(t)}, {"helm4", testtools.Helm4(t)}} {
		for _, source := range []string{"repo", "oci"} {
			t.Run(h.name+" "+source, func(t *testing.T) {
				env := testtools.HelmEnv(t)
				release := "chartrepo-" + strings.TrimPrefix(h.name, "helm") + "-" + source
				ns := namespace(t, release)
				set := "aws-cloud-controller-manager.namespace=" + ns + ",aws-cloud-controller-manager.nameOverride=" + release +
					",aws-cloud-controller-manager.clusterRoleName=" + release + ",aws-cloud-controller-manager.serviceAccountName=" + release + "-sa," + wrapperChartTag(t)
				args := []string{"install", release}
				if source == "repo" {
					testtools.MustRun(t, env, h.bin, "repo", "add", "aws-ccm", srv.URL)
					args = append(args, "aws-ccm/aws-ccm-rancher", "--verify", "--keyring", key.PublicRing)
				} else {
					args = append(args, oci+"/aws-ccm-rancher", "--version", cv.Version, "--plain-http", "--verify", "--keyring", key.PublicRing)
				}
				args = append(args, "--namespace", ns, "--set", set, "--kubeconfig", cp.Kubeconfig)
				testtools.MustRun(t, env, h.bin, args...)
				if nodes := settle(t, ns, release); !slices.Equal(onFixture(nodes, "rke2"), controlPlaneNodes("rke2")) {
					t.Errorf("pods on %v, want the RKE2 control plane %v", onFixture(nodes, "rke2"), controlPlaneNodes("rke2"))
				}
			})
		}
	}
}
