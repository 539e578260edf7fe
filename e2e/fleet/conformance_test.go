package fleet

import (
	"errors"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/conformance"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/conformance/conformancetest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/generated"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// TestFleetConformance runs the conformance table through the example
// Fleet bundle: a Fleet Cluster per case, labelled as Rancher labels its
// distribution (provider.cattle.io) and as docs/fleet.md labels its minor;
// `fleet apply`, `fleet target` (the controller's targeting) and `fleet
// deploy --dry-run` (the agent's Helm deployer) give what the cluster gets.
// The guard's --ccm-version=auto is what the guard resolves when the CCM
// starts: the cluster's tag.
func TestFleetConformance(t *testing.T) {
	const ns = "fleet-conformance"
	labels := map[string]map[string]string{}
	cluster := map[string]string{} // case name -> its cluster's name
	for i, c := range conformance.Cases() {
		name := fmt.Sprintf("case-%d", i)
		l := map[string]string{}
		if p, ok := distros.RecordOf(c.Distro); ok && p.RancherProvider != "" {
			l[providerLabel] = p.RancherProvider
		}
		if c.KubeVersion != "" {
			v := version.MustParseGeneric(c.KubeVersion)
			l[generated.FleetMinorLabel] = fmt.Sprintf("%d.%d", v.Major(), v.Minor())
		}
		labels[name], cluster[c.Name] = l, name
	}
	registerClusters(t, ns, labels)
	deployments := targetIn(t, applyIn(t, bundleCopy(t), ns), ns)
	conformancetest.Run(t, conformance.Fleet, func(t *testing.T, c conformance.Case) conformancetest.Result {
		d, ok := deployments[cluster[c.Name]]
		if !ok {
			return conformancetest.Result{Err: errors.New("fleet target gives the cluster no BundleDeployment")}
		}
		var r conformancetest.Result
		r.Stdout, r.Stderr, r.Err = deploy(t, d, true)
		if r.Err == nil {
			r.Objects = guardResolved(t, deployedObjects(t, r.Stdout))
		}
		return r
	})
}
