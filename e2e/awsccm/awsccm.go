// Package awsccm runs the real AWS cloud controller manager
// (k8s.io/cloud-provider-aws, built by `make tools-aws-ccm`) as a process
// beside an e2e control plane, with the args the renderer rendered, a cloud
// config that points every AWS API it calls at moto, and an environment in
// which nothing it sends can leave the machine.
package awsccm

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/moto"
)

// Release is a build of the AWS CCM.
type Release struct {
	Name    string // 1.26, 1.35, current
	Binary  string
	Version string // as the binary reports it: v1.26.0
}

// Releases returns the AWS CCM builds the tests run, oldest first (1.26,
// 1.35, the current release): from $AWS_CCM_126, $AWS_CCM_135 and
// $AWS_CCM, or from root/bin, building them with `make tools-aws-ccm` when
// one is missing.
func Releases(root string) ([]Release, error) {
	env := func(name, file string) string {
		if v := os.Getenv(name); v != "" {
			return v
		}
		return filepath.Join(root, "bin", file)
	}
	rs := []Release{
		{Name: "1.26", Binary: env("AWS_CCM_126", "aws-cloud-controller-manager-1.26")},
		{Name: "1.35", Binary: env("AWS_CCM_135", "aws-cloud-controller-manager-1.35")},
		{Name: "current", Binary: env("AWS_CCM", "aws-cloud-controller-manager")},
	}
	for _, r := range rs {
		if _, err := os.Stat(r.Binary); err != nil {
			cmd := exec.Command("make", "-s", "-C", root, "tools-aws-ccm")
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if err := cmd.Run(); err != nil {
				return nil, fmt.Errorf("building the AWS CCM (make tools-aws-ccm): %w", err)
			}
			break
		}
	}
	for i := range rs {
		out, err := exec.Command(rs[i].Binary, "--version").CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("%s --version: %w\n%s", rs[i].Binary, err, out)
		}
		// "Kubernetes v1.26.0"
		f := strings.Fields(string(out))
		if len(f) == 0 {
			return nil, fmt.Errorf("%s --version printed nothing", rs[i].Binary)
		}
		rs[i].Version = f[len(f)-1]
	}
	return rs, nil
}

// Minor is the release's Kubernetes minor: 26 for v1.26.0.
func (r Release) Minor() int {
	parts := strings.SplitN(strings.TrimPrefix(r.Version, "v"), ".", 3)
	if len(parts) < 2 {
		return 0
	}
	m, _ := strconv.Atoi(parts[1])
	return m
}

// CloudConfig is the CCM's cloud config for a cluster in moto.
type CloudConfig struct {
	Cluster moto.Cluster
	Network moto.Network
	URL     string // moto's
	// Services are the [ServiceOverride] service names to write; nil: both
	// SDKs' (SDKv1Services and SDKv2Services).
	Services []string
}

// The [ServiceOverride] names each SDK matches: aws-sdk-go v1 releases
// (1.26) the endpoint ID, aws-sdk-go v2 releases (1.35, 1.37) the service ID
// (ELB and ELBv2 share the endpoint ID). A release ignores a name it does
// not know and calls AWS itself, so the default config lists both.
var (
	SDKv1Services = []string{"ec2", "elasticloadbalancing"}
	SDKv2Services = []string{"EC2", "Elastic Load Balancing", "Elastic Load Balancing v2"}
)

// signingName is the name requests to a service are signed for.
func signingName(service string) string {
	if strings.EqualFold(service, "ec2") {
		return "ec2"
	}
	return "elasticloadbalancing"
}

// String writes the config. With [Global] Zone, VPC, SubnetID and
// KubernetesClusterID set, the CCM needs no instance metadata: it takes its
// path for a control plane outside EC2.
func (c CloudConfig) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[Global]\nZone = %s\nVPC = %s\nSubnetID = %s\nKubernetesClusterID = %s\n",
		c.Cluster.Zone, c.Network.VPC, c.Network.Subnet, c.Cluster.ID)
	region := c.Cluster.Region()
	services := c.Services
	if services == nil {
		services = append(slices.Clone(SDKv1Services), SDKv2Services...)
	}
	for i, s := range services {
		fmt.Fprintf(&b, "\n[ServiceOverride %q]\nService = %s\nRegion = %s\nURL = %s\nSigningRegion = %s\nSigningName = %s\n",
			strconv.Itoa(i+1), s, region, c.URL, region, signingName(s))
	}
	return b.String()
}

// Trap is where the CCM's proxy variables point: a loopback port that
// proxies nothing. It reads the first line of each connection (CONNECT
// ec2.us-west-2.amazonaws.com:443 HTTP/1.1: where a request not pointed at
// moto would have gone), records it and closes the connection.
type Trap struct {
	l    net.Listener
	mu   sync.Mutex
	seen []string
	wg   sync.WaitGroup
}

// StartTrap listens on a free loopback port.
func StartTrap() (*Trap, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	t := &Trap{l: l}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			t.mu.Lock()
			t.seen = append(t.seen, strings.TrimSpace(line))
			t.mu.Unlock()
		}
	}()
	return t, nil
}

// URL is the trap as a proxy URL.
func (t *Trap) URL() string { return "http://" + t.l.Addr().String() }

// Seen returns the first line of every connection the trap got.
func (t *Trap) Seen() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.seen...)
}

// Close stops the trap.
func (t *Trap) Close() {
	t.l.Close()
	t.wg.Wait()
}

// Env is the CCM's environment for moto: the IAM user's access key, no
// instance metadata (v1.35 and later probe it otherwise), no shared AWS config or
// credentials of the machine, and every proxy variable at the trap, with
// loopback (moto, the API server) reached directly.
func Env(creds moto.Credentials, trap *Trap) []string {
	env := append(creds.Env(),
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE="+os.DevNull, "AWS_SHARED_CREDENTIALS_FILE="+os.DevNull, "AWS_PROFILE=",
		"AWS_SESSION_TOKEN=", "AWS_ROLE_ARN=", "AWS_WEB_IDENTITY_TOKEN_FILE=",
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
	for _, v := range []string{"HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY", "all_proxy"} {
		env = append(env, v+"="+trap.URL())
	}
	return env
}

// Options say how to run a CCM.
type Options struct {
	Name        string   // of its log in the control plane's directory (NAME.log)
	Binary      string   // a Release's
	Args        []string // the CCM container's args, as rendered
	Files       map[string]string
	Kubeconfig  string   // the identity it runs as: its service account's, as in a pod
	CloudConfig string   // the text of --cloud-config
	Env         []string // Env's
	Extra       []string // flags after the rendered ones (leader election timings, say)
}

// Run starts the CCM with the rendered args and what a pod gives it: the
// API server (Kubeconfig, for delegated authentication and authorization
// too), a cloud config file (replacing a rendered --cloud-config), each
// rendered flag whose value is a key of Files pointed at a file with that
// content (a mounted ConfigMap), and its ports on loopback.
func Run(cp *harness.ControlPlane, o Options) (*harness.Process, error) {
	dir, err := os.MkdirTemp(cp.Dir, o.Name+"-")
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "cloud.conf")
	if err := os.WriteFile(conf, []byte(o.CloudConfig), 0o600); err != nil {
		return nil, err
	}
	var args []string
	for _, a := range o.Args {
		name, value, _ := strings.Cut(a, "=")
		if name == "--cloud-config" {
			continue
		}
		if content, ok := o.Files[value]; ok {
			path := filepath.Join(dir, filepath.Base(value))
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				return nil, err
			}
			a = name + "=" + path
		}
		args = append(args, a)
	}
	port, err := harness.FreePort()
	if err != nil {
		return nil, err
	}
	args = append(args, "--cloud-config="+conf,
		"--kubeconfig="+o.Kubeconfig,
		"--authentication-kubeconfig="+o.Kubeconfig, "--authorization-kubeconfig="+o.Kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port))
	args = append(args, o.Extra...)
	return cp.RunEnv(o.Name, o.Binary, o.Env, args...)
}
