package wrapper

import (
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/conformance"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/conformance/conformancetest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// TestConformance runs the conformance table through the chart wrapper:
// aws-ccm-renderer template, which loads the chart with the Helm SDK and
// runs the renderer in-process; --kube-version is the cluster's version
// for the chart and the renderer both.
func TestConformance(t *testing.T) {
	conformancetest.Run(t, conformance.ChartWrapper, func(t *testing.T, c conformance.Case) conformancetest.Result {
		args := append([]string{"template", "ccm", testtools.UpstreamChart(t, c.ChartVersion), "--namespace", "kube-system"}, conformance.RendererArgs(c)...)
		return conformancetest.Command(t, testtools.HelmEnv(t), testtools.Renderer(t), append(args, conformance.ChartValues(c)...)...)
	})
}
