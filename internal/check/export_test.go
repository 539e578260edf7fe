package check

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// The fixtures of the external tests (package check_test), which write
// reports with package output.

// sample is a report with something in every area: manifests for RKE1 on
// an RKE2 cluster.
func SampleReport(t *testing.T) *Report {
	t.Helper()
	s := snapshotOf(t, []corev1.Node{rke2Server("cp-1"), rke2Agent("w-1", providerID(""))}, render(t, distros.RKE, renderer.ModeMigrate), false)
	s.Access = []Permission{{Subject: "ServiceAccount kube-system/cloud-controller-manager", Verb: "get", Resource: "nodes"}}
	s.Context, s.Server = "prod", "https://example.com"
	return Evaluate(s)
}

// TodayReport is a report with today's findings: options, other cloud
// controllers, providerIDs with their source, the plan.
func TodayReport(t *testing.T) *Report {
	today := snapshotOf(t, []corev1.Node{rke2Server("s-1", providerID("rke2://s-1"))}, render(t, distros.RKE2, renderer.ModeInstall), true)
	today.ControlPlanePods = []corev1.Pod{rke2CCMPod("s-1"), staticPod(programAPIServer, "s-1", "registry.k8s.io/kube-apiserver:v1.33.0", true, "--cloud-provider=external")}
	return Evaluate(today)
}

// RKE2Report is the report of manifests for RKE2, not installed, without
// nodes.
func RKE2Report(t *testing.T) *Report {
	return Evaluate(snapshotOf(t, nil, render(t, distros.RKE2, renderer.ModeInstall), false))
}
