package leadermigration

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// TestClusterVersionRefusals: against this real 1.26 control plane, where
// the cluster's version comes from the cluster and not from a flag, migrate
// mode refuses the chart's default CCM (1.35) and names the tag to pin: the
// chart wrapper's install and upgrade --install (the version by discovery;
// template, which asks no cluster, by the rule for an unknown cluster) and
// the wrapper chart under the real Helm 3 and Helm 4
// (.Capabilities.KubeVersion from the API server); with the CCM of the
// cluster's minor both go through. Nothing is installed.
func TestClusterVersionRefusals(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	// Each subtest its own Helm homes (testtools.CheckHomes).
	envOf := func(t *testing.T) []string { return append(testtools.HelmEnv(t), "KUBECONFIG="+cp.Kubeconfig) }
	server, err := cp.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if server.Minor != "26" {
		t.Fatalf("the control plane is %s, not 1.26", server.GitVersion)
	}
	pin := releases.Tag(releases.LastInTreeMinor)
	ns := "versions"
	if _, err := cp.Client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// names keeps the chart's objects apart from the runbook's release.
	names := func(prefix, release string) string {
		return prefix + "namespace=" + ns + "," + prefix + "nameOverride=" + release + "," + prefix + "clusterRoleName=" + release + "," + prefix + "serviceAccountName=" + release + "-sa"
	}

	t.Run("chart wrapper", func(t *testing.T) {
		env := envOf(t)
		flags := []string{"--namespace", ns, "--set", names("", "refused"), "--distro=rke2", "--mode=migrate"}
		minor := "the CCM (image registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0) is 1.35 and the cluster (--kube-version " + server.GitVersion + ") 1.26: " +
			"a migration runs the CCM of the cluster's minor; pin the CCM release of the cluster's minor, " + pin + " (with the upstream chart: --set image.tag=" + releases.Pin(pin) + ")"
		// template asks no cluster (as helm template): without the
		// cluster's version, the CCM is newer than any cluster that can
		// migrate.
		noCluster := "the CCM (image registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0) is 1.35, newer than any cluster that can migrate (the in-tree AWS provider ends with 1.26): " +
			"pin the CCM release of the cluster's minor (for a 1.26 cluster " + pin + ", with the upstream chart: --set image.tag=" + releases.Pin(pin) + ")"
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"install", "refused", chart}, minor},
			{[]string{"upgrade", "--install", "refused", chart}, minor},
			{[]string{"template", "refused", chart}, noCluster},
		} {
			out, errOut, err := testtools.Run(t, env, testtools.Renderer(t), append(c.args, flags...)...)
			if testtools.ExitCode(err) != 1 || len(out) != 0 || strings.Count(string(errOut), "\n") != 1 || !strings.Contains(string(errOut), c.want) {
				t.Errorf("%s --mode=migrate of the chart's CCM: exit %d, %d bytes on stdout, stderr %s; want one line saying %q", c.args[0], testtools.ExitCode(err), len(out), errOut, c.want)
			}
		}
		if list, _, err := testtools.Run(t, env, testtools.Helm3(t), "list", "--namespace", ns, "--all", "-q"); err != nil || len(list) != 0 {
			t.Errorf("the refused commands left releases: %v %s", err, list)
		}
		args := append([]string{"install", "refused", chart}, flags...)
		args = append(args, "--set", "image.tag="+pin, "--dry-run=server")
		if out, errOut, err := testtools.Run(t, env, testtools.Renderer(t), args...); err != nil || !strings.Contains(string(out), "--enable-leader-migration=true") {
			t.Errorf("install --mode=migrate --dry-run=server of the CCM of the cluster's minor: %v, %s", err, errOut)
		}
	})

	wrapper := testtools.WrapperChart(t)
	preset := filepath.Join(wrapper, "presets", "rke2-migrate.yaml")
	for _, helm := range []struct{ name, path string }{{"helm3", testtools.Helm3(t)}, {"helm4", testtools.Helm4(t)}} {
		t.Run("wrapper chart/"+helm.name, func(t *testing.T) {
			env := envOf(t)
			release := "wrapper-" + helm.name
			args := []string{"install", release, wrapper, "--namespace", ns, "-f", preset, "--set", names("aws-cloud-controller-manager.", release) +
				",aws-cloud-controller-manager.extraVolumes[0].name=aws-ccm-leader-migration,aws-cloud-controller-manager.extraVolumes[0].configMap.name=" + release + "-leader-migration"}
			out, errOut, err := testtools.Run(t, env, helm.path, append(args, "--set", "aws-cloud-controller-manager.image.tag=v1.35.0")...)
			want := "mode migrate: the CCM v1.35.0 is 1.35 and the cluster 1.26 (" + server.GitVersion + " as Helm sees it"
			fix := "set aws-cloud-controller-manager.image.tag to " + pin
			if err == nil || len(out) != 0 || !strings.Contains(string(errOut), want) || !strings.Contains(string(errOut), fix) {
				t.Errorf("helm install of the migrate preset with a 1.35 CCM: %v, %d bytes on stdout, stderr %s", err, len(out), errOut)
			}
			// The preset as it is pins the CCM of this cluster's minor.
			if out, errOut, err := testtools.Run(t, env, helm.path, append(args, "--dry-run=server")...); err != nil || !strings.Contains(string(out), "cloud-controller-manager:"+pin) {
				t.Errorf("helm install --dry-run=server of the migrate preset: %v, %s", err, errOut)
			}
		})
	}
}
