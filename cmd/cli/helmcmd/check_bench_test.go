package helmcmd

import (
	"bytes"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
)

// closedPort is a loopback address nothing listens on: a connection to it
// is refused at once.
func closedPort(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// fleetKubeconfig writes a kubeconfig of n contexts, each with a cluster
// and a user of its own, every server at addr.
func fleetKubeconfig(tb testing.TB, n int, addr string) string {
	tb.Helper()
	cfg := clientcmdapi.NewConfig()
	for i := range n {
		name := fmt.Sprintf("cluster-%04d", i)
		cfg.Clusters[name] = &clientcmdapi.Cluster{Server: "https://" + addr}
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: "t"}
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	cfg.CurrentContext = "cluster-0000"
	path := filepath.Join(tb.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkCheckAllContexts: check --all-contexts over a fleet whose every
// server refuses the connection, at 50, 200 and 800 contexts. The work is
// per context, so ns/op grows linearly: 800/50 near 16, not 256.
func BenchmarkCheckAllContexts(b *testing.B) {
	addr := closedPort(b)
	for _, n := range []int{50, 200, 800} {
		kc := fleetKubeconfig(b, n, addr)
		b.Run(fmt.Sprintf("contexts=%d", n), func(b *testing.B) {
			for b.Loop() {
				var out, errOut bytes.Buffer
				code := cli.Run([]string{"check", "--all-contexts", "--kubeconfig", kc, "--timeout=5s"},
					cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Commands)
				if code != cli.ExitOther || strings.Count(errOut.String(), "\n") != n {
					b.Fatalf("exit %d, %d lines on stderr: %.300s", code, strings.Count(errOut.String(), "\n"), errOut.String())
				}
			}
		})
	}
}
