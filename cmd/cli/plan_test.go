package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// TestPlanCommand: the command prints what the plan package builds, with
// every flag reaching its option.
func TestPlanCommand(t *testing.T) {
	code, out, errOut := run(t, "", "plan", "--distro", "kubeadm", "-o", "json", "--phase", "before",
		"--release", "ccm", "-n", "cloud", "--kube-version", "v1.24.17", "--ccm-version", "v1.24.4",
		"--chart-version", "0.0.9", "--kcm-user", "system:kcm", "--leader-name", "other")
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var p plan.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	want := plan.Options{Distro: "kubeadm", Phase: plan.Before, Release: "ccm", Namespace: "cloud", KubeVersion: "v1.24.17",
		CCMVersion: "v1.24.4", Chart: upstream.ChartName, Repo: upstream.ChartRepo, ChartVersion: "0.0.9", KCMUser: "system:kcm", LeaderName: "other"}
	wp, err := plan.Build(want)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := plan.Write(&b, wp, plan.FormatJSON); err != nil {
		t.Fatal(err)
	}
	if b.String() != out {
		t.Errorf("plan -o json with every flag differs from plan.Build(%+v)", want)
	}
	if len(p.Phases) != 1 || p.CCM.ImageTag != "v1.24.4" || p.CCM.Release != "ccm" || p.LeaderMigration.KCMUser != "system:kcm" {
		t.Errorf("flags did not reach the plan: %+v", p)
	}
	// The new flags reach their options too.
	code, out, errOut = run(t, "", "plan", "--distro", "rke", "-o", "json", "--step", "before.routes", "--chart", "mirror/aws-cloud-controller-manager",
		"--cloud-config", "--cluster-cidr", "10.42.0.0/16", "--helm", "--kube-version", "1.26")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	wp, err = plan.Build(plan.Options{Distro: "rke", Step: "before.routes", Release: upstream.Release, Namespace: upstream.Namespace,
		KubeVersion: "1.26", KCMUser: renderer.DefaultKCMUser, LeaderName: "cloud-provider-extraction-migration",
		Chart: "mirror/aws-cloud-controller-manager", Repo: upstream.ChartRepo, ChartVersion: upstream.LatestChartVersion,
		CloudConfig: true, ClusterCIDR: "10.42.0.0/16", Helm: true})
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := plan.Write(&b, wp, plan.FormatJSON); err != nil {
		t.Fatal(err)
	}
	if b.String() != out {
		t.Error("plan -o json with the new flags differs from plan.Build with their options")
	}
	// --brief prints the checklist.
	code, out, _ = run(t, "", "plan", "--distro", "k3s", "--brief")
	if code != ExitOK || !strings.HasPrefix(out, "Checklist: K3s") || !strings.Contains(out, "[ ] during.load-balancers") {
		t.Errorf("plan --brief: exit %d\n%.300s", code, out)
	}
	// The default format is text, and all phases.
	code, out, _ = run(t, "", "plan", "--distro", "rke")
	if code != ExitOK || !strings.HasPrefix(out, "Migration plan: RKE1") || !strings.Contains(out, "\nBEFORE: ") || !strings.Contains(out, "\nAFTER: ") {
		t.Errorf("plan --distro rke: exit %d\n%.300s", code, out)
	}
}

func TestPlanErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no distro", nil, "--distro is required: one of rke, rke2, k3s, kubeadm"},
		{"unknown distro", []string{"--distro", "rke3"}, `unknown distro "rke3"`},
		{"auto", []string{"--distro", "auto"}, "a plan is for one distribution"},
		{"unknown phase", []string{"--distro", "rke", "--phase", "later"}, `unknown phase "later"`},
		{"unknown format", []string{"--distro", "rke", "-o", "yaml"}, `unknown output format "yaml"`},
		{"unknown flag", []string{"--distro", "rke", "--mode", "migrate"}, "unknown flag: --mode"},
		{"positional argument", []string{"--distro", "rke", "extra"}, `unknown command "extra"`},
		{"not a version", []string{"--distro", "rke", "--kube-version", "latest"}, `--kube-version "latest" is not a Kubernetes version such as v1.34.2 or 1.34: major "latest" is not a number`},
		{"a minor that is not a number", []string{"--distro", "rke", "--kube-version", "1.26.x"}, `--kube-version "1.26.x"`},
		{"Kubernetes 2", []string{"--distro", "rke", "--kube-version", "v2.1.0"}, `--kube-version "v2.1.0"`},
		{"unknown step", []string{"--distro", "k3s", "--step", "during.switch"}, `--step "during.switch": the k3s plan has no such step; its steps are before.preflight,`},
		{"step and phase", []string{"--distro", "rke", "--step", "during.switch", "--phase", "during"}, "--phase and --step: give one"},
		{"brief as JSON", []string{"--distro", "rke", "--brief", "-o", "json"}, "--brief is a checklist for people"},
		{"repo with an OCI chart", []string{"--distro", "rke", "--chart", "oci://r.example.com/c/aws-cloud-controller-manager", "--repo", "https://charts.example.com"}, "--repo is where a chart name is looked up"},
		{"repo that is no URL", []string{"--distro", "rke", "--repo", "charts.example.com"}, `--repo "charts.example.com" is not a chart repository URL`},
		{"repo with a password", []string{"--distro", "rke", "--repo", "https://ccm:s3cret@charts.example.com"}, "--repo with credentials in it: the plan's commands would show them"},
		{"repo with a password and an OCI chart", []string{"--distro", "rke", "--chart", "oci://r.example.com/c/aws-cloud-controller-manager", "--repo", "https://ccm:s3cret@charts.example.com"}, "--repo https://ccm:xxxxx@charts.example.com and --chart"},
		{"repo with a token", []string{"--distro", "rke", "--repo", "https://t0ken@charts.example.com"}, "--password-stdin and give --chart NAME/aws-cloud-controller-manager"},
		{"empty chart", []string{"--distro", "rke", "--chart", ""}, `--chart "" is not a chart`},
		{"bad cluster CIDR", []string{"--distro", "kubeadm", "--cluster-cidr", "10.42.0.0"}, `--cluster-cidr "10.42.0.0" is not a CIDR`},
		{"routes on K3s", []string{"--distro", "k3s", "--cluster-cidr", "10.42.0.0/16"}, "K3s's embedded cloud controller never managed VPC routes"},
		{"too old", []string{"--distro", "rke2", "--kube-version", "v1.21.14"}, "needs Kubernetes 1.22 or later"},
		{"no in-tree provider", []string{"--distro", "kubeadm", "--kube-version", "v1.27.16"}, "no in-tree AWS provider to migrate from"},
		{"unknown minor", []string{"--distro", "k3s", "--kube-version", "v1.40.1"}, "pass --ccm-version with a v1.40.x tag"},
		{"CCM of another minor", []string{"--distro", "rke", "--ccm-version", "v1.27.1"}, "the CCM must match the cluster's minor"},
		{"CCM tag not a version", []string{"--distro", "rke", "--ccm-version", "latest"}, `--ccm-version "latest"`},
		{"bad release", []string{"--distro", "rke", "--release", "My_CCM"}, `--release "My_CCM"`},
		{"release too long", []string{"--distro", "rke", "--release", strings.Repeat("a", 54)}, "at most 53 characters"},
		{"bad namespace", []string{"--distro", "rke", "-n", "kube.system"}, `--namespace "kube.system"`},
		{"bad lease", []string{"--distro", "rke", "--leader-name", "Lease!"}, `--leader-name "Lease!"`},
		{"empty user", []string{"--distro", "rke", "--kcm-user", ""}, "--kcm-user"},
		{"bad chart version", []string{"--distro", "rke", "--chart-version", "latest"}, `--chart-version "latest"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := run(t, "", append([]string{"plan"}, c.args...)...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d", code, ExitUsage)
			}
			if out != "" {
				t.Errorf("stdout is not empty: %q", out)
			}
			if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "aws-ccm-renderer: ") {
				t.Errorf("stderr is not one line: %q", errOut)
			}
			if !strings.Contains(errOut, c.want) {
				t.Errorf("stderr %q does not say %q", errOut, c.want)
			}
		})
	}
}

func TestPlanWriteError(t *testing.T) {
	var errOut bytes.Buffer
	code := Main([]string{"plan", "--distro", "rke2"}, IOStreams{In: strings.NewReader(""), Out: failingWriter{}, ErrOut: &errOut})
	if code != ExitOther || !strings.Contains(errOut.String(), "writing the plan") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}

func TestPlanHelpAndCompletion(t *testing.T) {
	code, out, _ := run(t, "", "plan", "--help")
	for _, want := range []string{"aws-ccm-renderer plan --distro rke2", "--phase", "-o json", "--kcm-user", "docs/plan.schema.json"} {
		if code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("plan --help (exit %d) lacks %q", code, want)
		}
	}
	for flag, want := range map[string][]string{
		"--distro": {"rke", "rke2", "k3s", "kubeadm"},
		"--phase":  {"before", "during", "after"},
		"--step":   {"before.preflight", "before.hostname-label"},
		"--output": {"text", "json", "markdown"},
	} {
		args := []string{"__complete", "plan", flag, ""}
		if flag == "--step" {
			args = []string{"__complete", "plan", "--distro", "k3s", flag, ""}
		}
		code, out, _ := run(t, "", args...)
		got := strings.Fields(out)
		if flag == "--step" && len(got) > len(want)+1 {
			got = append(got[:len(want)], got[len(got)-1])
		}
		if code != ExitOK || len(got) != len(want)+1 || strings.Join(got[:len(want)], " ") != strings.Join(want, " ") {
			t.Errorf("completion of %s: %q", flag, out)
		}
	}
	code, out, _ = run(t, "", "__complete", "plan", "--distro", "")
	if code != ExitOK || strings.Contains(out, "auto") {
		t.Errorf("completion offers auto, which has no plan: %q", out)
	}
}
