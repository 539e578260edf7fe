package overlays

import (
	"path/filepath"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/conformance"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/conformance/conformancetest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// TestConformance runs the conformance table through the kustomize
// overlays: aws-ccm-renderer overlays with the case's options writes the
// component, and the real kustomize CLI applies it to the chart's output.
// The overlays see the cluster's version when they are generated, not when
// kustomize builds.
func TestConformance(t *testing.T) {
	conformancetest.Run(t, conformance.Overlays, func(t *testing.T, c conformance.Case) conformancetest.Result {
		gen := filepath.Join(t.TempDir(), "overlays")
		args := append([]string{"overlays", "--out", gen}, conformance.RendererArgs(c)...)
		r := conformancetest.Command(t, testtools.HelmEnv(t), testtools.Renderer(t), args...)
		if r.Err != nil {
			return r
		}
		generated := r.Shown
		r = conformancetest.Command(t, testtools.HelmEnv(t), testtools.Kustomize(t), "build", overlayDirFrom(t, gen, conformancetest.ChartOutput(t, c), c.Distro, c.Mode))
		r.Shown = generated + r.Shown
		return r
	})
}
