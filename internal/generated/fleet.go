package generated

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
)

// FleetMinorLabel is the label of a Fleet cluster that names its Kubernetes
// minor ("1.34"): the Fleet example's bundle pins the CCM of that minor on
// it, and deploys nothing on a cluster without it (FleetServedMinors).
const FleetMinorLabel = "aws-ccm-renderer.io/kubernetes-minor"

// FleetBundle is the Fleet example's bundle, whose image.tag line is
// generated.
const FleetBundle = "examples/fleet/fleet.yaml"

// FleetTagTemplate is the value of the bundle's helm.values.image.tag: a
// template Fleet's controller renders for each cluster (with ${ } as its
// delimiters, sprig's functions and the cluster's labels), giving the
// newest release of the minor the cluster's FleetMinorLabel names, from the
// release data, each pinned by the promotion list's digest where it gives
// one (releases.Pin: the bundle's comment says what to do with a tag it
// does not give). It has no default: the bundle deploys nothing on a
// cluster whose label names no minor it serves (FleetServedMinors).
func FleetTagTemplate() string {
	var b strings.Builder
	b.WriteString("${ get (dict")
	for minor := releases.FirstMinor(); minor <= releases.LastMinor(); minor++ {
		if tag, ok := releases.Latest(minor); ok {
			fmt.Fprintf(&b, " %q %q", fmt.Sprintf("1.%d", minor), releases.Pin(tag))
		}
	}
	fmt.Fprintf(&b, ") (get .ClusterLabels %q) }", FleetMinorLabel)
	return b.String()
}

// fleetTagLine is the bundle's generated line, its indentation kept.
var fleetTagLine = regexp.MustCompile(`(?m)^(\s+tag: )'\$\{ get \(dict.*\}'$`)

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

// FleetServedMinors is the value list of the bundle's minor-not-served
// customization, which deploys nothing on a cluster whose minor label names
// none of them (no label, a minor with the in-tree provider, one newer
// than the release data): every minor after the last with the in-tree
// provider that the release data has a CCM release for.
func FleetServedMinors() string {
	var minors []string
	for minor := releases.LastInTreeMinor + 1; minor <= releases.LastMinor(); minor++ {
		if _, ok := releases.Latest(minor); ok {
			minors = append(minors, fmt.Sprintf("%q", fmt.Sprintf("1.%d", minor)))
		}
	}
	return "[" + strings.Join(minors, ", ") + "]"
}

// fleetServedLine is the values line of the minor-not-served customization.
var fleetServedLine = regexp.MustCompile(`(?s)- name: minor-not-served\n.*?\n(\s+values: )(\[[^\]\n]*\])\n`)

// fleetInTreeLine is the values line of the in-tree-provider customization.
var fleetInTreeLine = regexp.MustCompile(`(?s)- name: in-tree-provider\n.*?\n(\s+values: )(\[[^\]\n]*\])\n`)

// FleetPins checks the bundle's generated lines (the image.tag line:
// FleetTagTemplate; the minors of the in-tree-provider and
// minor-not-served customizations: FleetInTreeMinors, FleetServedMinors),
// or with write rewrites them; it returns the problems.
func FleetPins(root string, write bool) ([]string, error) {
	path := filepath.Join(root, FleetBundle)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out, problems, err := rewriteLines(FleetBundle, b, []generatedLine{
		{"the image.tag line", fleetTagLine, "'" + FleetTagTemplate() + "'", "no generated image.tag line (tag: '${ get (dict ...) ... }')"},
		{"the in-tree-provider customization's minors", fleetInTreeLine, FleetInTreeMinors(), "no in-tree-provider customization with a values line"},
		{"the minor-not-served customization's minors", fleetServedLine, FleetServedMinors(), "no minor-not-served customization with a values line"},
	}, "the release data's")
	if err != nil {
		return nil, err
	}
	if write && len(problems) > 0 {
		return nil, os.WriteFile(path, out, 0o644)
	}
	return problems, nil
}
