// Command fake-ccm is a cloud-controller-manager built the way the AWS CCM
// is built — app.NewCloudControllerManagerCommand with
// app.DefaultInitFuncConstructors, from the k8s.io/cloud-provider version of
// the test control plane — but with the library's fake cloud registered as
// "fake-aws". The leader migration tests run it with the flags and the
// configuration file the renderer writes, and watch what its controllers do
// through the API.
package main

import (
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/util/wait"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/app"
	"k8s.io/cloud-provider/app/config"
	"k8s.io/cloud-provider/fake"
	"k8s.io/cloud-provider/names"
	"k8s.io/cloud-provider/options"
	"k8s.io/component-base/cli"
	cliflag "k8s.io/component-base/cli/flag"
)

// ProviderName is the name the fake cloud registers under.
const ProviderName = "fake-aws"

func main() {
	cloudprovider.RegisterCloudProvider(ProviderName, func(io.Reader) (cloudprovider.Interface, error) {
		return &fake.Cloud{ExternalIP: []byte{192, 0, 2, 1}}, nil
	})
	opts, err := options.NewCloudControllerManagerOptions()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake-ccm:", err)
		os.Exit(1)
	}
	cmd := app.NewCloudControllerManagerCommand(opts, initCloud, app.DefaultInitFuncConstructors,
		names.CCMControllerAliases(), cliflag.NamedFlagSets{}, wait.NeverStop)
	os.Exit(cli.Run(cmd))
}

func initCloud(c *config.CompletedConfig) cloudprovider.Interface {
	cp := c.ComponentConfig.KubeCloudShared.CloudProvider
	cloud, err := cloudprovider.InitCloudProvider(cp.Name, cp.CloudConfigFile)
	if err != nil || cloud == nil {
		fmt.Fprintf(os.Stderr, "fake-ccm: cloud provider %q: %v (only %q is registered)\n", cp.Name, err, ProviderName)
		os.Exit(1)
	}
	return cloud
}
