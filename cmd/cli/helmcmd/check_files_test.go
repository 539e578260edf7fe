package helmcmd

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safefile"
)

// specialFiles are the files no input may be: a device without end, a
// named pipe nothing writes to, and a file larger than safefile.MaxRead
// (sparse: no disk used). Each is one error, never a read without end or
// a wait for a writer.
func specialFiles(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, safefile.MaxRead+1); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"/dev/zero": "read /dev/zero: not a regular file but a character device: give a file",
		fifo:        "read " + fifo + ": not a regular file but a named pipe: give a file",
		big:         "read " + big + ": it holds more than 64 MiB",
	}
}

// runBounded is run, failed (not waited for) when the command has not
// ended in a minute: a read of /dev/zero or of a named pipe never ends.
func runBounded(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errOut := run(t, stdin, args...)
		done <- result{code, out, errOut}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.err
	case <-time.After(time.Minute):
		t.Fatalf("%q has not ended: it reads without end or waits for a writer", args)
	}
	return
}

// TestCheckKubeconfigSpecialFiles: a kubeconfig that is /dev/zero, a named
// pipe or a huge file, and a kubeconfig whose user or cluster names one
// (certificate-authority, client-certificate, client-key, tokenFile), are
// one usage error line, before client-go reads them.
func TestCheckKubeconfigSpecialFiles(t *testing.T) {
	for path, want := range specialFiles(t) {
		t.Run("kubeconfig "+filepath.Base(path), func(t *testing.T) {
			code, out, errOut := runBounded(t, "", "check", "--kubeconfig", path, "--timeout=5s")
			if code != cli.ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "kubeconfig: "+want) {
				t.Errorf("exit %d, stdout %q, stderr %q (want %q)", code, out, errOut, want)
			}
		})
		t.Run("$KUBECONFIG "+filepath.Base(path), func(t *testing.T) {
			t.Setenv("KUBECONFIG", kubeconfig(t, "a")+string(os.PathListSeparator)+path)
			code, out, errOut := runBounded(t, "", "check", "--timeout=5s")
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
				code, out, errOut := runBounded(t, "", "check", "--kubeconfig", kc, "--timeout=5s")
				if code != cli.ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "context a: kubeconfig: "+what+": "+want) {
					t.Errorf("exit %d, stdout %q, stderr %q (want %q)", code, out, errOut, want)
				}
				// Several contexts: a row each, a line each.
				code, out, errOut = runBounded(t, "", "check", "--kubeconfig", kc, "--all-contexts", "--timeout=5s")
				if code != cli.ExitUsage || strings.Count(errOut, "\n") != 2 || strings.Count(errOut, what+": "+want) != 2 || !strings.Contains(out, "CONTEXT") {
					t.Errorf("--all-contexts: exit %d, stdout %q, stderr %q (want %q)", code, out, errOut, want)
				}
			})
		}
	}
}
