package krm

import (
	"strconv"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/conformance"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/conformance/conformancetest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// TestConformance runs the conformance table through the KRM function
// under the real kustomize CLI, configured by a ConfigMap whose keys are
// the option table's.
func TestConformance(t *testing.T) {
	conformancetest.Run(t, conformance.KRMFunction, func(t *testing.T, c conformance.Case) conformancetest.Result {
		var data strings.Builder
		o := c.Options()
		for _, key := range []renderer.Opt{renderer.OptDistro, renderer.OptMode, renderer.OptKubeVersion, renderer.OptStrict} {
			op, _ := renderer.OptionOf(key)
			for _, v := range op.Text(o) {
				data.WriteString("  " + string(key) + ": " + strconv.Quote(v) + "\n")
			}
		}
		var r conformancetest.Result
		r.Stdout, r.Stderr, r.Err = kustomizeBuild(t, kustomizeDir(t, conformancetest.ChartOutput(t, c), configMapFC(data.String())))
		return r
	})
}
