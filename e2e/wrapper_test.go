package e2e

import (
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// renderer runs the aws-ccm-renderer binary (its chart wrapper commands use
// the Helm SDK in-process) against the test cluster.
func rendererCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	args = append(args, "--kubeconfig", cp.Kubeconfig)
	out, errOut, err := testtools.Run(t, testtools.HelmEnv(t), testtools.Renderer(t), args...)
	return string(out), string(errOut), err
}

// The chart wrapper commands' exit codes (cmd/cli).
const (
	exitInput   = 1
	exitChanges = 2 // diff --detailed-exitcode (--exit-code)
)

// clusterMinor is the test cluster's Kubernetes minor, "1.37".
func clusterMinor(t *testing.T) string {
	t.Helper()
	v, err := cp.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(v.Major, "v") + "." + strings.TrimSuffix(v.Minor, "+")
}

// releaseSet are the values that keep a release of the upstream chart to
// its own namespace and names, with a CCM image of the cluster's minor.
func releaseSet(t *testing.T, release, ns string) string {
	return "namespace=" + ns + ",nameOverride=" + release + ",clusterRoleName=" + release + ",serviceAccountName=" + release + "-sa" +
		",image.tag=v" + clusterMinor(t) + ".0"
}

// wrapperChartTag is the wrapper chart's value that pins a CCM image of the
// cluster's minor: the chart refuses another minor's, the upstream chart's
// default included.
func wrapperChartTag(t *testing.T) string {
	return "aws-cloud-controller-manager.image.tag=v" + clusterMinor(t) + ".0"
}

// TestWrapperInstallUpgrade: `aws-ccm-renderer install` makes a real Helm
// release that the Helm CLI lists, `diff --deployed` shows what an upgrade
// would change, `aws-ccm-renderer upgrade` applies it, and a plain
// `helm upgrade` can take the release over.
func TestWrapperInstallUpgrade(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	release := "wrap"
	ns := namespace(t, release)
	set := releaseSet(t, release, ns)
	// Before the install, diff shows everything the install would create
	// (--kubeconfig implies --deployed).
	out, errOut, err := rendererCmd(t, "diff", release, chart, "--namespace", ns, "--set", set, "--distro=rke2", "--detailed-exitcode")
	if testtools.ExitCode(err) != exitChanges || !strings.HasPrefix(out, "wrap, wrap-sa, ServiceAccount (v1) has been added:\n") ||
		!strings.Contains(out, "\nwrap, wrap, DaemonSet (apps) has been added:\n+ apiVersion: apps/v1\n") || strings.Contains(out, "\n-") ||
		!strings.Contains(out, "\n+       hostNetwork: true\n") ||
		!strings.HasSuffix(out, "\nSummary: 0 changed, 5 added, 0 removed, 0 unchanged (no release wrap in namespace wrap → install)\n") {
		t.Errorf("diff before the install: exit %d, %s\n%s", testtools.ExitCode(err), errOut, out)
	}
	// No kubelet runs here, so no pod ever becomes ready: --atomic waits,
	// times out (a cluster state, exit 3) and uninstalls what it installed.
	_, errOut, err = rendererCmd(t, "install", release, chart, "--namespace", ns, "--set", set, "--distro=rke2", "--atomic", "--timeout=3s")
	// The error names what was not ready and how to learn why.
	if testtools.ExitCode(err) != 3 || !strings.Contains(errOut, "uninstall") || strings.Count(errOut, "\n") != 1 ||
		!strings.Contains(errOut, "; not ready after 3s: DaemonSet "+ns+"/"+release+" (") ||
		!strings.HasSuffix(errOut, "; --atomic uninstalled it: aws-ccm-renderer template "+release+" ... | aws-ccm-renderer check -f - says why, with the same flags\n") {
		t.Errorf("install --atomic without ready pods: exit %d, %s", testtools.ExitCode(err), errOut)
	}
	if list := helm(t, "list", "--namespace", ns, "--all"); strings.Contains(list, release) {
		t.Errorf("--atomic left the release behind:\n%s", list)
	}

	out, errOut, err = rendererCmd(t, "install", release, chart, "--namespace", ns, "--set", set, "--distro=rke2")
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

	// Another RELEASE than the CCM's: the one that owns it, for each
	// command that would otherwise install a second CCM or compare with
	// nothing.
	owned := "aws-ccm-renderer: no release other in namespace " + ns + ", and the CCM (DaemonSet " + ns + "/" + release + ") is owned by release " + release + ": use "
	for _, verb := range []string{"install", "diff"} {
		out, errOut, err := rendererCmd(t, verb, "other", chart, "--namespace", ns, "--set", set, "--distro=rke2")
		if want := owned + release + " as RELEASE (aws-ccm-renderer " + verb + " " + release + " ...)\n"; testtools.ExitCode(err) != exitInput || out != "" || errOut != want {
			t.Errorf("%s of another release: exit %d, %q\nstderr %q\nwant   %q", verb, testtools.ExitCode(err), out, errOut, want)
		}
	}
	if out, errOut, err := rendererCmd(t, "check", "--release", "other", "--namespace", ns); testtools.ExitCode(err) != exitInput || out != "" || errOut != strings.Replace(owned, "aws-ccm-renderer: ", "aws-ccm-renderer: context e2e: ", 1)+"--release "+release+"\n" {
		t.Errorf("check --release of another release: exit %d, %q, %q", testtools.ExitCode(err), out, errOut)
	}

	// Nothing to change with the same options.
	if out, errOut, err := rendererCmd(t, "diff", release, chart, "--namespace", ns, "--set", set, "--distro=rke2", "--deployed", "--detailed-exitcode"); err != nil || out != "" {
		t.Errorf("diff --deployed with the same options: %v, %q, %s", err, out, errOut)
	}
	// Migrate mode would change the args and add the ConfigMap. (The test
	// cluster, 1.37, has no in-tree provider to migrate from: the renderer
	// renders migrate mode for it only when told to.)
	out, _, err = rendererCmd(t, "diff", release, chart, "--namespace", ns, "--set", set, "--distro=rke2", "--mode=migrate", "--allow-version-skew", "--deployed", "--detailed-exitcode")
	if testtools.ExitCode(err) != exitChanges || !strings.Contains(out, "\n+             - --enable-leader-migration=true\n") ||
		!strings.HasPrefix(out, "wrap, wrap-leader-migration, ConfigMap (v1) has been added:\n") ||
		!strings.Contains(out, "\nwrap, wrap, DaemonSet (apps) has changed:\n") ||
		!strings.Contains(out, "\nSummary: 1 changed, 3 added, 0 removed, 4 unchanged (release wrap revision 1 → upgrade)\n") {
		t.Errorf("diff --deployed to migrate: exit %d\n%s", testtools.ExitCode(err), out)
	}

	if _, errOut, err := rendererCmd(t, "upgrade", release, chart, "--namespace", ns, "--set", set, "--distro=rke2", "--mode=migrate", "--allow-version-skew"); err != nil {
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

	// upgrade --install of a new release, in a namespace it creates.
	release2 := "wrap-new"
	ns2 := release2
	set2 := releaseSet(t, release2, ns2)
	if _, errOut, err := rendererCmd(t, "upgrade", release2, chart, "--install", "--create-namespace", "--namespace", ns2, "--set", set2, "--distro=k3s"); err != nil {
		t.Fatalf("upgrade --install: %v\n%s", err, errOut)
	}
	if nodes := settle(t, ns2, release2); !slices.Equal(onFixture(nodes, "k3s"), controlPlaneNodes("k3s")) {
		t.Errorf("pods on %v", nodes)
	}
}

// wrapperChartCopy returns a copy of charts/aws-ccm-rancher with its
// dependency, the upstream chart package, in charts/.
func wrapperChartCopy(t *testing.T) string {
	t.Helper()
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
	return chart
}

// TestWrapperChartInstall installs charts/aws-ccm-rancher with the real Helm
// CLI: every distribution's install preset lands on exactly that
// distribution's control-plane nodes with the RBAC the CCM needs; the RKE
// migrate preset adds the leader migration ConfigMap and flags, and an
// upgrade to the install preset afterwards removes them.
func TestWrapperChartInstall(t *testing.T) {
	chart := wrapperChartCopy(t)
	values := func(release, ns string) string {
		return "aws-cloud-controller-manager.namespace=" + ns + ",aws-cloud-controller-manager.nameOverride=" + release +
			",aws-cloud-controller-manager.clusterRoleName=" + release + ",aws-cloud-controller-manager.serviceAccountName=" + release + "-sa," + wrapperChartTag(t)
	}
	for _, d := range fixtureDistros {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			release := "wrapchart-" + d
			ns := namespace(t, release)
			helm(t, "install", release, chart, "--namespace", ns, "-f", filepath.Join(chart, "presets", d+"-install.yaml"), "--set", values(release, ns))
			if nodes := settle(t, ns, release); !slices.Equal(onFixture(nodes, d), controlPlaneNodes(d)) {
				t.Errorf("pods on %v, want %v", onFixture(nodes, d), controlPlaneNodes(d))
			}
			// The release's grants in the authorizer's view, which takes
			// each object a moment after Helm wrote it.
			harness.WaitAccess(t, cp.Client, 30*time.Second, []harness.AccessExpectation{
				access(ns, release+"-sa", "get", "serviceaccounts", "", true),
				access(ns, release+"-sa", "create", "serviceaccounts", "token", true),
			})
		})
	}
	t.Run("rke migrate, then install", func(t *testing.T) {
		t.Parallel()
		release := "wrapchart-migrate"
		ns := namespace(t, release)
		// The test cluster (1.37) has no in-tree provider to migrate from:
		// the chart installs migrate mode on it only when told to.
		set := values(release, ns) + ",aws-cloud-controller-manager.extraVolumes[0].name=aws-ccm-leader-migration" +
			",aws-cloud-controller-manager.extraVolumes[0].configMap.name=" + release + "-leader-migration,allowVersionSkew=true"
		helm(t, "install", release, chart, "--namespace", ns, "-f", filepath.Join(chart, "presets", "rke-migrate.yaml"), "--set", set)
		if nodes := settle(t, ns, release); !slices.Equal(onFixture(nodes, "rke"), controlPlaneNodes("rke")) {
			t.Errorf("pods on %v, want %v", onFixture(nodes, "rke"), controlPlaneNodes("rke"))
		}
		cm, err := cp.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), release+"-leader-migration", metav1.GetOptions{})
		if err != nil || !strings.Contains(cm.Data["leader-migration.yaml"], "name: service-lb-controller") {
			t.Errorf("leader migration ConfigMap: %v %v", err, cm.Data)
		}
		if _, args := liveDaemonSet(t, ns, release); !slices.Contains(args, "--enable-leader-migration=true") || !hasArgPrefix(args, "--leader-migration-config=") {
			t.Errorf("migrate args %q", args)
		}

		helm(t, "upgrade", release, chart, "--namespace", ns, "-f", filepath.Join(chart, "presets", "rke-install.yaml"), "--set", values(release, ns))
		if _, err := cp.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), release+"-leader-migration", metav1.GetOptions{}); err == nil {
			t.Error("the leader migration ConfigMap outlives migrate mode")
		}
		ds, err := cp.Client.AppsV1().DaemonSets(ns).Get(context.Background(), release, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if args := ds.Spec.Template.Spec.Containers[0].Args; hasArgPrefix(args, "--enable-leader-migration") || hasArgPrefix(args, "--leader-migration-config") ||
			len(ds.Spec.Template.Spec.Volumes) != 0 {
			t.Errorf("after the upgrade to install: args %q, volumes %v", args, ds.Spec.Template.Spec.Volumes)
		}
		if nodes := settle(t, ns, release); !slices.Equal(onFixture(nodes, "rke"), controlPlaneNodes("rke")) {
			t.Errorf("after the upgrade: pods on %v", onFixture(nodes, "rke"))
		}
		if list := helm(t, "list", "--namespace", ns); !strings.Contains(list, release) || !strings.Contains(list, "aws-ccm-rancher-0.1.0") {
			t.Errorf("helm list:\n%s", list)
		}
	})
}

// TestWrapperDiffSecrets: diff --deployed against a real release never
// prints Secret data, on either side, and still shows that it changed.
func TestWrapperDiffSecrets(t *testing.T) {
	chart := filepath.Join(t.TempDir(), "sample")
	if err := os.CopyFS(chart, os.DirFS(testtools.SampleChart())); err != nil {
		t.Fatal(err)
	}
	secret := `apiVersion: v1
kind: Secret
metadata:
  name: {{ .Values.name }}-credentials
  namespace: {{ .Values.namespace }}
data:
  password: {{ .Values.password | b64enc }}
stringData:
  token: {{ .Values.token | quote }}
`
	if err := os.WriteFile(filepath.Join(chart, "templates", "secret.yaml"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	// A Secret Helm applies from the items of a ConfigMap (Helm and
	// kubectl flatten items of any object), with the annotation kubectl
	// apply writes, which holds the values again.
	carrier := `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Values.name }}-carrier
  namespace: {{ .Values.namespace }}
items:
- apiVersion: v1
  kind: Secret
  metadata:
    name: {{ .Values.name }}-hidden
    namespace: {{ .Values.namespace }}
    annotations:
      kubectl.kubernetes.io/last-applied-configuration: {{ dict "apiVersion" "v1" "kind" "Secret" "data" (dict "hidden" (.Values.password | b64enc)) | toJson | quote }}
  data:
    hidden: {{ .Values.token | b64enc }}
`
	if err := os.WriteFile(filepath.Join(chart, "templates", "carrier.yaml"), []byte(carrier), 0o644); err != nil {
		t.Fatal(err)
	}
	release := "wrap-secret"
	ns := namespace(t, release)
	set := "namespace=" + ns + ",name=" + release + ",serviceAccount=" + release + ",clusterRole=" + release
	if _, errOut, err := rendererCmd(t, "install", release, chart, "--namespace", ns, "--set", set+",password=old-pass-1,token=old-token-1", "--distro=k3s"); err != nil {
		t.Fatalf("install: %v\n%s", err, errOut)
	}
	// Every mode: the release's manifest (--deployed, the default with a
	// cluster), the cluster's objects (--live), text and JSON.
	for _, mode := range [][]string{{"--deployed"}, {"--live"}, {"--deployed", "-o", "json"}, {"--live", "-o", "json"}} {
		out, errOut, err := rendererCmd(t, append([]string{"diff", release, chart, "--namespace", ns, "--set", set + ",password=new-pass-2,token=new-token-2", "--distro=k3s", "--detailed-exitcode"}, mode...)...)
		if testtools.ExitCode(err) != exitChanges {
			t.Fatalf("diff %v: exit %d, %s\n%s", mode, testtools.ExitCode(err), errOut, out)
		}
		for _, secret := range []string{"old-pass-1", "new-pass-2", "old-token-1", "new-token-2"} {
			if strings.Contains(out+errOut, secret) || strings.Contains(out+errOut, base64.StdEncoding.EncodeToString([]byte(secret))) {
				t.Errorf("diff %v shows %s:\n%s", mode, secret, out)
			}
		}
		if !strings.Contains(out, release+"-hidden") {
			t.Errorf("diff %v does not show the Secret in the ConfigMap's items:\n%s", mode, out)
		}
		if len(mode) == 1 && (!regexp.MustCompile(`\n-   password: \(redacted [0-9a-f]{8}\)\n`).MatchString(out) ||
			!regexp.MustCompile(`\n\+   password: \(redacted [0-9a-f]{8}\)\n`).MatchString(out) ||
			!regexp.MustCompile(`\n[-+ ]   hidden: \(redacted [0-9a-f]{8}\)\n`).MatchString(out)) {
			t.Errorf("diff %v: the change of the secrets does not show:\n%s", mode, out)
		}
	}
	// The same values: nothing to show.
	out, errOut, err := rendererCmd(t, "diff", release, chart, "--namespace", ns, "--set", set+",password=old-pass-1,token=old-token-1", "--distro=k3s", "--detailed-exitcode")
	if err != nil || out != "" {
		t.Errorf("diff with the same values: exit %d, %s\n%s", testtools.ExitCode(err), errOut, out)
	}
}

// recordedOptions reads the renderer's options annotation of a live
// DaemonSet.
func recordedOptions(t *testing.T, ns, name string) string {
	t.Helper()
	ds, err := cp.Client.AppsV1().DaemonSets(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ds.Annotations[renderer.OptionsAnnotation]
}

// TestWrapperUpgradeKeepsOptions: upgrade defaults the renderer's options
// to those the deployed release records, so an upgrade in the middle of a
// migration keeps leader migration on; an explicit --mode switches, and
// diff --deployed shows the switch before it happens.
func TestWrapperUpgradeKeepsOptions(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	release := "wrap-keep"
	ns := namespace(t, release)
	set := releaseSet(t, release, ns)
	// The test cluster (1.37) has no in-tree provider to migrate from: the
	// renderer renders migrate mode for it only with --allow-version-skew,
	// which a release does not record, and warns; run leaves the warning out
	// of what it returns.
	run := func(args ...string) (string, string) {
		t.Helper()
		out, errOut, err := rendererCmd(t, append(args[:1:1], append([]string{release, chart, "--namespace", ns, "--set", set, "--allow-version-skew"}, args[1:]...)...)...)
		if err != nil {
			t.Fatalf("%v: exit %d, %s", args, testtools.ExitCode(err), errOut)
		}
		return out, withoutSkewWarning(errOut)
	}
	run("install", "--distro=rke", "--mode=migrate", "--set-arg=v=3")
	if got := recordedOptions(t, ns, release); got != `{"distro":"rke","mode":"migrate","setArgs":["v=3"]}` {
		t.Fatalf("recorded options %s", got)
	}

	// An upgrade without renderer flags keeps them and says so.
	_, errOut := run("upgrade", "--set", "args[0]=--v=2")
	if want := "aws-ccm-renderer: options from release wrap-keep revision 1: --distro=rke --mode=migrate --set-arg=v=3 (flags given here win; --reset-options ignores the release's)\n"; errOut != want {
		t.Errorf("upgrade stderr %q, want %q", errOut, want)
	}
	_, args := liveDaemonSet(t, ns, release)
	if !slices.Contains(args, "--enable-leader-migration=true") || !slices.Contains(args, "--v=3") {
		t.Errorf("upgrade without flags: args %q", args)
	}
	if nodes := settle(t, ns, release); !slices.Equal(onFixture(nodes, "rke"), controlPlaneNodes("rke")) {
		t.Errorf("pods on %v", nodes)
	}
	if _, err := cp.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), renderer.LeaderMigrationConfigMapName(release), metav1.GetOptions{}); err != nil {
		t.Errorf("leader migration ConfigMap: %v", err)
	}

	// diff --deployed defaults the same way: nothing to change ...
	if out, errOut, err := rendererCmd(t, "diff", release, chart, "--namespace", ns, "--set", set+",args[0]=--v=2", "--allow-version-skew", "--exit-code"); err != nil || out != "" {
		t.Errorf("diff --deployed without flags: exit %d, %s\n%s", testtools.ExitCode(err), errOut, out)
	}
	// ... and an explicit --mode=install shows the switch: the recorded
	// options, the args and the ConfigMap.
	out, errOut, err := rendererCmd(t, "diff", release, chart, "--namespace", ns, "--set", set+",args[0]=--v=2", "--mode=install", "--exit-code")
	if testtools.ExitCode(err) != exitChanges {
		t.Fatalf("diff --mode=install: exit %d, %s", testtools.ExitCode(err), errOut)
	}
	for _, want := range []string{
		`-     aws-ccm-renderer.io/options: '{"distro":"rke","mode":"migrate","setArgs":["v=3"]}'`,
		`+     aws-ccm-renderer.io/options: '{"distro":"rke","mode":"install","setArgs":["v=3"]}'`,
		"-             - --enable-leader-migration=true",
		"- kind: ConfigMap",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diff --mode=install lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "options from release wrap-keep revision 2: --distro=rke --set-arg=v=3 ") {
		t.Errorf("diff --mode=install stderr: %s", errOut)
	}

	run("upgrade", "--set", "args[0]=--v=2", "--mode=install")
	if _, args := liveDaemonSet(t, ns, release); hasArgPrefix(args, "--enable-leader-migration") || !slices.Contains(args, "--v=3") {
		t.Errorf("upgrade --mode=install: args %q", args)
	}
	if _, err := cp.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), renderer.LeaderMigrationConfigMapName(release), metav1.GetOptions{}); err == nil {
		t.Error("the leader migration ConfigMap outlives migrate mode")
	}
	if got := recordedOptions(t, ns, release); got != `{"distro":"rke","mode":"install","setArgs":["v=3"]}` {
		t.Errorf("recorded options after the switch: %s", got)
	}

	// --reset-options: the flags' defaults (--distro=auto), whatever the
	// release records.
	out, errOut, err = rendererCmd(t, "diff", release, chart, "--namespace", ns, "--set", set+",args[0]=--v=2", "--reset-options", "--exit-code")
	if testtools.ExitCode(err) != exitChanges || strings.Contains(errOut, "options from release") ||
		!strings.Contains(out, "+             - --v=2") || !strings.Contains(out, "+       affinity:\n") {
		t.Errorf("diff --reset-options: exit %d, %s\n%s", testtools.ExitCode(err), errOut, out)
	}
}

// TestWrapperKubeVersionFromCluster: against a cluster, the renderer checks
// the CCM's version against the cluster's (discovery), unless --kube-version
// says otherwise.
func TestWrapperKubeVersionFromCluster(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	minor := clusterMinor(t)
	release := "wrap-skew"
	ns := namespace(t, release)
	// The chart's own image, one minor newer than the cluster.
	base := "namespace=" + ns + ",nameOverride=" + release + ",clusterRoleName=" + release + ",serviceAccountName=" + release + "-sa"
	ccm := renderer.ImageTag(chartImage(t, chart))
	if ccm == "" || strings.HasPrefix(ccm, "v"+minor+".") {
		t.Fatalf("the chart's CCM %q must not be of the cluster's minor %s for this test", ccm, minor)
	}
	// migrate on the cluster, whose version comes from discovery: it has
	// no in-tree provider to migrate from (1.37); refused before anything
	// is created.
	out, errOut, err := rendererCmd(t, "install", release, chart, "--namespace", ns, "--set", base, "--distro=rke", "--mode=migrate")
	if testtools.ExitCode(err) != exitInput || out != "" || strings.Count(errOut, "\n") != 1 ||
		!strings.Contains(errOut, "the cluster (--kube-version v"+minor+".") || !strings.Contains(errOut, "has no in-tree AWS provider to migrate from (it ends with 1.26): use --mode=install") {
		t.Errorf("install --mode=migrate on a %s cluster: exit %d, %q, %s", minor, testtools.ExitCode(err), out, errOut)
	}
	if list := helm(t, "list", "--namespace", ns, "--all"); strings.Contains(list, release) {
		t.Errorf("a refused install left a release:\n%s", list)
	}
	// install mode: a warning naming the cluster's minor.
	_, errOut, err = rendererCmd(t, "diff", release, chart, "--namespace", ns, "--set", base, "--distro=rke")
	if err != nil || !strings.Contains(errOut, "aws-ccm-renderer: warning: the CCM (image ") || !strings.Contains(errOut, "and the cluster "+minor+":") {
		t.Errorf("diff of a newer CCM: %v, %s", err, errOut)
	}
	// --kube-version wins over the cluster's: far from it, a warning for
	// that version; the CCM's own minor, neither warning nor refusal.
	_, errOut, err = rendererCmd(t, "diff", release, chart, "--namespace", ns, "--set", base, "--distro=rke", "--kube-version=v1.20.0")
	if err != nil || !strings.Contains(errOut, "and the cluster 1.20:") {
		t.Errorf("diff --kube-version=v1.20.0: %v, %s", err, errOut)
	}
	ccmMinor := strings.Join(strings.SplitN(strings.TrimPrefix(ccm, "v"), ".", 3)[:2], ".")
	_, errOut, err = rendererCmd(t, "diff", release, chart, "--namespace", ns, "--set", base, "--distro=rke", "--kube-version=v"+ccmMinor+".1")
	// (Only what diff compares, which it says when no flag chose it.)
	if want := "aws-ccm-renderer: no release " + release + " in namespace " + ns + " in the cluster of --kubeconfig: showing what an install would create " +
		"(--renderer-only shows what the renderer changes in the chart's output)\n"; err != nil || errOut != want {
		t.Errorf("diff --kube-version of the CCM's minor: %v, %s", err, errOut)
	}
	// A client-side dry run of upgrade --install, for a release not there
	// yet, shows charts the cluster's version too.
	kv := t.TempDir()
	testtools.WriteFile(t, filepath.Join(kv, "Chart.yaml"), []byte("apiVersion: v2\nname: kube-version\nversion: 0.1.0\n"))
	testtools.WriteFile(t, filepath.Join(kv, "templates", "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: v\ndata:\n  version: {{ .Capabilities.KubeVersion.Version | quote }}\n"))
	server, err := cp.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, err = rendererCmd(t, "upgrade", "--install", "kv-"+release, kv, "--namespace", ns, "--dry-run=client", "--allow-missing-workload")
	if err != nil || !strings.Contains(out, "version: \""+server.GitVersion+"\"\n") {
		t.Errorf("upgrade --install --dry-run=client: %v, %s\n%s, want version %s", err, errOut, out, server.GitVersion)
	}
	// A CCM of the cluster's minor: silent.
	if _, errOut, err := rendererCmd(t, "install", release, chart, "--namespace", ns, "--set", releaseSet(t, release, ns), "--distro=rke"); err != nil || errOut != "" {
		t.Errorf("install of the cluster's minor: %v, %s", err, errOut)
	}
}

// withoutSkewWarning drops from a command's stderr the warning that
// --allow-version-skew leaves in migrate mode on the test cluster.
func withoutSkewWarning(stderr string) string {
	var kept []string
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if !strings.Contains(l, "(rendered anyway: --allow-version-skew)") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "")
}

// chartImage is the CCM image a chart package's defaults name.
func chartImage(t *testing.T, chart string) string {
	t.Helper()
	out := helm(t, "show", "values", chart)
	var repo, tag string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(l, "repository: "); ok && repo == "" {
			repo = v
		}
		if v, ok := strings.CutPrefix(l, "tag: "); ok && tag == "" {
			tag = strings.Trim(v, `"`)
		}
	}
	return repo + ":" + tag
}

// TestWrapperUninstalledRelease: a release uninstalled with --keep-history
// does not exist any more, as for the Helm CLI: upgrade --install installs
// it again and diff --deployed shows what the install would create.
func TestWrapperUninstalledRelease(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	release := "wrap-uninstalled"
	ns := namespace(t, release)
	set := wrapValues(release, ns) + ",image.tag=v" + clusterMinor(t) + ".0"
	if out, errOut, err := rendererCmd(t, "install", release, chart, "--namespace", ns, "--set", set, "--distro=rke"); err != nil {
		t.Fatalf("install: %v\n%s%s", err, out, errOut)
	}
	helm(t, "uninstall", release, "--namespace", ns, "--keep-history")

	out, errOut, err := rendererCmd(t, "diff", release, chart, "--namespace", ns, "--set", set, "--distro=rke", "--detailed-exitcode")
	if code := testtools.ExitCode(err); code != exitChanges || !strings.Contains(out, "DaemonSet (apps) has been added:") || !strings.Contains(out, "→ install") {
		t.Errorf("diff: exit %d, stderr %q\n%s", code, errOut, out)
	}
	out, errOut, err = rendererCmd(t, "upgrade", release, chart, "--install", "--namespace", ns, "--set", set, "--distro=rke")
	if err != nil || !strings.Contains(out, "revision 2, deployed") {
		t.Fatalf("upgrade --install: %v, stderr %q\n%s", err, errOut, out)
	}
	if _, err := cp.Client.AppsV1().DaemonSets(ns).Get(context.Background(), release, metav1.GetOptions{}); err != nil {
		t.Errorf("after upgrade --install: %v", err)
	}
}

// TestWrapperChartReadme runs the example of charts/aws-ccm-rancher/README.md
// as written, with bash, the real Helm 3 CLI as `helm` and crane, from the
// directory it names in a copy of the repository's layout, against the test
// cluster: the RKE2 preset's CCM lands on exactly the RKE2 control-plane
// nodes, its image pinned by the digest crane read. The lines not run are
// `helm repo add` and `helm dependency build`, which need the upstream
// repository (the tests have no network): the copy holds the dependency
// where they put it, and TestChartLock runs Helm's dependency build from
// Chart.lock against the repository served from files. crane's line reads
// a registry in registry.k8s.io's place, serving a random index under the
// tag.
func TestWrapperChartReadme(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(testtools.Root(), "charts", "aws-ccm-rancher", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "\n```sh\n")
	block, _, closed := strings.Cut(block, "\n```\n")
	if !ok || !closed {
		t.Fatalf("the chart's README has no sh block:\n%s", readme)
	}
	const dir = "charts/aws-ccm-rancher"
	network := []string{"helm repo add aws-cloud-provider " + upstream.ChartRepo, "helm dependency build"}
	lines := strings.Split(block, "\n")
	if lines[0] != "cd "+dir || !slices.Equal(lines[1:3], network) {
		t.Fatalf("the README's example does not start in %s with the dependency %q:\n%s", dir, network, block)
	}
	lines = slices.Delete(lines, 1, 3)
	digestLine := regexp.MustCompile(`^digest=\$\(crane digest (registry\.k8s\.io/provider-aws/cloud-controller-manager:v1\.\d+\.\d+)\)$`)
	i := slices.IndexFunc(lines, digestLine.MatchString)
	if i < 0 {
		t.Fatalf("the README's example reads no digest with crane:\n%s", block)
	}
	image := digestLine.FindStringSubmatch(lines[i])[1]
	host, digest := testtools.ServeImage(t, image)
	lines[i] = strings.Replace(lines[i], "registry.k8s.io", host, 1)
	script := strings.Join(lines, "\n")

	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, filepath.FromSlash(dir)), os.DirFS(wrapperChartCopy(t))); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for name, tool := range map[string]string{"helm": testtools.Helm3(t), "crane": testtools.Crane(t)} {
		if err := os.Symlink(tool, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = root
	cmd.Env = append(testtools.HelmEnv(t), "KUBECONFIG="+cp.Kubeconfig, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's example:\n%s\n%v\n%s", script, err, out)
	}
	t.Cleanup(func() { helm(t, "uninstall", "aws-ccm", "--namespace", "kube-system", "--wait") })
	if nodes := settle(t, "kube-system", "aws-cloud-controller-manager"); !slices.Equal(onFixture(nodes, "rke2"), controlPlaneNodes("rke2")) {
		t.Errorf("the README's install: pods on %v, want %v", onFixture(nodes, "rke2"), controlPlaneNodes("rke2"))
	}
	ds, err := cp.Client.AppsV1().DaemonSets("kube-system").Get(context.Background(), "aws-cloud-controller-manager", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ds.Spec.Template.Spec.Containers[0].Image, image+"@"+digest; got != want {
		t.Errorf("the README's install runs %s, want %s (the digest crane read)", got, want)
	}
}

// TestWrapperHelmDiffHabits: diff as a helm-diff user runs it. With the
// cluster in $KUBECONFIG alone, diff compares with the release when it
// exists and says so, and shows what the renderer changes when it does
// not (--allow-unreleased: what an install would create); diff upgrade
// RELEASE CHART is the same diff; --three-way-merge is --live;
// --renderer-only keeps the chart's view; another RELEASE than the CCM's
// is named.
func TestWrapperHelmDiffHabits(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	release := "habits"
	ns := namespace(t, release)
	set := releaseSet(t, release, ns)
	env := []string{"KUBECONFIG=" + cp.Kubeconfig}
	base := []string{release, chart, "--namespace", ns, "--set", set, "--distro=rke2"}
	diffOf := func(args ...string) (string, string, int) {
		return rendererEnv(t, env, append(append([]string{"diff"}, args...), base[1:]...)...)
	}

	out, errOut, code := diffOf(release)
	if code != 0 || !strings.HasSuffix(out, " → patched by aws-ccm-renderer)\n") ||
		errOut != "aws-ccm-renderer: no release habits in namespace habits in the cluster of $KUBECONFIG: showing what the renderer changes in the chart's output "+
			"(--allow-unreleased shows what an install would create)\n" {
		t.Errorf("diff before the install: exit %d, stderr %q\n%s", code, errOut, out)
	}
	out, errOut, code = diffOf(release, "--allow-unreleased")
	if code != 0 || !strings.HasSuffix(out, "(no release habits in namespace habits → install)\n") || errOut != "" {
		t.Errorf("--allow-unreleased before the install: exit %d, stderr %q\n%s", code, errOut, out)
	}

	if _, errOut, err := rendererCmd(t, append([]string{"install"}, base...)...); err != nil {
		t.Fatalf("install: %v\n%s", err, errOut)
	}
	said := "aws-ccm-renderer: comparing with release habits in namespace habits in the cluster of $KUBECONFIG, as helm diff upgrade does " +
		"(--renderer-only shows what the renderer changes in the chart's output)\n"
	plain, errOut, code := diffOf(release, "--set-arg=v=4", "--detailed-exitcode")
	if code != exitChanges || !strings.HasSuffix(plain, " (release habits revision 1 → upgrade)\n") ||
		!strings.Contains(plain, "\n+             - --v=4\n") || !strings.HasSuffix(errOut, said) {
		t.Errorf("diff of the release: exit %d, stderr %q\n%s", code, errOut, plain)
	}
	if out, errOut, code := diffOf("upgrade", release, "--set-arg=v=4", "--detailed-exitcode"); code != exitChanges || out != plain || !strings.HasSuffix(errOut, said) {
		t.Errorf("diff upgrade RELEASE CHART: exit %d, stderr %q, the same diff: %v", code, errOut, out == plain)
	}
	live, _, code := diffOf(release, "--set-arg=v=4", "--live")
	if out, _, code3 := diffOf(release, "--set-arg=v=4", "--three-way-merge"); code != 0 || code3 != 0 || out != live || out == plain {
		t.Errorf("--three-way-merge (exit %d) differs from --live (exit %d), or is the release's diff:\n%s", code3, code, out)
	}
	if out, errOut, code := diffOf(release, "--renderer-only"); code != 0 || !strings.HasSuffix(out, " → patched by aws-ccm-renderer)\n") || strings.Contains(errOut, "comparing") {
		t.Errorf("--renderer-only: exit %d, stderr %q\n%s", code, errOut, out)
	}
	// A RELEASE that is not the CCM's, with the cluster of $KUBECONFIG.
	out, errOut, code = diffOf("aws-cloud-controller-manager")
	if want := "aws-ccm-renderer: no release aws-cloud-controller-manager in namespace habits, and the CCM (DaemonSet habits/habits) is owned by release habits: " +
		"use habits as RELEASE (aws-ccm-renderer diff habits ...)\n"; code != exitInput || out != "" || errOut != want {
		t.Errorf("diff of another release: exit %d, %q\nstderr %q\nwant   %q", code, out, errOut, want)
	}
}
