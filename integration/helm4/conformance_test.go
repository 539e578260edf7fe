package helm4

import (
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/conformance"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/conformance/conformancetest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// TestConformance runs the conformance table through the Helm 4 plugin:
// helm template --post-renderer aws-ccm, with the plugin installed as the
// docs say.
func TestConformance(t *testing.T) {
	conformancetest.Run(t, conformance.Helm4Plugin, func(t *testing.T, c conformance.Case) conformancetest.Result {
		helm, env := helm4WithPlugin(t) // each case its own Helm homes
		args := []string{"template", "ccm", testtools.UpstreamChart(t, c.ChartVersion), "--namespace", "kube-system", "--post-renderer", "aws-ccm"}
		for _, a := range conformance.RendererArgs(c) {
			args = append(args, "--post-renderer-args="+a)
		}
		return conformancetest.Command(t, env, helm, append(args, conformance.ChartValues(c)...)...)
	})
}
