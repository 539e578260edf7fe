package plan

import (
	"encoding/json"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
)

// Facts about other components that the steps rest on, each with where it
// was read. They change with versions, so they are data here and tested.

// policyJSON writes an IAM policy that allows actions on every resource,
// several actions to a line.
func policyJSON(actions []string) string {
	quoted := make([]string, len(actions))
	for i, a := range actions {
		b, _ := json.Marshal(a)
		quoted[i] = string(b) + ","
	}
	quoted[len(quoted)-1] = strings.TrimSuffix(quoted[len(quoted)-1], ",")
	var lines strings.Builder
	line := "      "
	for i, q := range quoted {
		if i > 0 && len(line)+1+len(q) > 100 {
			lines.WriteString(strings.TrimRight(line, " ") + "\n")
			line = "      "
		} else if i > 0 {
			line += " "
		}
		line += q
	}
	lines.WriteString(line + "\n")
	return "{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": [{\n    \"Effect\": \"Allow\",\n    \"Resource\": \"*\",\n    \"Action\": [\n" +
		lines.String() + "    ]\n  }]\n}\n"
}

// iamMissingBy says what a role without the newer actions loses, per tag.
func iamMissingBy(tag string) string {
	v := version.MustParseGeneric(tag)
	switch {
	case releases.LabelsZoneID(tag):
		return "the " + tag + " CCM initialises no node without " + releases.ActionDescribeAZs +
			" (it labels each node with its zone ID) and ensures no load balancer; it asks for " +
			releases.ActionInstanceTopology + " too"
	case v.AtLeast(version.MustParseGeneric(releases.IAMAdded[0].Since[0])):
		return "the " + tag + " CCM ensures no load balancer without " + releases.ActionDescribeAZs +
			" (it looks up the zones of the ELB's subnets)"
	}
	return "the " + tag + " CCM needs exactly the actions below"
}

// The facts of internal/releases the steps name.
var (
	rke2NoOpAWS          = mustChange("rke2", "cloud-provider-name: aws")
	rke2NodeName         = mustChange("rke2", "node-name")
	apiServerCP          = mustChange("kube-apiserver", "--cloud-provider")
	rke2MetadataNameFrom = rke2NoOpAWS.Releases
)

// apiServerNoCloudProvider is the first kube-apiserver minor without
// --cloud-provider.
var apiServerNoCloudProvider = apiServerCP.Minor

func mustChange(component, option string) releases.OptionChange {
	c, ok := releases.Change(component, option)
	if !ok {
		panic("internal/releases has no change of " + component + " " + option)
	}
	return c
}

// CSIMigrationAWS (pkg/features/kube_features.go): beta and off in 1.22,
// beta and on in 1.23 and 1.24, GA and locked on from 1.25.
func csiMigrationDefaultOn(minor int) bool { return minor >= releases.CSIMigrationDefaultOnMinor }
func csiMigrationLocked(minor int) bool    { return minor >= releases.CSIMigrationLockedMinor }

// rancherPlanner: Rancher writes a machine's RKE2 or K3s configuration from
// machineGlobalConfig, then from every machineSelectorConfig entry that
// selects the machine (no selector: every machine), in order, key by key:
// config[k] = v, so an entry's list replaces the earlier one whole, never
// merged. Read at every release tag from v2.6.0 to v2.15.0.
const rancherPlanner = "rancher/rancher pkg/capr/planner/config.go addUserConfig, v2.7.5 to v2.15.0; pkg/provisioningv2/rke2/planner from v2.6.0 to v2.7.4"
