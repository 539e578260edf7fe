package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	corev1 "k8s.io/api/core/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/schematest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// sample is a report with something in every area: manifests for RKE1 on
// an RKE2 cluster.
func sample(t *testing.T) *Report {
	t.Helper()
	s := snapshotOf(t, []corev1.Node{rke2Server("cp-1"), rke2Agent("w-1", providerID(""))}, render(t, renderer.DistroRKE, renderer.ModeMigrate), false)
	s.Access = []Permission{{Subject: "ServiceAccount kube-system/cloud-controller-manager", Verb: "get", Resource: "nodes"}}
	s.Context, s.Server = "prod", "https://example.com"
	return Evaluate(s)
}

func TestWriteTable(t *testing.T) {
	r := sample(t)
	var plain, colour bytes.Buffer
	if err := WriteTable(&plain, r, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteTable(&colour, r, true); err != nil {
		t.Fatal(err)
	}
	out := plain.String()
	if strings.Contains(out, "\x1b[") || !strings.Contains(colour.String(), "\x1b[31m✗\x1b[0m") {
		t.Error("colour only when asked")
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != "Cluster prod (https://example.com), Kubernetes v1.34.10" {
		t.Errorf("heading: %q", lines[0])
	}
	if !strings.Contains(out, "\n  ✗ placement     cp-1: control plane (label node-role.kubernetes.io/control-plane=\"true\"), but no CCM pod: nodeSelector node-role.kubernetes.io/controlplane=\"true\": the node has no such label\n"+
		"                  → render with --distro=rke2 (the distribution's control-plane label) or --distro=auto\n") {
		t.Errorf("a finding and its fix:\n%s", out)
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "  ") || !strings.Contains(last, "errors") {
		t.Errorf("counts: %q", last)
	}
	// Areas come in their order.
	prev := -1
	for _, f := range r.Findings {
		i := 0
		for i < len(areaOrder) && areaOrder[i] != f.Area {
			i++
		}
		if i < prev {
			t.Errorf("%s after a later area", f.Area)
		}
		prev = i
	}
	plain.Reset()
	if err := WriteTable(&plain, Failed("gone", "", errors.New("cannot reach the cluster: refused")), false); err != nil || plain.String() != "Cluster gone\n  ✗ cannot reach the cluster: refused\n" {
		t.Errorf("failed cluster: %q", plain.String())
	}
}

func TestWriteSummary(t *testing.T) {
	ok := &Report{Context: "a", KubernetesVersion: "v1.34.1", Distribution: Distribution{Detected: "rke2"}, Workload: &Workload{},
		Summary: Summary{ControlPlaneNodes: 3, CCMOnControlPlane: 3, Nodes: 5}}
	var b bytes.Buffer
	if err := WriteSummary(&b, []*Report{ok, sample(t), Failed("c", "", errors.New(`forbidden: check needs "list" on nodes at cluster scope (kubectl auth can-i list nodes); more`))}, false); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"   CONTEXT  DISTRIBUTION  KUBERNETES  CCM ON CONTROL PLANE  UNINITIALISED  PROBLEMS",
		"✓  a        rke2          v1.34.1     3/3                   0/5            no problems",
		"✗  prod     rke2          v1.34.10    0/1                   0/2            ",
		"✗  c        -             -           -                     -              forbidden: check needs \"list\" on nodes at cluster scope",
	}
	lines := strings.Split(b.String(), "\n")
	for i, w := range want {
		if i >= len(lines) || !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q, want prefix %q", i, lines[i], w)
		}
	}
}

// TestSchema: the JSON output follows the schema docs/check.md documents:
// reports made here, a cluster that could not be read, and the real
// outputs the real-cluster tests keep as golden files; and the schema
// rejects what it should.
func TestSchema(t *testing.T) {
	s := schematest.Compile(t, "check.schema.json")
	var b bytes.Buffer
	withAWS := healthyAWS(t)
	withAWS.AWS.Unread = []AWSUnread{{Area: AreaSubnet, Action: "ec2:DescribeSubnets", Code: "UnauthorizedOperation", Message: "no", Denied: true}}
	// Today's findings: options, other cloud controllers, providerIDs
	// with their source, the plan.
	today := snapshotOf(t, []corev1.Node{rke2Server("s-1", providerID("rke2://s-1"))}, render(t, renderer.DistroRKE2, renderer.ModeInstall), true)
	today.ControlPlanePods = []corev1.Pod{rke2CCMPod("s-1"), staticPod(programAPIServer, "s-1", "registry.k8s.io/kube-apiserver:v1.33.0", true, "--cloud-provider=external")}
	todayReport := Evaluate(today)
	for _, area := range []string{AreaOptions, AreaControllers, AreaPlan} {
		if !slices.ContainsFunc(todayReport.Findings, func(f Finding) bool { return f.Area == area }) {
			t.Errorf("no %s finding: %+v", area, todayReport.Findings)
		}
	}
	if err := WriteJSON(&b, []*Report{sample(t), Failed("gone", "https://127.0.0.1:1", errors.New("refused")), Evaluate(withAWS), todayReport}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"source": "kubernetes/kubernetes pkg/kubeapiserver/options/cloudprovider.go`) {
		t.Error("no source in the JSON")
	}
	docs := map[string][]byte{"sample": b.Bytes()}
	golden, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "check", "*", "*.json"))
	if len(golden) == 0 {
		t.Error("no golden JSON in testdata/check")
	}
	for _, g := range golden {
		data, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		docs[g] = data
	}
	for name, data := range docs {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := s.Validate(inst); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Something the schema does not know, and a wrong severity.
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	cluster := doc["clusters"].([]any)[0].(map[string]any)
	cluster["surprise"] = true
	if err := s.Validate(doc); err == nil {
		t.Error("the schema took an unknown field")
	}
	delete(cluster, "surprise")
	cluster["findings"].([]any)[0].(map[string]any)["severity"] = "fatal"
	if err := s.Validate(doc); err == nil {
		t.Error("the schema took severity fatal")
	}
}
