package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safetext"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools/ccmtest"
)

func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(args, IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

// ccm is the smallest manifest the renderer takes, the shared fixture.
var ccm = ccmtest.Manifest(ccmtest.Options{})

func TestRender(t *testing.T) {
	code, out, errOut := run(t, ccm, "--distro=rke2", "--set-arg", "v=4")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{`node-role.kubernetes.io/control-plane: "true"`, "- --v=4", "hostNetwork: true"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "warning: no Role or ClusterRole is bound to ServiceAccount kube-system/default") {
		t.Errorf("no RBAC warning on stderr: %q", errOut)
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string
	}{
		{"unknown flag", ccm, []string{"--distor=rke"}, ExitUsage, "unknown flag: --distor"},
		{"unknown distro", ccm, []string{"--distro=rke3"}, ExitUsage, `--distro "rke3" is unknown`},
		{"unknown mode", ccm, []string{"--mode=upgrade"}, ExitUsage, `--mode "upgrade" is unknown`},
		{"bad bool", ccm, []string{"--host-network=maybe"}, ExitUsage, "host-network"},
		{"positional argument", ccm, []string{"chart.yaml"}, ExitUsage, "unknown command"},
		{"contradiction", ccm, []string{"--set-arg=v=1", "--remove-arg=v"}, ExitUsage, "contradicts"},
		{"missing config file", ccm, []string{"--config=/nonexistent.yaml"}, ExitUsage, "--config"},
		{"empty input", "", nil, ExitInput, "empty input"},
		{"not yaml", "a: b: c\n", nil, ExitInput, "document 1 (line 1): yaml: mapping values are not allowed"},
		{"no workload", "kind: ConfigMap\nmetadata: {name: x}\n", nil, ExitInput, "no AWS cloud-controller-manager"},
		{"broken second document", ccm + "---\nkind: [\n", nil, ExitInput, "document 2 (line 12)"},
		{"k3s in migrate mode", ccm, []string{"--distro=k3s", "--mode=migrate"}, ExitUsage,
			"--mode migrate: --distro=k3s has no migrate mode: it is built without the in-tree cloud providers, so no in-tree controller manager hands over to the CCM; " +
				"its move to the AWS CCM is a switch, step by step in `aws-ccm-renderer plan --distro k3s`: render with --mode=install"},
		{"migrate: a CCM newer than any cluster that migrates", ccm, []string{"--mode=migrate"}, ExitInput,
			"the CCM (image registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0) is 1.35, newer than any cluster that can migrate (the in-tree AWS provider ends with 1.26): " +
				"pin the CCM release of the cluster's minor (for a 1.26 cluster v1.26.14, with the upstream chart: --set image.tag=" + releases.Pin("v1.26.14") + ") and give the cluster's version with --kube-version, or pass --allow-version-skew to render it anyway"},
		{"migrate: a CCM of another minor than the cluster", ccm, []string{"--mode=migrate", "--kube-version=v1.26.15"}, ExitInput,
			"the CCM (image registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0) is 1.35 and the cluster (--kube-version v1.26.15) 1.26: a migration runs the CCM of the cluster's minor; " +
				"pin the CCM release of the cluster's minor, v1.26.14 (with the upstream chart: --set image.tag=" + releases.Pin("v1.26.14") + "), or pass --allow-version-skew to render it anyway"},
		{"migrate: a cluster without the in-tree provider", ccm, []string{"--mode=migrate", "--kube-version=v1.35.1"}, ExitInput,
			"the cluster (--kube-version v1.35.1) is 1.35 and has no in-tree AWS provider to migrate from (it ends with 1.26): use --mode=install, or pass --allow-version-skew to render it anyway"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := run(t, c.stdin, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d", code, c.code)
			}
			if out != "" {
				t.Errorf("stdout is not empty: %q", out)
			}
			if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "aws-ccm-renderer: ") {
				t.Errorf("stderr is not one line: %q", errOut)
			}
			if !strings.Contains(errOut, c.want) {
				t.Errorf("stderr %q does not say %q", errOut, c.want)
			}
		})
	}
}

func TestConfigFileAndFlags(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "renderer.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: aws-ccm-renderer.io/v1alpha1\nkind: RendererConfig\ndistro: rke\nhostNetwork: false\nsetArgs: [v=3]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, ccm, "--config", cfg)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "node-role.kubernetes.io/controlplane") || strings.Contains(out, "hostNetwork: ") || !strings.Contains(out, "--v=3") {
		t.Errorf("config file not applied:\n%s", out)
	}
	// A flag on the command line wins over the file.
	code, out, _ = run(t, ccm, "--config", cfg, "--distro=k3s")
	if code != ExitOK || !strings.Contains(out, `node-role.kubernetes.io/control-plane: "true"`) {
		t.Errorf("--distro did not override the file (exit %d):\n%s", code, out)
	}
	if err := os.WriteFile(cfg, []byte("apiVersion: aws-ccm-renderer.io/v1alpha1\nkind: RendererConfig\ndistros: rke\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run(t, ccm, "--config", cfg)
	// The key it most likely meant, never a Go type's name.
	if code != ExitUsage || out != "" || !strings.Contains(errOut, `: line 3: unknown key "distros" (did you mean distro?); the keys: apiVersion, kind, metadata, distro, mode,`) ||
		strings.Contains(errOut, "renderer.Config") {
		t.Errorf("bad config file: exit %d, stderr %q", code, errOut)
	}
}

func TestHelpAndVersion(t *testing.T) {
	code, out, _ := run(t, "", "--help")
	if code != ExitOK || !strings.Contains(out, "--post-renderer aws-ccm-renderer") || !strings.Contains(out, "--set-arg") {
		t.Errorf("--help (exit %d):\n%s", code, out)
	}
	code, out, _ = run(t, "", "version")
	if code != ExitOK || !strings.HasPrefix(out, "aws-ccm-renderer ") {
		t.Errorf("version (exit %d): %q", code, out)
	}
	code, out, _ = run(t, "", "completion", "bash")
	if code != ExitOK || !strings.Contains(out, "bash completion") {
		t.Errorf("completion bash (exit %d)", code)
	}
	code, out, _ = run(t, "", "__complete", "--distro", "")
	if code != ExitOK || !strings.Contains(out, "rke2") || !strings.Contains(out, "kubeadm") {
		t.Errorf("--distro completion: %q", out)
	}
}

// TestStdinTerminal: only a terminal is a terminal; empty input (as from
// /dev/null, a character device too) is empty input.
func TestStdinTerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("opening a pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	var out, errOut bytes.Buffer
	code := Main(nil, IOStreams{In: tty, Out: &out, ErrOut: &errOut})
	if code != ExitUsage || out.Len() != 0 || !strings.Contains(errOut.String(), "stdin is a terminal") {
		t.Errorf("a terminal: exit %d, stderr %q", code, errOut.String())
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	out.Reset()
	errOut.Reset()
	code = Main(nil, IOStreams{In: null, Out: &out, ErrOut: &errOut})
	if code != ExitInput || out.Len() != 0 || !strings.Contains(errOut.String(), "empty input") {
		t.Errorf("/dev/null: exit %d, stderr %q", code, errOut.String())
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestWriteError(t *testing.T) {
	var errOut bytes.Buffer
	code := Main([]string{"--distro=rke2"}, IOStreams{In: strings.NewReader(ccm), Out: failingWriter{}, ErrOut: &errOut})
	if code != ExitOther || !strings.Contains(errOut.String(), "writing the output") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}

func TestReadInputFromFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.yaml")
	if err := os.WriteFile(path, []byte(ccm), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := readInput(f)
	if err != nil || string(bytes.Join(got, nil)) != ccm {
		t.Fatalf("readInput = %q, %v", got, err)
	}
}

func TestOverlaysCommand(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := run(t, "", "overlays", "--out", dir)
	if code != ExitOK || !strings.Contains(out, filepath.Join(dir, "rke2", "migrate")) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, f := range []string{"rke2/install/kustomization.yaml", "rke2/migrate/leader-migration.yaml", "auto/install/daemonset.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if code, out, errOut := run(t, "", "overlays", "--out", ""); code != ExitUsage || out != "" || !strings.Contains(errOut, "--out") {
		t.Errorf("empty --out: exit %d, stderr %q", code, errOut)
	}
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := run(t, "", "overlays", "--out", file); code != ExitOther || out != "" || !strings.Contains(errOut, "writing the overlays") {
		t.Errorf("--out a file: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestDetailedExitCode: which command lines make 2 mean changes only.
func TestDetailedExitCode(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"diff", "--detailed-exitcode"}, true},
		{[]string{"diff", "rel", "--exit-code", "--bogus"}, true},
		{[]string{"diff", "--detailed-exitcode=true"}, true},
		{[]string{"diff", "--detailed-exitcode=false"}, false},
		{[]string{"diff", "--", "--exit-code"}, false},
		{[]string{"diff"}, false},
		{[]string{"template", "diff", "--exit-code"}, false},
		{[]string{"--exit-code"}, false},
	} {
		if got := detailedExitCode(c.args); got != c.want {
			t.Errorf("%q: %v, want %v", c.args, got, c.want)
		}
	}
}

// terminalSpy is a controlling terminal that records what is written on
// it, and how often it was opened.
type terminalSpy struct {
	opened int
	text   bytes.Buffer
}

func (s *terminalSpy) open() (io.WriteCloser, error) {
	s.opened++
	return nopCloser{&s.text}, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// TestWarningsReachTheTerminal: warnings go to stderr, and to the
// controlling terminal too when stderr is not one (Helm's buffer); an
// error goes there only under Helm 4 (HELM_PLUGIN_NAME), which never shows
// a plugin's stderr, as Helm 3 shows it in its error; a render without
// warnings opens no terminal; a stderr that is a terminal gets them once.
func TestWarningsReachTheTerminal(t *testing.T) {
	const warning = "aws-ccm-renderer: warning: --configure-cloud-routes=true: the CCM's route controller then writes pod CIDR routes into the VPC's route tables; only clusters whose pod network relies on cloud routes want that\n"
	const refusal = "aws-ccm-renderer: --distro \"rke1\" is unknown (did you mean --distro=rke?): use one of auto, rke, rke2, k3s, kubeadm\n"
	for _, c := range []struct {
		name     string
		args     []string
		plugin   bool
		code     int
		stderr   string // what stderr ends with
		terminal string
	}{
		{name: "a warning", args: []string{"--set-arg=configure-cloud-routes=true"}, stderr: warning, terminal: warning},
		{name: "a warning under Helm 4", args: []string{"--set-arg=configure-cloud-routes=true"}, plugin: true, stderr: warning, terminal: warning},
		{name: "no warning", args: []string{"--set-arg=v=4"}},
		{name: "an error", args: []string{"--distro=rke1"}, code: ExitUsage, stderr: refusal},
		{name: "an error under Helm 4", args: []string{"--distro=rke1"}, plugin: true, code: ExitUsage, stderr: refusal, terminal: refusal},
		{name: "a warning with --strict", args: []string{"--set-arg=configure-cloud-routes=true", "--strict"}, code: ExitUsage,
			stderr: "aws-ccm-renderer: --configure-cloud-routes=true: the CCM's route controller then writes pod CIDR routes into the VPC's route tables; only clusters whose pod network relies on cloud routes want that (--strict: warnings are errors)\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.plugin {
				t.Setenv("HELM_PLUGIN_NAME", "aws-ccm")
			}
			in := ccm + "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: ccm}\n" +
				"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ccm}\nsubjects: [{kind: ServiceAccount, name: default, namespace: kube-system}]\n" +
				"---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: ccm}\nrules: [{apiGroups: [\"\"], resources: [serviceaccounts, serviceaccounts/token], verbs: [get, create]}]\n"
			var out, errOut bytes.Buffer
			spy := &terminalSpy{}
			code := Main(c.args, IOStreams{In: strings.NewReader(in), Out: &out, ErrOut: &errOut, Terminal: spy.open})
			if code != c.code || errOut.String() != c.stderr || spy.text.String() != c.terminal {
				t.Errorf("exit %d, stderr %q, terminal %q; want %d, %q, %q", code, errOut.String(), spy.text.String(), c.code, c.stderr, c.terminal)
			}
			if c.terminal == "" && spy.opened > 0 {
				t.Errorf("the terminal was opened %d times for nothing", spy.opened)
			}
			if (code == ExitOK) == (out.Len() == 0) {
				t.Errorf("exit %d with %d bytes on stdout", code, out.Len())
			}
		})
	}

	// stderr is the terminal: the warning shows there once.
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("opening a pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	spy := &terminalSpy{}
	var out bytes.Buffer
	code := Main([]string{"--set-arg=configure-cloud-routes=true"}, IOStreams{In: strings.NewReader(ccm), Out: &out, ErrOut: tty, Terminal: spy.open})
	if code != ExitOK || spy.opened != 0 {
		t.Errorf("stderr a terminal: exit %d, the controlling terminal opened %d times", code, spy.opened)
	}
}

// TestWarningsEscaped: a warning quotes the chart's flag value; an escape
// sequence and a line break in it reach stderr escaped, the warning on
// one line.
func TestWarningsEscaped(t *testing.T) {
	in := ccmtest.Manifest(ccmtest.Options{Args: []string{"--cloud-provider=aws", `"--configure-cloud-routes=tr\e[2Jue\nmore"`}, ControlPlane: true, Account: true})
	code, out, errOut := run(t, in, "--distro=rke2")
	if code != ExitOK || out == "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var warned bool
	for _, l := range strings.Split(strings.TrimSuffix(errOut, "\n"), "\n") {
		if safetext.HasControl(l) {
			t.Errorf("a control character on stderr: %q", l)
		}
		warned = warned || strings.Contains(l, `comes with --configure-cloud-routes=tr\x1b[2Jue\nmore (the chart's values)`)
	}
	if !warned {
		t.Errorf("no escaped warning of the chart's value on stderr: %q", errOut)
	}
}
