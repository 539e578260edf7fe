package wrapperchart

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/conformance"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/conformance/conformancetest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// TestConformance runs the conformance table through the wrapper chart,
// installed as helm install does (Helm 3's own install, client-only) with
// the preset of the case's distribution and mode, for a cluster of the
// case's version: a chart sees it as .Capabilities.KubeVersion. What the
// user reads besides the manifests are the chart's notes.
func TestConformance(t *testing.T) {
	dir := testtools.WrapperChart(t)
	conformancetest.Run(t, conformance.WrapperChart, func(t *testing.T, c conformance.Case) conformancetest.Result {
		sets := []string{"distro=" + string(c.Distro), "mode=" + string(c.Mode)}
		if c.CCMTag != "" {
			sets = append(sets, "aws-cloud-controller-manager.image.tag="+c.CCMTag)
		}
		var files []string
		for _, preset := range []string{string(c.Distro) + "-" + string(c.Mode), string(c.Distro) + "-install"} {
			if p := filepath.Join(dir, "presets", preset+".yaml"); fileExists(p) {
				files = []string{p}
				break
			}
		}
		manifests, notes, err := install(t, dir, c.KubeVersion, files, sets)
		r := conformancetest.Result{Stdout: []byte(manifests), Err: err, Shown: notes}
		if err != nil {
			r.Stderr = []byte(err.Error())
		}
		return r
	})
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
