package helm3

import (
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/conformance"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/conformance/conformancetest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// TestConformance runs the conformance table through the Helm 3
// post-renderer: helm template --post-renderer aws-ccm-renderer.
func TestConformance(t *testing.T) {
	conformancetest.Run(t, conformance.PostRenderer, func(t *testing.T, c conformance.Case) conformancetest.Result {
		args := []string{"template", "ccm", testtools.UpstreamChart(t, c.ChartVersion), "--namespace", "kube-system", "--post-renderer", testtools.Renderer(t)}
		for _, a := range conformance.RendererArgs(c) {
			args = append(args, "--post-renderer-args="+a)
		}
		return conformancetest.Command(t, testtools.HelmEnv(t), testtools.Helm3(t), append(args, conformance.ChartValues(c)...)...)
	})
}
