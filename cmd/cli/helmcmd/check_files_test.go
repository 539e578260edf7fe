package helmcmd

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safefile/safefiletest"
)

// ran is what a command line did.
type ran struct {
	code        int
	out, errOut string
}

// runBounded runs the command line with stdin, failed (not waited for)
// when it does not end.
func runBounded(t *testing.T, stdin io.Reader, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	r := safefiletest.Within(t, fmt.Sprintf("%q", args), func() ran {
		var out, errOut bytes.Buffer
		code := cli.Run(args, cli.IOStreams{In: stdin, Out: &out, ErrOut: &errOut}, Commands)
		return ran{code, out.String(), errOut.String()}
	})
	return r.code, r.out, r.errOut
}

// TestCheckKubeconfigSpecialFiles: a kubeconfig that is /dev/zero, a named
// pipe or a huge file, and a kubeconfig whose user or cluster names one
// (certificate-authority, client-certificate, client-key, tokenFile), are
// one usage error line, before client-go reads them.
func TestCheckKubeconfigSpecialFiles(t *testing.T) {
	for path, want := range safefiletest.Files(t) {
		t.Run("kubeconfig "+filepath.Base(path), func(t *testing.T) {
			code, out, errOut := runBounded(t, strings.NewReader(""), "check", "--kubeconfig", path, "--timeout=5s")
			if code != cli.ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "kubeconfig: "+want) {
				t.Errorf("exit %d, stdout %q, stderr %q (want %q)", code, out, errOut, want)
			}
		})
		t.Run("$KUBECONFIG "+filepath.Base(path), func(t *testing.T) {
			t.Setenv("KUBECONFIG", kubeconfig(t, "a")+string(os.PathListSeparator)+path)
			code, out, errOut := runBounded(t, strings.NewReader(""), "check", "--timeout=5s")
			if code != cli.ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "kubeconfig: "+want) {
				t.Errorf("exit %d, stdout %q, stderr %q (want %q)", code, out, errOut, want)
			}
		})
		for _, field := range []string{"certificate-authority", "client-certificate", "client-key", "tokenFile"} {
			t.Run(field+" "+filepath.Base(path), func(t *testing.T) {
				cfg := clientcmdapi.NewConfig()
				cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
				cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{}
				switch field {
				case "certificate-authority":
					cfg.Clusters["c"].CertificateAuthority = path
				case "client-certificate":
					cfg.AuthInfos["u"].ClientCertificate, cfg.AuthInfos["u"].ClientKey = path, "/nonexistent/key"
				case "client-key":
					cfg.AuthInfos["u"].ClientCertificate, cfg.AuthInfos["u"].ClientKey = "/nonexistent/cert", path
				case "tokenFile":
					cfg.AuthInfos["u"].TokenFile = path
				}
				cfg.Contexts["a"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
				cfg.Contexts["b"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
				cfg.CurrentContext = "a"
				kc := filepath.Join(t.TempDir(), "kubeconfig")
				if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
					t.Fatal(err)
				}
				what := `cluster "c" ` + field
				if field != "certificate-authority" {
					what = `user "u" ` + field
				}
				code, out, errOut := runBounded(t, strings.NewReader(""), "check", "--kubeconfig", kc, "--timeout=5s")
				if code != cli.ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "context a: kubeconfig: "+what+": "+want) {
					t.Errorf("exit %d, stdout %q, stderr %q (want %q)", code, out, errOut, want)
				}
				// Several contexts: a row each, a line each.
				code, out, errOut = runBounded(t, strings.NewReader(""), "check", "--kubeconfig", kc, "--all-contexts", "--timeout=5s")
				if code != cli.ExitUsage || strings.Count(errOut, "\n") != 2 || strings.Count(errOut, what+": "+want) != 2 || !strings.Contains(out, "CONTEXT") {
					t.Errorf("--all-contexts: exit %d, stdout %q, stderr %q (want %q)", code, out, errOut, want)
				}
			})
		}
	}
}

// TestChecksManifestsBounded: check -f reads a regular file of at most
// 64 MiB, and at most 64 MiB of stdin.
func TestCheckManifestsBounded(t *testing.T) {
	t.Setenv("KUBECONFIG", kubeconfig(t, "a"))
	for path, want := range safefiletest.Files(t) {
		code, out, errOut := runBounded(t, strings.NewReader(""), "check", "-f", path, "--timeout=5s")
		if code != cli.ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "-f: "+want) {
			t.Errorf("-f %s: exit %d, stdout %q, stderr %q (want %q)", path, code, out, errOut, want)
		}
	}
	code, out, errOut := runBounded(t, safefiletest.Endless{}, "check", "-f", "-", "--timeout=5s")
	if code != cli.ExitInput || out != "" || errOut != "aws-ccm-renderer: -f -: reading stdin: it holds more than 64 MiB, more than any input of this program\n" {
		t.Errorf("-f - of an endless stream: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestChartFilesBounded: what the chart commands read of the user's (values
// files, --set-file files, --ca-file, --cert-file, --key-file, --keyring,
// a chart package, stdin for -f - and --password-stdin) is a regular file
// of at most 64 MiB, or at most 64 MiB of stdin: one error line, before
// any chart is downloaded or cluster asked.
func TestChartFilesBounded(t *testing.T) {
	chart := filepath.Join(t.TempDir(), "chart.tgz") // a regular file: --keyring is looked at first
	if err := os.WriteFile(chart, []byte("not a chart"), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range safefiletest.Files(t) {
		for _, c := range []struct {
			args []string
			code int
			want string
		}{
			{[]string{"--values", path}, cli.ExitUsage, "values: " + want},
			{[]string{"--set-file", "a=" + path}, cli.ExitUsage, "values: failed parsing --set-file data: " + want},
			{[]string{"--ca-file", path}, cli.ExitUsage, "--ca-file: " + want},
			{[]string{"--cert-file", path, "--key-file", chart}, cli.ExitUsage, "--cert-file: " + want},
			{[]string{"--cert-file", chart, "--key-file", path}, cli.ExitUsage, "--key-file: " + want},
			{[]string{"aws-ccm", path}, cli.ExitInput, "chart " + path + ": " + want},
			{[]string{"aws-ccm", chart, "--verify", "--keyring", path}, cli.ExitUsage, "--keyring: " + want},
		} {
			args := append([]string{"template", "--distro", "rke2"}, c.args...)
			code, out, errOut := runBounded(t, strings.NewReader(""), args...)
			if code != c.code || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
				t.Errorf("%q: exit %d (want %d), stdout %q, stderr %q (want %q)", args, code, c.code, out, errOut, c.want)
			}
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--values", "-"}, "values: reading stdin (-f -): it holds more than 64 MiB"},
		{[]string{"--set-file", "a=-"}, "values: failed parsing --set-file data: --set-file a=-: stdin (-) is not read for --set-file; give a file"},
		{[]string{"--password-stdin"}, "--password-stdin: reading stdin: it holds more than 64 MiB"},
	} {
		args := append([]string{"template", "--distro", "rke2"}, c.args...)
		code, out, errOut := runBounded(t, safefiletest.Endless{}, args...)
		if code != cli.ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q (want %q)", args, code, out, errOut, c.want)
		}
	}
}

// TestCheckKubeconfigDevNull: /dev/null, the usual "no kubeconfig", is
// still read as an empty one.
func TestCheckKubeconfigDevNull(t *testing.T) {
	code, out, errOut := runBounded(t, strings.NewReader(""), "check", "--kubeconfig", os.DevNull, "--timeout=5s")
	if code != cli.ExitUsage || out != "" || !strings.Contains(errOut, "check needs a cluster, and no kubeconfig names one (--kubeconfig /dev/null has no clusters)") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
