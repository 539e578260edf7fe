package plan

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
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
	case v.AtLeast(version.MustParseGeneric("v1.30.0")):
		return fmt.Sprintf("the %s CCM initialises no node without %s (it labels each node with its zone ID) and ensures no load balancer; it asks for %s too", tag, upstream.ActionDescribeAZs, upstream.ActionInstanceTopology)
	case v.AtLeast(version.MustParseGeneric("v1.26.1")):
		return fmt.Sprintf("the %s CCM ensures no load balancer without %s (it looks up the zones of the ELB's subnets)", tag, upstream.ActionDescribeAZs)
	}
	return fmt.Sprintf("the %s CCM needs exactly the actions below", tag)
}

// RKE1: cloud_provider external-aws exists from rke v1.4.15 and v1.5.0
// (rancher/rke cluster/plan.go, getCloudProviderName, at those tags; not
// at v1.4.14). The Kubernetes minors each rke line runs, from the "RKE
// Kubernetes versions" of rancher/rke's release notes (v1.5.12: 1.25–1.28;
// v1.6.9: 1.27–1.30; v1.7.3: 1.28–1.31; v1.8.14: 1.30–1.32, "the final
// release in the RKE 1.x series").
var rkeLineFor = map[int]string{26: "v1.4.15 or v1.5", 27: "v1.5", 28: "v1.5", 29: "v1.6", 30: "v1.6", 31: "v1.7", 32: "v1.8"}

const rkeLastMinor = 32

// RKE2: from these releases cloud-provider-name: aws passes no
// --cloud-provider at all and only names the node from instance metadata,
// as node-name-from-cloud-provider-metadata does (rancher/rke2
// pkg/rke2/rke2_linux.go and pkg/cli/cmds/root.go at the tags; not at
// v1.29.10, v1.30.6, v1.31.2).
var rke2MetadataNameFrom = []string{"v1.29.11+rke2r1", "v1.30.7+rke2r1", "v1.31.3+rke2r1", "v1.32.0+rke2r1"}

// apiServerNoCloudProvider: kube-apiserver has no --cloud-provider or
// --cloud-config from 1.33 (pkg/kubeapiserver/options/cloudprovider.go is
// at v1.32.0, gone at v1.33.0; kubernetes/kubernetes#130162) and exits on
// an unknown flag.
const apiServerNoCloudProvider = 33

// CSIMigrationAWS (pkg/features/kube_features.go): beta and off in 1.22,
// beta and on in 1.23 and 1.24, GA and locked on from 1.25.
func csiMigrationDefaultOn(minor int) bool { return minor >= 23 }
func csiMigrationLocked(minor int) bool    { return minor >= 25 }

// rancherPlanner: Rancher writes a machine's RKE2 or K3s configuration from
// machineGlobalConfig, then from every machineSelectorConfig entry that
// selects the machine (no selector: every machine), in order, key by key:
// config[k] = v, so an entry's list replaces the earlier one whole, never
// merged. Read at every release tag from v2.6.0 to v2.15.0.
const rancherPlanner = "rancher/rancher pkg/capr/planner/config.go addUserConfig, v2.7.5 to v2.15.0; pkg/provisioningv2/rke2/planner from v2.6.0 to v2.7.4"
