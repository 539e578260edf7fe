// Command cloud-controller-manager-fake is a cloud-controller-manager put
// together the way an external cloud provider's is (the AWS CCM included):
// k8s.io/cloud-provider's app.NewCloudControllerManagerCommand with
// app.DefaultInitFuncConstructors, from the same release as the test control
// plane. Its cloud is the library's fake (k8s.io/cloud-provider/fake),
// registered as "fake-aws", so it runs with --cloud-provider=fake-aws and
// takes every flag and the leader migration configuration a real CCM takes,
// without a cloud behind it.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/app"
	"k8s.io/cloud-provider/app/config"
	"k8s.io/cloud-provider/fake"
	"k8s.io/cloud-provider/names"
	"k8s.io/cloud-provider/options"
	"k8s.io/component-base/cli"
	cliflag "k8s.io/component-base/cli/flag"
	_ "k8s.io/component-base/logs/json/register"          // --logging-format=json, as in a release build
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // the version metric
)

// ProviderName is the name the fake cloud is registered under.
const ProviderName = "fake-aws"

// address is the one every fake instance has: TEST-NET-1, never routed.
var address = net.IPv4(192, 0, 2, 1)

// newCloud is the fake cloud, answering through InstancesV2 as the AWS CCM
// does. Every instance exists and none is shut down, so the node lifecycle
// controller never deletes or taints the tests' nodes, which have no kubelet
// and so are never Ready; a node without a provider ID gets
// fake-aws://NODE-NAME, and every node the one address. The cloud
// configuration file, if any, is not read.
func newCloud(io.Reader) (cloudprovider.Interface, error) {
	addresses := []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: address.String()}}
	return &fake.Cloud{
		Provider:           ProviderName,
		EnableInstancesV2:  true,
		Exists:             true,
		ExistsByProviderID: true,
		ExternalIP:         address,
		Addresses:          addresses,
		OverrideInstanceMetadata: func(_ context.Context, node *v1.Node) (*cloudprovider.InstanceMetadata, error) {
			id := node.Spec.ProviderID
			if id == "" {
				id = ProviderName + "://" + node.Name
			}
			return &cloudprovider.InstanceMetadata{ProviderID: id, NodeAddresses: addresses}, nil
		},
	}, nil
}

func main() {
	cloudprovider.RegisterCloudProvider(ProviderName, newCloud)

	opts, err := options.NewCloudControllerManagerOptions()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cloud-controller-manager-fake:", err)
		os.Exit(1)
	}
	cmd := app.NewCloudControllerManagerCommand(opts, initCloud, app.DefaultInitFuncConstructors,
		names.CCMControllerAliases(), cliflag.NamedFlagSets{}, wait.NeverStop)
	os.Exit(cli.Run(cmd))
}

// initCloud returns the cloud named by --cloud-provider, which must be
// ProviderName.
func initCloud(c *config.CompletedConfig) cloudprovider.Interface {
	cp := c.ComponentConfig.KubeCloudShared.CloudProvider
	cloud, err := cloudprovider.InitCloudProvider(cp.Name, cp.CloudConfigFile)
	if err == nil && cloud == nil {
		err = fmt.Errorf("no such cloud provider")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "cloud-controller-manager-fake: --cloud-provider=%q: %v (this build has only %q)\n", cp.Name, err, ProviderName)
		os.Exit(1)
	}
	return cloud
}
