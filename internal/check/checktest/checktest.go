// Package checktest holds the fixtures the tests of check and of its AWS
// side (awscheck) share: nodes as the distributions register them, and
// the sample chart rendered by aws-ccm-renderer. It imports neither, so
// that both packages' own tests can use it.
package checktest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// AnnotationRKE2NodeArgs is the annotation RKE2 writes its node's
// arguments into.
const AnnotationRKE2NodeArgs = "rke2.io/node-args"

// NodeOpt changes a node being made.
type NodeOpt func(*corev1.Node)

// Node is a node with the options applied.
func Node(name string, opts ...NodeOpt) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}, Annotations: map[string]string{}}}
	for _, o := range opts {
		o(&n)
	}
	return n
}

func Label(k, v string) NodeOpt      { return func(n *corev1.Node) { n.Labels[k] = v } }
func Annotation(k, v string) NodeOpt { return func(n *corev1.Node) { n.Annotations[k] = v } }
func Kubelet(v string) NodeOpt       { return func(n *corev1.Node) { n.Status.NodeInfo.KubeletVersion = v } }
func ProviderID(id string) NodeOpt   { return func(n *corev1.Node) { n.Spec.ProviderID = id } }
func Internal(ip string) NodeOpt {
	return func(n *corev1.Node) {
		n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip})
	}
}
func Taint(k, v string, e corev1.TaintEffect) NodeOpt {
	return func(n *corev1.Node) { n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: k, Value: v, Effect: e}) }
}

// RKE2Server is an initialised RKE2 server (etcd and control plane).
func RKE2Server(name string, more ...NodeOpt) corev1.Node {
	return Node(name, append([]NodeOpt{Kubelet("v1.34.2+rke2r1"), Label(distros.LabelControlPlane, "true"), Label(distros.TaintEtcd, "true"),
		Taint(distros.LabelControlPlane, "", corev1.TaintEffectNoSchedule), Taint(distros.TaintEtcd, "", corev1.TaintEffectNoExecute),
		Annotation(AnnotationRKE2NodeArgs, `["server","--kubelet-arg","cloud-provider=external"]`), ProviderID("aws:///us-west-2a/i-0123")}, more...)...)
}

// RKE2Agent is an initialised RKE2 agent.
func RKE2Agent(name string, more ...NodeOpt) corev1.Node {
	return Node(name, append([]NodeOpt{Kubelet("v1.34.2+rke2r1"), Annotation(AnnotationRKE2NodeArgs, `["agent"]`), ProviderID("aws:///us-west-2a/i-0456")}, more...)...)
}

// Chart is the sample chart's output check's tests read
// (internal/check/testdata/chart.yaml).
func Chart(t testing.TB) []byte {
	t.Helper()
	in, err := os.ReadFile(filepath.Join(testtools.Root(), "internal", "check", "testdata", "chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// Render runs aws-ccm-renderer over the sample chart with the options.
func Render(t testing.TB, o renderer.Options) []byte {
	t.Helper()
	// The fixture's CCM (1.34) is newer than any cluster that migrates:
	// these tests are about what check reads off rendered objects, not
	// about the renderer's version rules.
	o.AllowVersionSkew = o.AllowVersionSkew || o.Mode == renderer.ModeMigrate
	pr, err := renderer.NewPostRenderer(o)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pr.Run(bytes.NewBuffer(Chart(t)))
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
