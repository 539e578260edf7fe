package helmcmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safetext"
)

// fuzzSeeds are kubeconfigs: ordinary, hostile names, broken YAML, files
// that are no files, and nothing at all.
var fuzzSeeds = []string{
	`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: t}
contexts:
- name: a
  context: {cluster: c, user: u}
- name: b
  context: {cluster: c, user: u, namespace: kube-system}
current-context: a
`,
	`apiVersion: v1
kind: Config
clusters:
- name: "c\e[2J"
  cluster: {server: "https://127.0.0.1:1/\e]0;title\a"}
users:
- name: "u\n"
  user: {token: t}
contexts:
- name: "a\e[31mred\nnext"
  context: {cluster: "c\e[2J", user: "u\n"}
- name: "\u202etxt.exe\t\x85"
  context: {cluster: missing, user: "u\n"}
current-context: "a\e[31mred\nnext"
`,
	`clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1", certificate-authority: /dev/zero}
users:
- name: u
  user: {client-certificate: /dev/zero, client-key: /nonexistent, tokenFile: /dev/zero}
contexts:
- name: a
  context: {cluster: c, user: u}
current-context: a
`,
	`clusters: [{name: c, cluster: {server: "::not a url"}}]
contexts: [{name: a, context: {cluster: c}}, {name: "", context: {}}]
current-context: nope
`,
	`{"kind": "Config", "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1", "certificate-authority-data": "bm90IGEgY2VydA=="}}], "contexts": [{"name": "a", "context": {"cluster": "c"}}]}`,
	"clusters: [\n",
	"\x00\x1b[31m\n",
	"",
}

// FuzzCheckKubeconfig: any kubeconfig, through check's reading of it,
// its contexts and each context's client configuration, to the table, the
// summary and the error lines: never a panic, every error one line, no
// control character printed. The cluster is never asked (checkRun is
// replaced), so no exec plugin of the kubeconfig runs.
func FuzzCheckKubeconfig(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	orig := checkRun
	checkRun = func(_ context.Context, _ kubernetes.Interface, in check.Input) (*check.Report, error) {
		return nil, &check.ClusterError{Err: fmt.Errorf("cannot reach the cluster at %s (fuzz)", in.Server)}
	}
	f.Cleanup(func() { checkRun = orig })
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "kubeconfig")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"check", "--kubeconfig", path, "--timeout=5s"},
			{"check", "--kubeconfig", path, "--timeout=5s", "--all-contexts"},
		} {
			code, out, errOut := run(t, "", args...)
			switch code {
			case cli.ExitUsage, cli.ExitOther, cli.ExitInput:
			default:
				t.Fatalf("%q: exit %d\nstdout %q\nstderr %q", args, code, out, errOut)
			}
			if !strings.HasSuffix(errOut, "\n") {
				t.Fatalf("%q: stderr %q: no error line", args, errOut)
			}
			lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
			if len(args) == 4 && len(lines) != 1 {
				t.Errorf("%q: one cluster, %d lines on stderr: %q", args, len(lines), errOut)
			}
			for _, l := range lines {
				if !strings.HasPrefix(l, "aws-ccm-renderer: ") || safetext.HasControl(l) {
					t.Errorf("%q: stderr line %q", args, l)
				}
			}
			for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if safetext.HasControl(l) {
					t.Errorf("%q: stdout line %q", args, l)
				}
			}
		}
	})
}
