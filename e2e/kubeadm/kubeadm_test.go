// Package kubeadm runs the real kubeadm (of the e2e control plane's
// release, $KUBEADM) on the kubeadm files of `plan --distro=kubeadm
// --from=new`: `kubeadm config validate` decodes them strictly (an unknown
// field is an error), defaults and validates them as `kubeadm init` and
// `kubeadm join` do.
package kubeadm

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"sigs.k8s.io/yaml"
)

// kubeadmBin is the kubeadm $KUBEADM names, or the one make builds.
func kubeadmBin(t *testing.T) string {
	t.Helper()
	p := os.Getenv("KUBEADM")
	if p == "" {
		t.Fatal("KUBEADM is not set: run the e2e tests with make e2e, which builds bin/kubeadm")
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("KUBEADM: %v", err)
	}
	return p
}

// files returns the kubeadm files of the plan for a new cluster at the
// minor: the init file (InitConfiguration and ClusterConfiguration) and the
// join file.
func files(t *testing.T, minor int) (initFile, joinFile string) {
	t.Helper()
	out, errOut, err := testtools.Run(t, nil, testtools.Renderer(t), "plan", "--distro=kubeadm", "--from=new",
		fmt.Sprintf("--kube-version=1.%d", minor), "-o", "json")
	if err != nil {
		t.Fatalf("plan at 1.%d: %v\n%s", minor, err, errOut)
	}
	var p plan.Plan
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatal(err)
	}
	for _, ph := range p.Phases {
		for _, s := range ph.Steps {
			for _, sn := range s.Snippets {
				switch {
				case strings.HasPrefix(sn.File, "kubeadm-config.yaml"):
					initFile = sn.Content
				case strings.HasPrefix(sn.File, "kubeadm-join.yaml"):
					joinFile = sn.Content
				}
			}
		}
	}
	if initFile == "" || joinFile == "" {
		t.Fatalf("the plan at 1.%d has no kubeadm-config.yaml or kubeadm-join.yaml", minor)
	}
	return initFile, joinFile
}

// withDiscovery adds the discovery section the join file's note tells the
// operator to add (kubeadm token create --print-join-command prints its
// values): kubeadm join refuses a JoinConfiguration without one.
func withDiscovery(t *testing.T, join string) string {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(join), &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["discovery"]; ok {
		t.Fatal("the join file has a discovery section: the note that says to add one is wrong")
	}
	doc["discovery"] = map[string]any{"bootstrapToken": map[string]any{
		"apiServerEndpoint": "10.0.1.10:6443",
		"token":             "abcdef.0123456789abcdef",
		"caCertHashes":      []string{"sha256:" + strings.Repeat("0a", 32)},
	}}
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// validate runs kubeadm config validate on the file's text.
func validate(t *testing.T, kubeadm, name, text string) (string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	testtools.WriteFile(t, path, []byte(text))
	out, err := exec.Command(kubeadm, "config", "validate", "--config", path).CombinedOutput()
	return string(out), err
}

// kubeadmMinor is the minor of the kubeadm under test.
func kubeadmMinor(t *testing.T, kubeadm string) int {
	t.Helper()
	out, err := exec.Command(kubeadm, "version", "-o", "short").Output()
	if err != nil {
		t.Fatalf("kubeadm version: %v", err)
	}
	var minor int
	if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "v1.%d.", &minor); err != nil {
		t.Fatalf("kubeadm version %q: %v", out, err)
	}
	return minor
}

var versionLine = regexp.MustCompile(`(?m)^kubernetesVersion: v1\.(\d+)\.0$`)

// TestKubeadmValidates: kubeadm takes the plan's files of every minor it
// can deploy (its own and the one before), as they are; for older minors of
// the same configuration API (v1beta4, 1.31 on) it refuses them for the
// Kubernetes version alone: with kubernetesVersion set to its own minor,
// the rest of the file is valid. It refuses v1beta3 (the files of 1.27 to
// 1.30), as the plan says.
func TestKubeadmValidates(t *testing.T) {
	kubeadm := kubeadmBin(t)
	own := kubeadmMinor(t, kubeadm)
	for minor := releases.LastInTreeMinor + 1; minor <= own; minor++ {
		t.Run(fmt.Sprintf("1.%d", minor), func(t *testing.T) {
			initFile, joinFile := files(t, minor)
			joinFile = withDiscovery(t, joinFile)
			if m := versionLine.FindStringSubmatch(initFile); m == nil || m[1] != fmt.Sprint(minor) {
				t.Fatalf("the init file does not pin kubernetesVersion v1.%d.0:\n%s", minor, initFile)
			}
			v1beta3 := strings.Contains(initFile, "kubeadm.k8s.io/v1beta3")
			if v1beta3 != (minor <= 30) {
				t.Fatalf("the init file at 1.%d: v1beta3 %v:\n%s", minor, v1beta3, initFile)
			}
			if v1beta3 {
				for name, text := range map[string]string{"init.yaml": initFile, "join.yaml": joinFile} {
					out, err := validate(t, kubeadm, name, text)
					if err == nil || !strings.Contains(out, `old API spec: "kubeadm.k8s.io/v1beta3"`) {
						t.Errorf("kubeadm 1.%d on the %s of 1.%d (v1beta3): %v, want a refusal naming v1beta3\n%s", own, name, minor, err, out)
					}
				}
				return
			}
			if out, err := validate(t, kubeadm, "join.yaml", joinFile); err != nil {
				t.Errorf("kubeadm config validate of the join file: %v\n%s\n%s", err, out, joinFile)
			}
			out, err := validate(t, kubeadm, "init.yaml", initFile)
			if minor >= own-1 {
				if err != nil {
					t.Errorf("kubeadm config validate of the init file: %v\n%s\n%s", err, out, initFile)
				}
				return
			}
			if err == nil || !strings.Contains(out, "only supports deploying clusters with the control plane version") {
				t.Errorf("kubeadm 1.%d took a control plane of 1.%d (%v): the test's premise is wrong\n%s", own, minor, err, out)
			}
			ownVersion := versionLine.ReplaceAllString(initFile, fmt.Sprintf("kubernetesVersion: v1.%d.0", own))
			if out, err := validate(t, kubeadm, "init.yaml", ownVersion); err != nil {
				t.Errorf("kubeadm config validate of the init file with kubernetesVersion v1.%d.0: %v\n%s\n%s", own, err, out, ownVersion)
			}
		})
	}
}
