package generated

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
)

// FleetMinorLabel is the label of a Fleet cluster that names its Kubernetes
// minor ("1.34"): the Fleet example's bundle pins the CCM of that minor on
// it, and the chart's default image on a cluster without it.
const FleetMinorLabel = "aws-ccm-renderer.io/kubernetes-minor"

// FleetBundle is the Fleet example's bundle, whose image.tag line is
// generated.
const FleetBundle = "examples/fleet/fleet.yaml"

// FleetTagTemplate is the value of the bundle's helm.values.image.tag: a
// template Fleet's controller renders for each cluster (with ${ } as its
// delimiters, sprig's functions and the cluster's labels), giving the
// newest release of the minor the cluster's FleetMinorLabel names, from the
// release data, else the default image tag of the chart version the
// bundle installs; each pinned by the promotion list's digest, where it
// gives one (releases.Pin: the bundle's comment says what to do with a tag
// it does not give).
func FleetTagTemplate(chartVersion string) (string, error) {
	def, ok := upstream.DefaultImageTag(chartVersion)
	if !ok {
		return "", fmt.Errorf("no default image tag is known for chart %s", chartVersion)
	}
	var b strings.Builder
	b.WriteString("${ get (dict")
	for minor := releases.FirstMinor(); minor <= releases.LastMinor(); minor++ {
		if tag, ok := releases.Latest(minor); ok {
			fmt.Fprintf(&b, " %q %q", fmt.Sprintf("1.%d", minor), releases.Pin(tag))
		}
	}
	fmt.Fprintf(&b, ") (get .ClusterLabels %q) | default %q }", FleetMinorLabel, releases.Pin(def))
	return b.String(), nil
}

// fleetTagLine is the bundle's generated line, its indentation kept.
var fleetTagLine = regexp.MustCompile(`(?m)^(\s+tag: )'\$\{ get \(dict.*\}'$`)

// fleetChartVersion is the bundle's helm.version.
var fleetChartVersion = regexp.MustCompile(`(?m)^  version: (\S+)$`)

// FleetInTreeMinors is the value list of the bundle's in-tree-provider
// customization, which deploys nothing on the clusters its minor label
// says still run the in-tree AWS provider: every minor of the release data
// up to the last with the provider.
func FleetInTreeMinors() string {
	var minors []string
	for minor := releases.FirstMinor(); minor <= releases.LastInTreeMinor; minor++ {
		minors = append(minors, fmt.Sprintf("%q", fmt.Sprintf("1.%d", minor)))
	}
	return "[" + strings.Join(minors, ", ") + "]"
}

// fleetInTreeLine is the values line of the in-tree-provider customization.
var fleetInTreeLine = regexp.MustCompile(`(?s)- name: in-tree-provider\n.*?\n(\s+values: )(\[[^\]\n]*\])\n`)

// FleetPins checks the bundle's generated lines (the image.tag line:
// FleetTagTemplate of the bundle's chart version; the in-tree-provider
// customization's minors: FleetInTreeMinors), or with write rewrites
// them; it returns the problems.
func FleetPins(root string, write bool) ([]string, error) {
	path := filepath.Join(root, FleetBundle)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	v := fleetChartVersion.FindSubmatch(b)
	if v == nil {
		return nil, fmt.Errorf("%s: no helm.version", FleetBundle)
	}
	tmpl, err := FleetTagTemplate(string(v[1]))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", FleetBundle, err)
	}
	out, problems, err := rewriteLines(FleetBundle, b, []generatedLine{
		{"the image.tag line", fleetTagLine, "'" + tmpl + "'", "no generated image.tag line (tag: '${ get (dict ...) ... }')"},
		{"the in-tree-provider customization's minors", fleetInTreeLine, FleetInTreeMinors(), "no in-tree-provider customization with a values line"},
	}, "the release data's")
	if err != nil {
		return nil, err
	}
	if write && len(problems) > 0 {
		return nil, os.WriteFile(path, out, 0o644)
	}
	return problems, nil
}
