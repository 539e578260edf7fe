package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// LoadNodes reads Node objects from a YAML file of several documents.
func LoadNodes(path string) ([]corev1.Node, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var nodes []corev1.Node
	for {
		var n corev1.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return nodes, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if n.Name != "" {
			nodes = append(nodes, n)
		}
	}
}

// CreateNodes creates nodes as a kubelet would leave them: with the
// fixture's labels, taints and status (addresses, node info), Ready, and
// without the not-ready taint the API server's admission adds to a node
// that has no Ready condition yet.
func (cp *ControlPlane) CreateNodes(ctx context.Context, nodes []corev1.Node) error {
	for _, n := range nodes {
		n := n.DeepCopy()
		created, err := cp.Client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
		now := metav1.Now()
		created.Status = *n.Status.DeepCopy()
		created.Status.Conditions = []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: now, LastTransitionTime: now,
		}}
		created, err = cp.Client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("node %s status: %w", n.Name, err)
		}
		// Keep exactly the fixture's taints.
		if len(created.Spec.Taints) != len(n.Spec.Taints) {
			created.Spec.Taints = n.Spec.Taints
			if _, err := cp.Client.CoreV1().Nodes().Update(ctx, created, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("node %s taints: %w", n.Name, err)
			}
		}
	}
	return nil
}

// CreateFixtures creates the node fixtures of distributions,
// testdata/nodes/<distro>.yaml under the repository's root, all in the
// cluster at once, and returns their nodes by distribution.
func (cp *ControlPlane) CreateFixtures(ctx context.Context, root string, distros []string) (map[string][]corev1.Node, error) {
	fixtures := map[string][]corev1.Node{}
	for _, d := range distros {
		nodes, err := LoadNodes(filepath.Join(root, "testdata", "nodes", d+".yaml"))
		if err != nil {
			return nil, err
		}
		if err := cp.CreateNodes(ctx, nodes); err != nil {
			return nil, err
		}
		fixtures[d] = nodes
	}
	return fixtures, nil
}
