package check_test

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

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check/output"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/schematest"
)

func TestWriteTable(t *testing.T) {
	r := check.SampleReport(t)
	var plain, colour bytes.Buffer
	if err := output.WriteTable(&plain, r, false); err != nil {
		t.Fatal(err)
	}
	if err := output.WriteTable(&colour, r, true); err != nil {
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
		for i < len(check.Areas()) && check.Areas()[i] != f.Area {
			i++
		}
		if i < prev {
			t.Errorf("%s after a later area", f.Area)
		}
		prev = i
	}
	plain.Reset()
	if err := output.WriteTable(&plain, check.Failed("gone", "", errors.New("cannot reach the cluster: refused")), false); err != nil || plain.String() != "Cluster gone\n  ✗ cannot reach the cluster: refused\n" {
		t.Errorf("failed cluster: %q", plain.String())
	}
}

func TestWriteSummary(t *testing.T) {
	ok := &check.Report{Context: "a", KubernetesVersion: "v1.34.1", Distribution: check.Distribution{Detected: "rke2"}, Workload: &check.Workload{},
		Summary: check.Summary{ControlPlaneNodes: 3, CCMOnControlPlane: 3, Nodes: 5}}
	var b bytes.Buffer
	if err := output.WriteSummary(&b, []*check.Report{ok, check.SampleReport(t), check.Failed("c", "", errors.New(`forbidden: check needs "list" on nodes at cluster scope (kubectl auth can-i list nodes); more`))}, false); err != nil {
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
// reports made here (awscheck's TestAWSSchema: with --aws), a cluster that
// could not be read, and the real
// outputs the real-cluster tests keep as golden files; and the schema
// rejects what it should.
func TestSchema(t *testing.T) {
	s := schematest.Compile(t, "check.schema.json")
	var b bytes.Buffer
	todayReport := check.TodayReport(t)
	for _, area := range []string{check.AreaOptions, check.AreaControllers, check.AreaPlan} {
		if !slices.ContainsFunc(todayReport.Findings, func(f check.Finding) bool { return f.Area == area }) {
			t.Errorf("no %s finding: %+v", area, todayReport.Findings)
		}
	}
	if err := output.WriteJSON(&b, []*check.Report{check.SampleReport(t), check.Failed("gone", "https://127.0.0.1:1", errors.New("refused")), todayReport}); err != nil {
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
