package wrapper

import (
	"bytes"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// TestWrapperShowOnly: template --show-only prints what helm template
// --show-only --post-renderer prints, byte for byte: one template, a glob,
// the renderer's own objects; a template that is not there is an input
// error naming those that are.
func TestWrapperShowOnly(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	migrate := []string{"--distro=rke", "--mode=migrate", "--kube-version=v1.26.15"}
	for _, c := range []struct {
		renderer []string
		show     []string
	}{
		{[]string{"--distro=rke2"}, []string{"templates/daemonset.yaml"}},
		{[]string{"--distro=rke2"}, []string{"templates/*role*.yaml", "templates/serviceaccount.yaml"}},
		{migrate, []string{"leader-migration-config.yaml", "leader-migration-rbac.yaml"}},
	} {
		var args, helmArgs []string
		for _, s := range c.show {
			args = append(args, "--show-only", s)
			helmArgs = append(helmArgs, "--show-only", s)
		}
		helmArgs = append(helmArgs, "--set", "image.tag=v1.26.14")
		out, errOut, code := runRenderer(t, append(append([]string{"template", "ccm", chart, "--set", "image.tag=v1.26.14"}, c.renderer...), args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d, %s", c.show, code, errOut)
		}
		if want := testtools.HelmTemplate(t, chart, c.renderer, helmArgs...); !bytes.Equal(out, want) {
			t.Errorf("%v: differs from helm template --show-only:\n%s\nwant:\n%s", c.show, out, want)
		}
	}
	out, errOut, code := runRenderer(t, "template", "ccm", chart, "--distro=rke2", "-s", "templates/service.yaml")
	wantError(t, "no such template", out, errOut, code, 1, "--show-only templates/service.yaml: no such template",
		"templates/serviceaccount.yaml", "templates/daemonset.yaml")
	out, errOut, code = runRenderer(t, "template", "ccm", chart, "--distro=rke2", "-s", "templates/[")
	wantError(t, "bad pattern", out, errOut, code, 2, "--show-only")
}

// TestWrapperSetFileJSON: --set-file, --set-json and --set-literal set the
// values they set for helm template.
func TestWrapperSetFileJSON(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	tag := filepath.Join(t.TempDir(), "tag")
	testtools.WriteFile(t, tag, []byte("v1.34.1"))
	values := []string{"--set-file", "image.tag=" + tag, "--set-json", `resources={"requests":{"cpu":"300m","memory":"64Mi"}}`,
		"--set-literal", "nameOverride=ccm,literal"}
	out, errOut, code := runRenderer(t, append([]string{"template", "ccm", chart, "--distro=k3s"}, values...)...)
	if code != 0 {
		t.Fatalf("exit %d, %s", code, errOut)
	}
	for _, want := range []string{"cloud-controller-manager:v1.34.1\"", "memory: 64Mi", "name: ccm,literal"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("output lacks %q", want)
		}
	}
	if want := testtools.HelmTemplate(t, chart, []string{"--distro=k3s"}, values...); !bytes.Equal(out, want) {
		t.Errorf("differs from helm template with the same values")
	}
	out, errOut, code = runRenderer(t, "template", "ccm", chart, "--set-json", "resources={")
	wantError(t, "bad JSON", out, errOut, code, 2, "values")
}

// TestWrapperDryRunClient: install --dry-run (client) needs no cluster and
// prints what template prints; upgrade --dry-run reads the release, so it
// needs one; a --dry-run that is none of client, server, none is a usage
// error.
func TestWrapperDryRunClient(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	noCluster := filepath.Join(t.TempDir(), "none")
	want, errOut, code := runRenderer(t, "template", "ccm", chart, "--distro=rke2")
	if code != 0 {
		t.Fatalf("template: exit %d, %s", code, errOut)
	}
	for _, flag := range []string{"--dry-run", "--dry-run=client", "--dry-run=true"} {
		out, errOut, code := runRenderer(t, "install", "ccm", chart, "--distro=rke2", flag, "--kubeconfig", noCluster)
		if code != 0 || !bytes.Equal(out, want) {
			t.Errorf("install %s without a cluster: exit %d, %s, same as template: %v", flag, code, errOut, bytes.Equal(out, want))
		}
	}
	out, errOut, code := runRenderer(t, "upgrade", "ccm", chart, "--distro=rke2", "--dry-run", "--kubeconfig", noCluster)
	// A kubeconfig that is not there is the user's to fix: a usage error.
	wantError(t, "upgrade --dry-run without a cluster", out, errOut, code, 2, "--kubeconfig "+noCluster+": no such file")
	out, errOut, code = runRenderer(t, "install", "ccm", chart, "--dry-run=maybe")
	wantError(t, "--dry-run=maybe", out, errOut, code, 2, `--dry-run "maybe": use client, server or none`)
	out, errOut, code = runRenderer(t, "upgrade", "ccm", chart, "--history-max=-1")
	wantError(t, "--history-max=-1", out, errOut, code, 2, "--history-max -1")
}

// TestWrapperKubeContext: a context the kubeconfig does not have, from
// --kube-context or $HELM_KUBECONTEXT, is a usage error naming the
// contexts it has (exit 1 for diff --detailed-exitcode); --kube-context
// completes them; a context that is there but cannot be reached is exit 3.
func TestWrapperKubeContext(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	closed := httptest.NewServer(nil)
	closed.Close()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	testtools.WriteFile(t, kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: `+closed.URL+`}
users:
- name: u
  user: {token: t}
contexts:
- name: edge-1
  context: {cluster: c, user: u}
- name: core
  context: {cluster: c, user: u}
current-context: core
`))
	out, errOut, code := runRenderer(t, "install", "ccm", chart, "--kubeconfig", kubeconfig, "--kube-context", "edge-2")
	wantError(t, "--kube-context edge-2", out, errOut, code, 2,
		`--kube-context "edge-2" is not a context of the kubeconfig `+kubeconfig+` (did you mean "edge-1"?); its contexts: core, edge-1`)
	out, errOut, code = runWith(t, append(testtools.HelmEnv(t), "KUBECONFIG="+kubeconfig, "HELM_KUBECONTEXT=edge-2"), "", "upgrade", "ccm", chart)
	wantError(t, "$HELM_KUBECONTEXT", out, errOut, code, 2, `$HELM_KUBECONTEXT "edge-2" is not a context of the kubeconfig $KUBECONFIG (did you mean "edge-1"?); its contexts: core, edge-1`)
	out, errOut, code = runRenderer(t, "diff", "ccm", chart, "--kubeconfig", kubeconfig, "--kube-context", "edge-2", "--detailed-exitcode")
	wantError(t, "diff --detailed-exitcode", out, errOut, code, 1, `"edge-2" is not a context`)
	out, errOut, code = runRenderer(t, "install", "ccm", chart, "--kubeconfig", kubeconfig, "--kube-context", "edge-1", "--distro=rke2")
	wantError(t, "a context that cannot be reached", out, errOut, code, 3)
	// template needs no cluster: the context is not looked at.
	if _, errOut, code := runRenderer(t, "template", "ccm", chart, "--distro=rke2"); code != 0 {
		t.Errorf("template: exit %d, %s", code, errOut)
	}
	out, _, code = runRenderer(t, "__complete", "install", "--kubeconfig", kubeconfig, "--kube-context", "")
	if got := strings.Split(strings.TrimSpace(string(out)), "\n"); code != 0 || !slices.Equal(got, []string{"core", "edge-1", ":4"}) {
		t.Errorf("completion of --kube-context: %q", got)
	}
}

// TestWrapperNamespace: the release's namespace is --namespace, else
// $HELM_NAMESPACE, else kube-system, as charts see it.
func TestWrapperNamespace(t *testing.T) {
	chart := t.TempDir()
	testtools.WriteFile(t, filepath.Join(chart, "Chart.yaml"), []byte("apiVersion: v2\nname: ns\nversion: 0.1.0\n"))
	testtools.WriteFile(t, filepath.Join(chart, "templates", "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ns\ndata:\n  ns: {{ .Release.Namespace }}\n"))
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, nil, "ns: kube-system\n"},
		{[]string{"HELM_NAMESPACE=team-a"}, nil, "ns: team-a\n"},
		{[]string{"HELM_NAMESPACE=team-a"}, []string{"-n", "team-b"}, "ns: team-b\n"},
	} {
		out, errOut, code := runWith(t, append(testtools.HelmEnv(t), c.env...), "", append([]string{"template", "x", chart, "--allow-missing-workload"}, c.args...)...)
		if code != 0 || !strings.Contains(string(out), c.want) {
			t.Errorf("%v %v: exit %d, %s\n%s", c.env, c.args, code, errOut, out)
		}
	}
}

// TestWrapperFlagCompletion: the values of the new flags complete.
func TestWrapperFlagCompletion(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"__completeNoDesc", "diff", "--color", ""}, []string{"auto", "always", "never", ":4"}},
		{[]string{"__completeNoDesc", "diff", "-o", ""}, []string{"text", "json", ":4"}},
		{[]string{"__completeNoDesc", "install", "--dry-run="}, []string{"none", "client", "server", ":4"}},
	} {
		out, errOut, code := runRenderer(t, c.args...)
		if got := strings.Split(strings.TrimSpace(string(out)), "\n"); code != 0 || !slices.Equal(got, c.want) {
			t.Errorf("%v: exit %d, %q, want %q (%s)", c.args, code, got, c.want, errOut)
		}
	}
}
