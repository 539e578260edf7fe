package awsccm_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/awsccm"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/moto"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// What the package's tests share: one control plane (etcd and the API
// server: the CCM under test is its only controller), one moto enforcing
// IAM, the cluster's network and one instance per node, and the trap the
// CCMs' proxy variables point at.
var (
	cp       *harness.ControlPlane
	aws      *moto.Server
	trap     *awsccm.Trap
	releases []awsccm.Release
	cluster  = moto.Cluster{ID: "e2e", Zone: "us-west-2a"}
	network  moto.Network
	// nodes are every distribution's fixture nodes as kubelets with
	// --cloud-provider=external register them on EC2, each backed by an
	// instance: named by its instance's private DNS name, and once more
	// (the first fixture of each distribution) under a hostname override.
	nodes []node
)

// fixtureDistros are the distributions with node fixtures in testdata/nodes.
var fixtureDistros = []string{"rke", "rke2", "k3s", "kubeadm"}

type node struct {
	distro   string
	node     corev1.Node
	instance moto.Instance
	override bool // registered under its fixture's name, not the instance's
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	start := time.Now()
	root := testtools.Root()
	bin, err := harness.Locate(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "awsccm:", err)
		return 1
	}
	if releases, err = awsccm.Releases(root); err != nil {
		fmt.Fprintln(os.Stderr, "awsccm:", err)
		return 1
	}
	if cp, err = harness.Start(ctx, bin, nil); err != nil {
		fmt.Fprintln(os.Stderr, "awsccm: starting the control plane:", err)
		return 1
	}
	defer cp.Stop()
	if aws, err = moto.Start(ctx, root, moto.Options{Dir: cp.Dir, Region: cluster.Region()}); err != nil {
		fmt.Fprintln(os.Stderr, "awsccm:", err)
		return 1
	}
	defer aws.Stop()
	if err := seed(ctx, root); err != nil {
		fmt.Fprintln(os.Stderr, "awsccm: seeding moto:", err)
		return 1
	}
	if err := aws.Enforce(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "awsccm:", err)
		return 1
	}
	if trap, err = awsccm.StartTrap(); err != nil {
		fmt.Fprintln(os.Stderr, "awsccm:", err)
		return 1
	}
	defer trap.Close()
	var rs []string
	for _, r := range releases {
		rs = append(rs, r.Version)
	}
	fmt.Fprintf(os.Stderr, "awsccm: control plane and moto %s up, %d instances, AWS CCM %s, in %s (%s)\n",
		aws.Version, len(nodes), strings.Join(rs, ", "), time.Since(start).Round(time.Millisecond), cp.Dir)
	code := m.Run()
	if seen := trap.Seen(); len(seen) > 0 {
		fmt.Fprintf(os.Stderr, "awsccm: requests left for outside moto: %q\n", seen)
		code = 1
	}
	if code != 0 {
		fmt.Fprintln(os.Stderr, "awsccm: moto log tail:\n"+tail(aws.Log(), 3000))
	}
	return code
}

// seed creates the cluster's network and one instance per node.
func seed(ctx context.Context, root string) error {
	var err error
	if network, err = aws.SeedNetwork(ctx, cluster); err != nil {
		return err
	}
	for _, d := range fixtureDistros {
		fixtures, err := harness.LoadNodes(filepath.Join(root, "testdata", "nodes", d+".yaml"))
		if err != nil {
			return err
		}
		var names []string
		for _, f := range fixtures {
			names = append(names, f.Name)
		}
		names = append(names, fixtures[0].Name+"-override")
		instances, err := aws.RunInstances(ctx, cluster, network, names...)
		if err != nil {
			return err
		}
		for i, f := range fixtures {
			n := f.DeepCopy()
			n.Name = instances[i].PrivateDNSName
			n.Labels["kubernetes.io/hostname"] = n.Name
			registered(d, n, instances[i])
			nodes = append(nodes, node{distro: d, node: *n, instance: instances[i]})
		}
		// The first fixture once more, under its own name: a hostname the
		// CCM cannot look up, with an instance of its own behind it.
		o := fixtures[0].DeepCopy()
		registered(d, o, instances[len(fixtures)])
		nodes = append(nodes, node{distro: d, node: *o, instance: instances[len(fixtures)], override: true})
	}
	return nil
}

// registered gives a fixture node what its kubelet and its distribution's
// agent leave on it when it registers with --cloud-provider=external on
// its instance: the kubelet's version and addresses (the kubelet sets
// InternalIP and Hostname until a cloud provider sets them:
// pkg/kubelet/nodestatus NodeAddress), and the distribution's marks (RKE2's
// and K3s's recorded arguments, RKE1's address annotation, kubeadm's CRI
// socket), so that check tells the distribution as on a real cluster.
func registered(distro string, n *corev1.Node, in moto.Instance) {
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: in.PrivateIP}, {Type: corev1.NodeHostName, Address: n.Name}}
	roles := n.Annotations["fixture.aws-ccm-renderer.io/roles"]
	server := strings.Contains(roles, "etcd") || strings.Contains(roles, "controlplane")
	args := func(program string) string {
		a := `"agent"`
		if server {
			a = `"server"`
			if program == "k3s" {
				a += `,"--disable-cloud-controller"`
			}
			if !strings.Contains(roles, "controlplane") {
				a += `,"--disable-apiserver","--disable-controller-manager","--disable-scheduler"`
			}
		}
		return "[" + a + `,"--kubelet-arg","cloud-provider=external"]`
	}
	switch distro {
	case "rke":
		n.Status.NodeInfo.KubeletVersion = "v1.32.9"
		n.Annotations["rke.cattle.io/internal-ip"] = in.PrivateIP
	case "rke2":
		n.Status.NodeInfo.KubeletVersion = "v1.34.2+rke2r1"
		n.Annotations["rke2.io/node-args"] = args("rke2")
	case "k3s":
		n.Status.NodeInfo.KubeletVersion = "v1.34.2+k3s1"
		n.Annotations["k3s.io/node-args"] = args("k3s")
	case "kubeadm":
		n.Status.NodeInfo.KubeletVersion = "v1.34.2"
		n.Annotations["kubeadm.alpha.kubernetes.io/cri-socket"] = "unix:///run/containerd/containerd.sock"
	}
}

// The renderer's output for the newest upstream chart (what the DaemonSet
// runs), and the chart's own output (its RBAC without the renderer's fix).
var (
	renderOnce          sync.Once
	rendered, chartOnly []byte
	renderedArgs        []string
)

func renders(t *testing.T) {
	t.Helper()
	renderOnce.Do(func() {
		chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
		base := []string{"template", "ccm", chart, "--namespace", "kube-system"}
		chartOnly = testtools.MustRun(t, testtools.HelmEnv(t), testtools.Helm3(t), base...)
		rendered = testtools.MustRun(t, testtools.HelmEnv(t), testtools.Helm3(t),
			append(base, "--post-renderer", testtools.Renderer(t))...)
		_, renderedArgs = testtools.CCMOf(t, rendered)
	})
	if renderedArgs == nil {
		t.Fatal("rendering failed in an earlier test")
	}
}

// rbac returns a stream's service account and RBAC objects: what the CCM
// runs as, without the workload.
func rbac(t *testing.T, stream []byte) []*unstructured.Unstructured {
	t.Helper()
	objs, err := harness.Decode(stream)
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			out = append(out, o)
		}
	}
	if len(out) < 3 {
		t.Fatalf("only %d service account and RBAC objects in the output", len(out))
	}
	return out
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
