package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// renderer runs the aws-ccm-renderer binary (its chart wrapper commands use
// the Helm SDK in-process) against the test cluster.
func rendererCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	args = append(args, "--kubeconfig", cp.Kubeconfig)
	out, errOut, err := testtools.Run(t, testtools.HelmEnv(t), testtools.Renderer(t), args...)
	return string(out), string(errOut), err
}

// TestWrapperInstallUpgrade: `aws-ccm-renderer install` makes a real Helm
// release that the Helm CLI lists, `diff --deployed` shows what an upgrade
// would change, `aws-ccm-renderer upgrade` applies it, and a plain
// `helm upgrade` can take the release over.
func TestWrapperInstallUpgrade(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	release := "wrap"
	ns := namespace(t, release)
	set := "namespace=" + ns + ",nameOverride=" + release + ",clusterRoleName=" + release + ",serviceAccountName=" + release + "-sa"
	// No kubelet runs here, so no pod ever becomes ready: --atomic waits,
	// times out and uninstalls what it installed.
	_, errOut, err := rendererCmd(t, "install", release, chart, "--namespace", ns, "--set", set, "--distro=rke2", "--atomic", "--timeout=3s")
	if err == nil || !strings.Contains(errOut, "uninstall") {
		t.Errorf("install --atomic without ready pods: %v, %s", err, errOut)
	}
	if list := helm(t, "list", "--namespace", ns, "--all"); strings.Contains(list, release) {
		t.Errorf("--atomic left the release behind:\n%s", list)
	}

	out, errOut, err := rendererCmd(t, "install", release, chart, "--namespace", ns, "--set", set, "--distro=rke2")
	if err != nil {
		t.Fatalf("install: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, "release wrap in namespace wrap: revision 1, deployed") {
		t.Errorf("install output: %q", out)
	}
	if nodes := settle(t, ns, release); !slices.Equal(onFixture(nodes, "rke2"), controlPlaneNodes("rke2")) {
		t.Errorf("pods on %v", nodes)
	}
	if list := helm(t, "list", "--namespace", ns); !strings.Contains(list, release) || !strings.Contains(list, "deployed") {
		t.Errorf("helm list:\n%s", list)
	}

	// Nothing to change with the same options.
	if out, errOut, err := rendererCmd(t, "diff", release, chart, "--namespace", ns, "--set", set, "--distro=rke2", "--deployed", "--exit-code"); err != nil || out != "" {
		t.Errorf("diff --deployed with the same options: %v, %q, %s", err, out, errOut)
	}
	// Migrate mode would change the args and add the ConfigMap.
	out, _, err = rendererCmd(t, "diff", release, chart, "--namespace", ns, "--set", set, "--distro=rke2", "--mode=migrate", "--deployed", "--exit-code")
	if testtools.ExitCode(err) != 4 || !strings.Contains(out, "+            - --enable-leader-migration=true") || !strings.Contains(out, "+kind: ConfigMap") {
		t.Errorf("diff --deployed to migrate: exit %d\n%s", testtools.ExitCode(err), out)
	}

	if _, errOut, err := rendererCmd(t, "upgrade", release, chart, "--namespace", ns, "--set", set, "--distro=rke2", "--mode=migrate"); err != nil {
		t.Fatalf("upgrade: %v\n%s", err, errOut)
	}
	_, args := liveDaemonSet(t, ns, release)
	if !slices.Contains(args, "--enable-leader-migration=true") {
		t.Errorf("after upgrade --mode=migrate: args %q", args)
	}

	// A plain helm upgrade takes the release over (here back to the chart's
	// defaults, without the renderer).
	helm(t, "upgrade", release, chart, "--namespace", ns, "--set", set)
	ds, err := cp.Client.AppsV1().DaemonSets(ns).Get(context.Background(), release, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Spec.Template.Spec.HostNetwork || slices.Contains(ds.Spec.Template.Spec.Containers[0].Args, "--enable-leader-migration=true") {
		t.Error("helm upgrade did not take the release over")
	}
	if hist := helm(t, "history", release, "--namespace", ns); strings.Count(hist, "\n") < 4 {
		t.Errorf("helm history:\n%s", hist)
	}

	// upgrade --install of a new release.
	release2 := "wrap-new"
	ns2 := namespace(t, release2)
	set2 := "namespace=" + ns2 + ",nameOverride=" + release2 + ",clusterRoleName=" + release2 + ",serviceAccountName=" + release2 + "-sa"
	if _, errOut, err := rendererCmd(t, "upgrade", release2, chart, "--install", "--namespace", ns2, "--set", set2, "--distro=k3s"); err != nil {
		t.Fatalf("upgrade --install: %v\n%s", err, errOut)
	}
	if nodes := settle(t, ns2, release2); !slices.Equal(onFixture(nodes, "k3s"), controlPlaneNodes("k3s")) {
		t.Errorf("pods on %v", nodes)
	}
}

// TestWrapperChartInstall installs charts/aws-ccm-rancher (its dependency,
// the upstream chart, from the test packages) with the real Helm CLI and
// the RKE preset in migrate mode.
func TestWrapperChartInstall(t *testing.T) {
	chart := filepath.Join(t.TempDir(), "aws-ccm-rancher")
	if err := os.CopyFS(chart, os.DirFS(filepath.Join(testtools.Root(), "charts", "aws-ccm-rancher"))); err != nil {
		t.Fatal(err)
	}
	dep := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	b, err := os.ReadFile(dep)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(chart, "charts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(chart, "charts", filepath.Base(dep)), b, 0o644); err != nil {
		t.Fatal(err)
	}
	release := "wrapchart"
	ns := namespace(t, release)
	set := "aws-cloud-controller-manager.namespace=" + ns + ",aws-cloud-controller-manager.nameOverride=" + release +
		",aws-cloud-controller-manager.clusterRoleName=" + release + ",aws-cloud-controller-manager.serviceAccountName=" + release + "-sa" +
		",aws-cloud-controller-manager.extraVolumes[0].name=aws-ccm-leader-migration,aws-cloud-controller-manager.extraVolumes[0].configMap.name=" + release + "-leader-migration"
	helm(t, "install", release, chart, "--namespace", ns, "-f", filepath.Join(chart, "presets", "rke-migrate.yaml"), "--set", set)
	if nodes := settle(t, ns, release); !slices.Equal(onFixture(nodes, "rke"), controlPlaneNodes("rke")) {
		t.Errorf("pods on %v, want %v", onFixture(nodes, "rke"), controlPlaneNodes("rke"))
	}
	if _, err := cp.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), release+"-leader-migration", metav1.GetOptions{}); err != nil {
		t.Errorf("leader migration ConfigMap: %v", err)
	}
	if !can(t, ns, release+"-sa", "get", "serviceaccounts", "") {
		t.Error("the service account may not get serviceaccounts")
	}
}
