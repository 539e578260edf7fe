package upstream_test

import (
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
)

// chartFile reads one file of a chart package.
func chartFile(t *testing.T, pkg, name string) []byte {
	t.Helper()
	b, ok := testtools.ChartPackage(t, pkg)[upstream.ChartName+"/"+name]
	if !ok {
		t.Fatalf("%s has no %s", pkg, name)
	}
	return b
}

// TestChartFacts holds the chart facts to the chart packages themselves:
// each tested version's name and default image, and the newest is
// LatestChartVersion.
func TestChartFacts(t *testing.T) {
	if last := testtools.ChartVersions[len(testtools.ChartVersions)-1]; last != upstream.LatestChartVersion {
		t.Errorf("the newest tested chart is %s, LatestChartVersion %s", last, upstream.LatestChartVersion)
	}
	for _, v := range testtools.ChartVersions {
		pkg := testtools.UpstreamChart(t, v)
		var meta struct{ Name, Version string }
		if err := yaml.Unmarshal(chartFile(t, pkg, "Chart.yaml"), &meta); err != nil {
			t.Fatal(err)
		}
		if meta.Name != upstream.ChartName || meta.Version != v {
			t.Errorf("%s: Chart.yaml says %s %s", pkg, meta.Name, meta.Version)
		}
		var values struct {
			Image struct{ Repository, Tag string }
		}
		if err := yaml.Unmarshal(chartFile(t, pkg, "values.yaml"), &values); err != nil {
			t.Fatal(err)
		}
		if tag, ok := releases.DefaultImageTag(v); !ok || tag != values.Image.Tag {
			t.Errorf("chart %s: DefaultImageTag %q %v, its values.yaml %q", v, tag, ok, values.Image.Tag)
		}
		if v == upstream.LatestChartVersion && upstream.Image != values.Image.Repository+":"+values.Image.Tag {
			t.Errorf("chart %s: Image %s, its values.yaml %s:%s", v, upstream.Image, values.Image.Repository, values.Image.Tag)
		}
	}
	if tag, ok := releases.DefaultImageTag("v" + upstream.LatestChartVersion); !ok || upstream.Image != releases.ImageRepository+":"+tag {
		t.Errorf("a v-prefixed version: %q %v", tag, ok)
	}
	if _, ok := releases.DefaultImageTag("9.9.9"); ok {
		t.Error("an unknown version has a default image")
	}
}
