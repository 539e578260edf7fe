package helmcmd

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/creack/pty"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// kubeconfig writes a kubeconfig whose contexts point at servers nothing
// listens on; usage errors come before any connection.
func kubeconfig(t *testing.T, contexts ...string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["none"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	for _, c := range contexts {
		cfg.Contexts[c] = &clientcmdapi.Context{Cluster: "none", AuthInfo: "u"}
	}
	if len(contexts) > 0 {
		cfg.CurrentContext = contexts[0]
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckUsage(t *testing.T) {
	kc := kubeconfig(t, "prod-a", "prod-b")
	manifests := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(manifests, []byte(ccm), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string
	}{
		{"bad output", "", []string{"check", "-o", "yaml"}, cli.ExitUsage, `--output "yaml": use table or json`},
		{"two inputs", "", []string{"check", "-f", manifests, "--release", "x"}, cli.ExitUsage, "-f and --release both name what to check"},
		{"contexts twice over", "", []string{"check", "--all-contexts", "--kube-context", "prod-a"}, cli.ExitUsage, "--all-contexts and --kube-context"},
		{"unknown context", "", []string{"check", "--kube-context", "prod-c"}, cli.ExitUsage, `--kube-context "prod-c" is not a context of the kubeconfig $KUBECONFIG (did you mean "prod-a" or "prod-b"?); its contexts: prod-a, prod-b`},
		{"no timeout", "", []string{"check", "--timeout", "0s"}, cli.ExitUsage, "--timeout must be positive"},
		{"an upgrade to no version", "", []string{"check", "--upgrade-to", "latest"}, cli.ExitUsage, `--upgrade-to "latest": give a Kubernetes version, such as 1.37 or v1.37.0`},
		{"an upgrade to a minor with more after it", "", []string{"check", "--upgrade-to", "1.37x"}, cli.ExitUsage, `--upgrade-to "1.37x": give a Kubernetes version`},
		{"an upgrade to another major", "", []string{"check", "--upgrade-to", "2.0"}, cli.ExitUsage, `--upgrade-to "2.0": give a Kubernetes version`},
		{"argument", "", []string{"check", "extra"}, cli.ExitUsage, "unknown command"},
		{"missing file", "", []string{"check", "-f", manifests + ".gone"}, cli.ExitUsage, "-f: open"},
		{"not YAML", "a: [\n", []string{"check", "-f", "-"}, cli.ExitInput, "document 1"},
		{"AWS flags without --aws", "", []string{"check", "--aws-region", "eu-west-1"}, cli.ExitUsage, "--aws-profile, --aws-region and --aws-ccm-principal say how to read AWS: add --aws"},
		{"a principal that is no ARN", "", []string{"check", "--aws", "--aws-ccm-principal", "ccm-role"}, cli.ExitUsage, `--aws-ccm-principal "ccm-role": give an IAM role or user ARN`},
		{"unreachable", "", []string{"check", "-f", manifests}, cli.ExitOther, "context prod-a: cannot reach the cluster"},
		{"unreachable by HELM_KUBECONTEXT", "", []string{"check"}, cli.ExitOther, "context prod-b: cannot reach the cluster"},
	}
	t.Setenv("KUBECONFIG", kc)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if strings.Contains(c.name, "HELM_KUBECONTEXT") {
				t.Setenv("HELM_KUBECONTEXT", "prod-b")
			}
			code, out, errOut := run(t, c.stdin, append(c.args, "--timeout=5s")...)
			if c.name == "no timeout" {
				code, out, errOut = run(t, c.stdin, c.args...)
			}
			if code != c.code || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d (want %d), stdout %q, stderr %q (want %q)", code, c.code, out, errOut, c.want)
			}
		})
	}
}

// TestCheckAWSErrorExit: an AWS account check cannot read at all exits 3,
// as a cluster it cannot reach does.
func TestCheckAWSErrorExit(t *testing.T) {
	err := contextError("prod", &check.AWSError{Msg: "no region: ..."})
	if cli.ExitCode(err) != cli.ExitOther || err.Error() != "context prod: AWS: no region: ..." {
		t.Errorf("exit %d: %v", cli.ExitCode(err), err)
	}
}

// TestCheckFleetUnreachable: several contexts that cannot be reached still
// give one report and one summary row each, exit 3, and one line per
// cluster on stderr.
func TestCheckFleetUnreachable(t *testing.T) {
	t.Setenv("KUBECONFIG", kubeconfig(t, "a", "b"))
	code, out, errOut := run(t, "", "check", "--all-contexts", "--timeout=5s")
	if code != cli.ExitOther || strings.Count(errOut, "\n") != 2 || !strings.Contains(errOut, "aws-ccm-renderer: context a: cannot reach the cluster") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "Cluster a\n  ✗ cannot reach the cluster") || !strings.Contains(out, "CONTEXT") || strings.Count(out, "\n✗  ") != 2 {
		t.Errorf("stdout:\n%s", out)
	}
	code, out, _ = run(t, "", "check", "--all-contexts", "--timeout=5s", "-o", "json")
	if code != cli.ExitOther || !strings.Contains(out, `"kind": "CheckResult"`) || strings.Count(out, `"error": "cannot reach the cluster`) != 2 {
		t.Errorf("json: exit %d\n%s", code, out)
	}
	t.Setenv("KUBECONFIG", kubeconfig(t))
	if code, _, errOut := run(t, "", "check", "--all-contexts"); code != cli.ExitUsage || !strings.Contains(errOut, "the kubeconfig has no contexts") {
		t.Errorf("no contexts: exit %d, %q", code, errOut)
	}
}

// TestCheckTerminal: stdin on a terminal is a usage error for -f -
// (internal/terminal's TestColour has when the table is coloured).
func TestCheckTerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	data, err := readManifestFile(tty, "-")
	if err == nil || !strings.Contains(err.Error(), "stdin is a terminal") || data != nil {
		t.Errorf("-f - on a terminal: %v", err)
	}
}

// TestCheckCompletion: --kube-context completes the kubeconfig's contexts,
// --output its values; the chart wrapper commands offer --distro=detect.
func TestCheckCompletion(t *testing.T) {
	t.Setenv("KUBECONFIG", kubeconfig(t, "prod-a", "prod-b"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "check", "--kube-context", ""}, "prod-a\nprod-b\n:4\n"},
		{[]string{"__complete", "check", "-o", ""}, "table\njson\n:4\n"},
		{[]string{"__complete", "template", "--distro", ""}, "auto\nrke\nrke2\nk3s\nkubeadm\ndetect\n:4\n"},
	} {
		_, out, _ := run(t, "", c.args...)
		if !strings.HasPrefix(out, c.want) {
			t.Errorf("%v: %q, want %q", c.args, out, c.want)
		}
	}
	_, out, _ := run(t, "", "install", "--help")
	if !strings.Contains(out, "or detect (read from the nodes of the cluster of --kubeconfig and --kube-context") {
		t.Errorf("install --help does not offer --distro=detect:\n%s", out)
	}
	// detect needs a cluster: without one it is exit 3, with nothing on
	// stdout.
	code, out, errOut := run(t, "", "template", "--distro=detect", "--repo", "http://127.0.0.1:1")
	if code != cli.ExitOther || out != "" || !strings.Contains(errOut, "--distro=detect") {
		t.Errorf("detect without a cluster: exit %d, %q, %q", code, out, errOut)
	}
	// A cluster named to template, which asks none without detect: said,
	// with detect; not with detect.
	code, _, errOut = run(t, "", "template", "--kube-context", "prod-b", "--repo", "http://127.0.0.1:1")
	if want := "aws-ccm-renderer: --kube-context prod-b is not used: template asks no cluster here (--distro=detect reads the distribution from its nodes)\n"; code != cli.ExitOther || !strings.HasPrefix(errOut, want) {
		t.Errorf("template --kube-context: exit %d, %q", code, errOut)
	}
	if _, _, errOut = run(t, "", "template", "--kube-context", "prod-b", "--distro=detect", "--repo", "http://127.0.0.1:1"); strings.Contains(errOut, "not used") {
		t.Errorf("template --kube-context --distro=detect: %q", errOut)
	}
	// No kubeconfig names a cluster: a usage error that says so, before
	// anything is asked (no localhost:8080).
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	code, out, errOut = run(t, "", "template", "--distro=detect", "--repo", "http://127.0.0.1:1")
	if want := "aws-ccm-renderer: --distro=detect needs a cluster, and no kubeconfig names one ($KUBECONFIG is " + os.Getenv("KUBECONFIG") +
		": no file of it exists or has clusters); give --kubeconfig FILE, or set $KUBECONFIG\n"; code != cli.ExitUsage || out != "" || errOut != want {
		t.Errorf("detect without a kubeconfig: exit %d, %q, %q", code, out, errOut)
	}
}

// TestCheckAreas: check's help has a line for each area of check's rules
// (check.Areas), in their order, the cluster's before "With --aws" and
// the AWS areas after; docs/check.md a table row for each.
func TestCheckAreas(t *testing.T) {
	cluster, aws, _ := strings.Cut(checkLong, "\nWith --aws")
	aws, _, _ = strings.Cut(aws, "\nWhat is checked")
	row := regexp.MustCompile(`(?m)^  ([a-z-]+) {2,}\S`)
	names := func(text string) []string {
		var out []string
		for _, m := range row.FindAllStringSubmatch(text, -1) {
			out = append(out, m[1])
		}
		return out
	}
	var wantCluster, wantAWS []string
	for _, a := range check.Areas() {
		if check.AWSArea(a) {
			wantAWS = append(wantAWS, a)
		} else {
			wantCluster = append(wantCluster, a)
		}
	}
	if got := names(cluster); !slices.Equal(got, wantCluster) {
		t.Errorf("check's help names the areas %q, want %q", got, wantCluster)
	}
	if got := names(aws); !slices.Equal(got, wantAWS) {
		t.Errorf("check's help names the AWS areas %q, want %q", got, wantAWS)
	}
	doc, err := os.ReadFile(filepath.Join(testtools.Root(), "docs", "check.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range check.Areas() {
		if !regexp.MustCompile("(?m)^\\| `?" + regexp.QuoteMeta(a) + "`? \\|").Match(doc) {
			t.Errorf("docs/check.md has no table row of area %s", a)
		}
	}
}

// TestCheckContextNamesEscaped: a context whose name holds an escape
// sequence and a line feed is printed escaped, on its line: in its
// report's heading, its summary row and its stderr line; JSON keeps the
// name, escaped by JSON.
func TestCheckContextNamesEscaped(t *testing.T) {
	const name, escaped = "a\x1b[31mred\nnext", `a\x1b[31mred\nnext`
	t.Setenv("KUBECONFIG", kubeconfig(t, name, "b"))
	code, out, errOut := run(t, "", "check", "--all-contexts", "--timeout=5s")
	if code != cli.ExitOther || strings.ContainsAny(out+errOut, "\x1b") {
		t.Errorf("exit %d, a raw escape printed:\nstdout %q\nstderr %q", code, out, errOut)
	}
	if !strings.Contains(out, "Cluster "+escaped+"\n") {
		t.Errorf("no escaped heading:\n%s", out)
	}
	_, summary, _ := strings.Cut(out, "CONTEXT")
	rows := strings.Split(strings.TrimSuffix(summary, "\n"), "\n")[1:]
	if len(rows) != 2 || !strings.HasPrefix(rows[0], "✗  "+escaped+"  ") || !strings.HasPrefix(rows[1], "✗  b ") {
		t.Errorf("summary rows %q, want one for %q and one for b", rows, escaped)
	}
	if lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "aws-ccm-renderer: context "+escaped+": cannot reach the cluster") {
		t.Errorf("stderr lines %q", lines)
	}
	_, out, _ = run(t, "", "check", "--all-contexts", "--timeout=5s", "-o", "json")
	if !strings.Contains(out, `"context": "a\u001b[31mred\nnext"`) {
		t.Errorf("JSON:\n%s", out)
	}
	// A context given that the kubeconfig does not have: its names escaped.
	_, _, errOut = run(t, "", "check", "--kube-context", "c")
	if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "its contexts: "+escaped+", b") {
		t.Errorf("unknown context: %q", errOut)
	}
}
