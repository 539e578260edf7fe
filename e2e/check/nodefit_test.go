package check

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/nodefit"
)

// TestNodefitOnThisModule: this module builds internal/nodefit against the
// control plane's k8s.io/api (v0.37.2, this module's replace lines, not the
// root module's v0.37.0); the same rules hold.
func TestNodefitOnThisModule(t *testing.T) {
	taints := []corev1.Taint{
		{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule},
		{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule},
	}
	if _, found := nodefit.UntoleratedTaint(taints, []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists}}); found {
		t.Error("Exists does not tolerate the role taint")
	}
	if got, found := nodefit.UntoleratedTaint(taints, []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Value: "true"}}); !found || got.Key != "node-role.kubernetes.io/control-plane" {
		t.Error("Equal true tolerates an empty-valued taint")
	}
	if _, found := nodefit.UntoleratedTaint([]corev1.Taint{{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}}, nodefit.DaemonTolerations(false)); found {
		t.Error("a daemon pod does not tolerate unschedulable")
	}
}
