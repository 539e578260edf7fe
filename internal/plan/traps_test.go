package plan_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// TestNamingTraps: RKE2's naming keys and Rancher's KDM filter, in every
// plan that sets them. From the releases of the node-name change, either
// key names a node after instance metadata whatever node-name says, so a
// node the migration pinned must turn both off (a drop-in read after
// Rancher's file); and Rancher drops the key where its KDM data does not
// list it, so a plan that sets it in Rancher's spec says which Rancher
// keeps it and what to do on an older one.
func TestNamingTraps(t *testing.T) {
	nodeName, ok := releases.Change("rke2", "node-name")
	if !ok || len(nodeName.Releases) == 0 {
		t.Fatal("no release data for RKE2's node-name change")
	}
	kdm := func(text string) string {
		if m := has(text, "KDM", releases.KDMFilterSource); m != "" {
			return m
		}
		for _, d := range releases.NamingKeyKDM {
			if m := has(text, "Rancher "+d.Rancher, d.Ref); m != "" {
				return m
			}
		}
		return ""
	}

	// The leader migration: pins node-name where the label differs, then
	// moves to the naming key at the upgrade.
	o := plan.DefaultOptions()
	o.Distro = distros.RKE2
	p, err := plan.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	_, label := stepJSON(t, p, "before.hostname-label")
	if m := has(label, "whatever node-name says", "after.upgrade"); m != "" {
		t.Errorf("before.hostname-label %s", m)
	}
	up, text := stepJSON(t, p, "after.upgrade")
	if m := hasNot(text, "names the nodes the same"); m != "" {
		t.Errorf("after.upgrade %s", m)
	}
	if m := kdm(text); m != "" {
		t.Errorf("after.upgrade %s", m)
	}
	var dropIn *plan.Snippet
	for i, s := range up.Snippets {
		if s.File == releases.NodeNameDropIn {
			dropIn = &up.Snippets[i]
		}
	}
	if dropIn == nil {
		t.Fatalf("after.upgrade has no %s for the nodes given node-name", releases.NodeNameDropIn)
	}
	var keys map[string]any
	if err := yaml.Unmarshal([]byte(dropIn.Content), &keys); err != nil {
		t.Fatal(err)
	}
	if keys["node-name-from-cloud-provider-metadata"] != false || keys["cloud-provider-name"] != "external" || keys["node-name"] != "<NAME>" {
		t.Errorf("the drop-in must turn both naming keys off and keep node-name: %v", keys)
	}
	if m := has(dropIn.Note, "50-rancher.yaml", "k3s-io/k3s pkg/configfilearg"); m != "" {
		t.Errorf("the drop-in's note %s", m)
	}

	// Every plan that sets the key in Rancher's spec.
	n := 0
	for name, p := range walkPlans(t) {
		if p.Distro != distros.RKE2 {
			continue
		}
		all, _ := json.Marshal(p)
		if !strings.Contains(string(all), "machineGlobalConfig") || !strings.Contains(string(all), "node-name-from-cloud-provider-metadata: true") {
			continue
		}
		n++
		if m := kdm(string(all)); m != "" {
			t.Errorf("%s sets node-name-from-cloud-provider-metadata for Rancher and %s", name, m)
		}
		if m := has(string(all), "whatever node-name says"); m != "" {
			t.Errorf("%s %s", name, m)
		}
	}
	if n == 0 {
		t.Error("no RKE2 plan sets node-name-from-cloud-provider-metadata in Rancher's spec")
	}
	t.Logf("%d RKE2 plans set the key in Rancher's spec", n)
}

// TestClusterManifest: the new RKE2 and K3s plans put the rendered CCM in
// the manifests the cluster applies itself. The Rancher command, run as
// written by a real sh on a rendered stream (comments, blank lines,
// document markers), writes a merge patch whose additionalManifest is the
// file byte for byte; the folder command names the distribution's
// manifests folder; kubeadm, which has none, gets no such step.
func TestClusterManifest(t *testing.T) {
	for _, d := range plan.Distros {
		o := plan.DefaultOptions()
		o.Distro, o.From, o.KubeVersion = d, "new", "v1.32.3"
		p, err := plan.Build(o)
		if err != nil {
			t.Fatal(err)
		}
		s, text := stepJSON(t, p, "before.cluster-manifest")
		rec, _ := distros.RecordOf(d)
		dir := rec.Node.ManifestsDir
		if dir == "" {
			if text != "" {
				t.Errorf("%s has no manifests folder and a cluster-manifest step", d)
			}
			continue
		}
		if text == "" {
			t.Errorf("%s: no before.cluster-manifest", d)
			continue
		}
		if m := has(text, dir, "additionalManifest", "rancher/rancher#40004", "k3s-io/k3s pkg/deploy"); m != "" {
			t.Errorf("%s: %s", d, m)
		}
		_, install := stepJSON(t, p, "during.install-ccm")
		_, upgrade := stepJSON(t, p, "after.upgrade")
		if !strings.Contains(install, "before.cluster-manifest") || !strings.Contains(upgrade, "before.cluster-manifest") {
			t.Errorf("%s: during.install-ccm and after.upgrade do not say what changes with before.cluster-manifest", d)
		}
		var patch string
		for _, c := range s.Commands {
			if strings.Contains(c.Shell, "--patch-file") {
				patch = c.Shell
			}
		}
		if patch == "" {
			t.Fatalf("%s: no Rancher patch", d)
		}
		stream, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "helm3", "0.0.11", string(d)+"-install.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		stream = append([]byte("---\n# a comment, then a blank line\n\n"), stream...)
		work := t.TempDir()
		if err := os.WriteFile(filepath.Join(work, "aws-ccm.yaml"), stream, 0o600); err != nil {
			t.Fatal(err)
		}
		// The patch alone: kubectl, which the real run needs next, is not
		// this test's.
		first, _, _ := strings.Cut(patch, "\nkubectl ")
		cmd := exec.Command("sh", "-ec", first)
		cmd.Dir = work
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", d, err, out)
		}
		b, err := os.ReadFile(filepath.Join(work, "additional-manifest.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Spec struct {
				RKEConfig struct {
					AdditionalManifest string `json:"additionalManifest"`
				} `json:"rkeConfig"`
			} `json:"spec"`
		}
		if err := yaml.UnmarshalStrict(b, &got); err != nil {
			t.Fatalf("%s: the patch is no YAML of spec.rkeConfig.additionalManifest: %v", d, err)
		}
		if got.Spec.RKEConfig.AdditionalManifest != string(stream) {
			t.Errorf("%s: additionalManifest is not aws-ccm.yaml byte for byte (%d bytes, want %d)", d, len(got.Spec.RKEConfig.AdditionalManifest), len(stream))
		}
	}
}
