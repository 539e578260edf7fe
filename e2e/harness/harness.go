// Package harness runs a real Kubernetes control plane for the tests: etcd,
// kube-apiserver (RBAC on) and kube-controller-manager running the
// DaemonSet controller, built from pinned Go modules, on loopback ports
// picked at run time. No kubelet and no scheduler run: nodes are API
// objects, and the DaemonSet controller alone decides which nodes get a pod.
package harness

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness/spawn"
)

// Binaries are the control plane's executables, and the fake-cloud CCM.
type Binaries struct {
	Etcd, APIServer, ControllerManager, FakeCCM string
	// Release is the Kubernetes release of APIServer and ControllerManager.
	Release Release
}

// A Release is a Kubernetes release whose control plane the tools build
// (tools.mk): where its binaries are found and what its controller manager
// is started with.
type Release struct {
	// Minor is the release's minor version (37 for 1.37).
	Minor int
	// suffix ends the variable and file names of its kube-apiserver and
	// kube-controller-manager ($KUBE_APISERVER_126, bin/kube-apiserver-1.26);
	// target is the make target that builds them.
	envSuffix, fileSuffix, target string
	// kcmFlags are flags Start gives the controller manager that not every
	// release has.
	kcmFlags []string
}

var (
	// Current is the release of the e2e module's client libraries and of
	// the fake-cloud CCM (e2e/tools/kube).
	Current = Release{Minor: 37, target: "tools-kube",
		kcmFlags: []string{"--concurrent-daemonset-syncs=5"}}
	// Kube126 is the last release with the in-tree AWS provider, the
	// control plane of the clusters that migrate (e2e/tools/kube126). Its
	// controller manager has no --concurrent-daemonset-syncs (k8s.io/kubernetes
	// v1.26.5, cmd/kube-controller-manager/app/options/daemonsetcontroller.go
	// registers no flag).
	Kube126 = Release{Minor: 26, envSuffix: "_126", fileSuffix: "-1.26", target: "tools-kube126"}
)

// String is the release as Kubernetes writes it: 1.26.
func (r Release) String() string { return "1." + strconv.Itoa(r.Minor) }

// Locate returns the binaries of the Current release; see LocateRelease.
func Locate(root string) (Binaries, error) { return LocateRelease(root, Current) }

// LocateRelease returns the binaries of a release from $ETCD,
// $KUBE_APISERVER, $KUBE_CONTROLLER_MANAGER (with the release's suffix:
// $KUBE_APISERVER_126) and $FAKE_CCM, or from root/bin, building those
// missing with make (tools-kube, and the release's target).
func LocateRelease(root string, r Release) (Binaries, error) {
	env := func(name, file string) string {
		if v := os.Getenv(name); v != "" {
			return v
		}
		return filepath.Join(root, "bin", file)
	}
	b := Binaries{
		Etcd:              env("ETCD", "etcd"),
		APIServer:         env("KUBE_APISERVER"+r.envSuffix, "kube-apiserver"+r.fileSuffix),
		ControllerManager: env("KUBE_CONTROLLER_MANAGER"+r.envSuffix, "kube-controller-manager"+r.fileSuffix),
		FakeCCM:           env("FAKE_CCM", "cloud-controller-manager-fake"),
		Release:           r,
	}
	var targets []string
	for _, p := range []struct{ path, target string }{
		{b.Etcd, r.target}, {b.APIServer, r.target}, {b.ControllerManager, r.target}, {b.FakeCCM, Current.target},
	} {
		if _, err := os.Stat(p.path); err != nil && !slices.Contains(targets, p.target) {
			targets = append(targets, p.target)
		}
	}
	if len(targets) > 0 {
		cmd := exec.Command("make", append([]string{"-s", "-C", root}, targets...)...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return b, fmt.Errorf("building the control plane (make %s): %w", strings.Join(targets, " "), err)
		}
	}
	return b, nil
}

// ControlPlane is a running control plane.
type ControlPlane struct {
	Dir        string // its working directory: data, keys, logs, kubeconfig
	Kubeconfig string // an admin kubeconfig (system:masters)
	Config     *rest.Config
	Client     kubernetes.Interface

	host string // the API server's URL
	ca   *clientCA

	mu    sync.Mutex
	procs []*Process
}

// Process is a program the control plane started; Stop stops it, and the
// control plane stops it on its own Stop.
type Process struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	log  string
	stop sync.Once
}

// An Option changes how Start starts a control plane.
type Option func(*options)

type options struct{ etcd *Etcd }

// SharedEtcd has the control plane's API server keep its objects in a
// running etcd that other control planes use too, under a key prefix of
// its own (--etcd-prefix), instead of starting an etcd of its own: what
// makes dozens of API servers fit on one machine (e2e/scale).
func SharedEtcd(e *Etcd) Option { return func(o *options) { o.etcd = e } }

// Etcd is an etcd that several control planes share (SharedEtcd).
type Etcd struct {
	cp       *ControlPlane // its directory and process
	url      string
	prefixes atomic.Int64 // how many API servers it has been given
}

// StartEtcd starts an etcd for control planes to share, in a directory of
// its own, and returns once it is healthy. Stop it after them.
func StartEtcd(ctx context.Context, bin Binaries) (*Etcd, error) {
	dir, err := os.MkdirTemp("", "aws-ccm-e2e-etcd-")
	if err != nil {
		return nil, err
	}
	e := &Etcd{cp: &ControlPlane{Dir: dir}}
	ports, err := freePorts(2)
	if err == nil {
		e.url, err = e.cp.startEtcd(ctx, bin.Etcd, ports[0], ports[1])
	}
	if err != nil {
		e.cp.Stop()
		return nil, err
	}
	return e, nil
}

// Process is the etcd process.
func (e *Etcd) Process() *Process { return e.cp.Process("etcd") }

// Stop stops etcd and removes its directory unless E2E_KEEP is set.
func (e *Etcd) Stop() { e.cp.Stop() }

// Start starts etcd (unless SharedEtcd gives one) and the API server,
// waits until the API server is ready, and starts kube-controller-manager
// with the given controllers (none: no controller manager). On error
// everything started is stopped.
func Start(ctx context.Context, bin Binaries, controllers []string, opts ...Option) (cp *ControlPlane, err error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	dir, err := os.MkdirTemp("", "aws-ccm-e2e-")
	if err != nil {
		return nil, err
	}
	cp = &ControlPlane{Dir: dir}
	// Each error return sets cp to nil: stop what this one started.
	started := cp
	defer func() {
		if err != nil {
			started.Stop()
		}
	}()
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	var etcdArgs []string
	if o.etcd != nil {
		etcdArgs = []string{"--etcd-servers=" + o.etcd.url, "--etcd-prefix=/registry-" + strconv.FormatInt(o.etcd.prefixes.Add(1), 10)}
	} else {
		etcdURL, err := cp.startEtcd(ctx, bin.Etcd, ports[0], ports[1])
		if err != nil {
			return nil, err
		}
		etcdArgs = []string{"--etcd-servers=" + etcdURL}
	}
	if err := cp.startAPIServer(ctx, bin.APIServer, etcdArgs, ports[2]); err != nil {
		return nil, err
	}
	if len(controllers) == 0 {
		return cp, nil
	}
	_, err = cp.StartControllerManager(bin, controllers)
	return cp, err
}

// StartControllerManager starts kube-controller-manager with the given
// controllers (Start does, when given some). Stopping the process stops
// it before the control plane stops.
func (cp *ControlPlane) StartControllerManager(bin Binaries, controllers []string) (*Process, error) {
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	args := []string{"--kubeconfig=" + cp.Kubeconfig,
		"--authentication-kubeconfig=" + cp.Kubeconfig, "--authorization-kubeconfig=" + cp.Kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(ports[0]),
		"--controllers=" + strings.Join(controllers, ","), "--leader-elect=false",
		"--use-service-account-credentials=false",
		"--v=0",
	}
	return cp.Run("kube-controller-manager", bin.ControllerManager, append(args, bin.Release.kcmFlags...)...)
}

// StartRelease starts a control plane of release r (etcd and the API
// server, no controller manager) for a test, which stops it when it ends;
// root is the repository's directory.
func StartRelease(t testing.TB, root string, r Release) *ControlPlane {
	t.Helper()
	bin, err := LocateRelease(root, r)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := Start(context.Background(), bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.Stop)
	return cp
}

// startEtcd starts etcd on the client and peer ports and returns its URL
// once it is healthy.
func (cp *ControlPlane) startEtcd(ctx context.Context, path string, client, peer int) (string, error) {
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(client)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peer)
	if err := cp.start("etcd", path,
		"--name=e2e", "--data-dir="+filepath.Join(cp.Dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=e2e="+peerURL, "--unsafe-no-fsync", "--log-level=warn",
	); err != nil {
		return "", err
	}
	if err := waitHTTP(ctx, etcdURL+"/health", 30*time.Second, cp.exited("etcd")); err != nil {
		return "", cp.failure("etcd", err)
	}
	return etcdURL, nil
}

// startAPIServer makes the credentials (a static admin token, a key pair
// for service account tokens, a CA for client certificates: UserKubeconfig),
// starts kube-apiserver on port with etcd's flags and waits until it is
// ready; the admin client and kubeconfig are set then.
func (cp *ControlPlane) startAPIServer(ctx context.Context, path string, etcdArgs []string, port int) error {
	token := randomHex(16)
	tokens := filepath.Join(cp.Dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(token+",admin,admin,\"system:masters\"\n"), 0o600); err != nil {
		return err
	}
	saKey := filepath.Join(cp.Dir, "sa.key")
	if err := writeRSAKey(saKey); err != nil {
		return err
	}
	var err error
	if cp.ca, err = newClientCA(); err != nil {
		return err
	}
	caFile := filepath.Join(cp.Dir, "client-ca.crt")
	if err := os.WriteFile(caFile, cp.ca.certPEM, 0o600); err != nil {
		return err
	}
	audit, err := cp.auditArgs()
	if err != nil {
		return err
	}
	if err := cp.start("kube-apiserver", path, append(append(audit, etcdArgs...),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		// No endpoints of the kubernetes Service: nothing here reaches the
		// API server through it, and from 1.37 the API server refuses to
		// start when it would write a loopback address there ("cannot use
		// public IP 127.0.0.1 with endpoint reconciler",
		// pkg/controlplane/instance.go; 1.36.1 has no such check).
		"--endpoint-reconciler-type=none",
		"--secure-port="+strconv.Itoa(port), "--cert-dir="+filepath.Join(cp.Dir, "certs"),
		"--token-auth-file="+tokens, "--client-ca-file="+caFile,
		"--authorization-mode=Node,RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+saKey, "--service-account-signing-key-file="+saKey,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--allow-privileged=true",
		"--enable-priority-and-fairness=false",
		"--v=0",
	)...); err != nil {
		return err
	}
	cp.host = "https://127.0.0.1:" + strconv.Itoa(port)
	cp.Config = &rest.Config{Host: cp.host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: 100, Burst: 200}
	cp.Kubeconfig = filepath.Join(cp.Dir, "admin.kubeconfig")
	if err := writeKubeconfig(cp.Kubeconfig, cp.host, &clientcmdapi.AuthInfo{Token: token}); err != nil {
		return err
	}
	if cp.Client, err = kubernetes.NewForConfig(cp.Config); err != nil {
		return err
	}
	if err := cp.waitReady(ctx, 90*time.Second); err != nil {
		return cp.failure("kube-apiserver", err)
	}
	return nil
}

// Stop stops every process the control plane started, in reverse order,
// and removes its directory unless E2E_KEEP is set.
func (cp *ControlPlane) Stop() {
	cp.mu.Lock()
	procs := cp.procs
	cp.procs = nil
	cp.mu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		procs[i].Stop()
	}
	if os.Getenv("E2E_KEEP") == "" && cp.Dir != "" {
		_ = os.RemoveAll(cp.Dir)
	}
}

// Log returns the tail of a process's log, for failure messages.
func (cp *ControlPlane) Log(name string, max int) string {
	b, err := os.ReadFile(filepath.Join(cp.Dir, name+".log"))
	if err != nil {
		return ""
	}
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}

func (cp *ControlPlane) start(name, path string, args ...string) error {
	_, err := cp.Run(name, path, args...)
	return err
}

// Run starts a program beside the control plane, its output going to
// NAME.log in the control plane's directory (Log reads it; a name used
// twice appends to the same log).
func (cp *ControlPlane) Run(name, path string, args ...string) (*Process, error) {
	return cp.RunEnv(name, path, nil, args...)
}

// RunEnv is Run with variables added to the test's environment (a later
// one of the same name wins).
func (cp *ControlPlane) RunEnv(name, path string, env []string, args ...string) (*Process, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%s: %w (build it with make tools-kube)", name, err)
	}
	logPath := filepath.Join(cp.Dir, name+".log")
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group, so that Stop reaches every child, and a
	// parent-death signal from a thread that lives as long as the test
	// binary, so that it does not outlive a test binary that dies (spawn).
	if err := spawn.Start(cmd); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{name: name, cmd: cmd, done: make(chan struct{}), log: logPath}
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	cp.mu.Lock()
	cp.procs = append(cp.procs, p)
	cp.mu.Unlock()
	return p, nil
}

// Stop sends SIGTERM to the process's group and waits for it to exit,
// killing it after 10 s, and kills what is left in the group then.
// Stopping a stopped process does nothing.
func (p *Process) Stop() { p.StopAfter(10 * time.Second) }

// StopAfter is Stop with another grace period before SIGKILL, for a
// program known not to exit on SIGTERM (argocd-cmp-server v2.14 removes its
// socket and serves on until the kubelet kills it).
func (p *Process) StopAfter(grace time.Duration) {
	p.stop.Do(func() { spawn.Stop(p.cmd.Process.Pid, p.done, grace) })
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// RSS is the process's resident memory now, in bytes (VmRSS of
// /proc/PID/status).
func (p *Process) RSS() (int64, error) {
	status, err := p.proc("status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(status) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kib << 10, err
		}
	}
	return 0, fmt.Errorf("%s: no VmRSS in /proc/%d/status", p.name, p.cmd.Process.Pid)
}

// CPU is the CPU time the process has used so far, user and system
// (/proc/PID/stat, in the kernel's USER_HZ ticks of 10 ms).
func (p *Process) CPU() (time.Duration, error) {
	stat, err := p.proc("stat")
	if err != nil {
		return 0, err
	}
	// After the command's name in parentheses: state, then utime and
	// stime as the 12th and 13th fields.
	f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("%s: /proc/%d/stat: %q", p.name, p.cmd.Process.Pid, stat)
	}
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: /proc/%d/stat: %w", p.name, p.cmd.Process.Pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}

// proc reads a file of the process's /proc directory.
func (p *Process) proc(file string) (string, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.cmd.Process.Pid), file))
	return string(b), err
}

// Log returns the process's log.
func (p *Process) Log() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// Process returns the process of the given name the control plane
// started first (etcd, kube-apiserver, kube-controller-manager, or a name
// given to Run), or nil.
func (cp *ControlPlane) Process(name string) *Process {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	for _, p := range cp.procs {
		if p.name == name {
			return p
		}
	}
	return nil
}

// exited returns a channel closed when the named process has exited.
func (cp *ControlPlane) exited(name string) <-chan struct{} {
	if p := cp.Process(name); p != nil {
		return p.done
	}
	return nil
}

func (cp *ControlPlane) failure(name string, err error) error {
	return fmt.Errorf("%s: %w\n%s", name, err, cp.Log(name, 3000))
}

func (cp *ControlPlane) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	died := cp.exited("kube-apiserver")
	for {
		body, err := cp.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil && string(body) == "ok" {
			return nil
		}
		select {
		case <-died:
			return errors.New("exited")
		case <-ctx.Done():
			return fmt.Errorf("not ready after %s: %v", timeout, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func waitHTTP(ctx context.Context, url string, timeout time.Duration, died <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-died:
			return errors.New("exited")
		case <-ctx.Done():
			return fmt.Errorf("%s not healthy after %s: %v", url, timeout, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// freePorts asks the kernel for n free loopback ports.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func writeRSAKey(path string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600)
}

// writeKubeconfig writes a kubeconfig for the API server at host with the
// given credentials.
func writeKubeconfig(path, host string, user *clientcmdapi.AuthInfo) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: host, InsecureSkipTLSVerify: true}
	cfg.AuthInfos["user"] = user
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "user"}
	cfg.CurrentContext = "e2e"
	return clientcmd.WriteToFile(*cfg, path)
}
