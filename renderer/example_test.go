package renderer_test

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

const ccm = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: ccm
  namespace: kube-system
spec:
  template:
    spec:
      containers:
      - name: ccm
        image: registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0
`

// A render of a stream: the CCM's workload patched for RKE2, what the
// renderer warns about beside it.
func ExampleRenderer_Render() {
	o := renderer.DefaultOptions()
	o.Distro = distros.RKE2
	r, err := renderer.New(o)
	if err != nil {
		panic(err)
	}
	out, err := r.Render([]byte(ccm))
	if err != nil {
		panic(err)
	}
	for _, l := range strings.Split(string(out.Bytes()), "\n") {
		if strings.Contains(l, "control-plane: ") || strings.Contains(l, "--cloud-provider") || strings.Contains(l, "hostNetwork") {
			fmt.Println(strings.TrimSpace(l))
		}
	}
	fmt.Println(len(out.Warnings), "warning")
	// Output:
	// - --cloud-provider=aws
	// node-role.kubernetes.io/control-plane: "true"
	// hostNetwork: true
	// 1 warning
}

// The renderer as Helm's post-renderer, in-process (action.Install's
// PostRenderer).
func ExamplePostRenderer() {
	pr, err := renderer.NewPostRenderer(renderer.DefaultOptions())
	if err != nil {
		panic(err)
	}
	var warnings []string
	pr.Warn = func(w string) { warnings = append(warnings, w) }
	out, err := pr.Run(bytes.NewBufferString(ccm))
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.Contains(out.String(), "operator: Exists"), len(warnings))
	// Output:
	// true 1
}

// Errors name options as each front end spells them: the command line's
// flags, or the config file's and KRM function's keys.
func ExampleMessage() {
	o := renderer.DefaultOptions()
	o.SetArgs = []string{"v"}
	_, err := renderer.New(o)
	fmt.Println(renderer.IsUsageError(err))
	fmt.Println(err)
	fmt.Println(renderer.Message(err, renderer.KeySpelling))
	// Output:
	// true
	// --set-arg "v": want FLAG=VALUE, e.g. --set-arg=v=4
	// setArgs "v": want FLAG=VALUE, e.g. setArgs: v=4
}

// The CCM's command line read as the renderer reads it.
func ExampleParseCommandLine() {
	cl := renderer.ParseCommandLine([]string{"/bin/aws-cloud-controller-manager", "--v", "2"}, []string{"--enable-leader-migration", "--v=4"})
	v, _ := cl.Value("v")
	lm, _ := cl.Value("enable-leader-migration")
	fmt.Println(v, lm)
	// Output:
	// 4 true
}

// The options, as the command line, the config file and the KRM function
// name them.
func ExampleOptionTable() {
	for _, op := range renderer.OptionTable[:3] {
		fmt.Printf("--%s %s\n", op.Flag, op.Opt)
	}
	o := renderer.DefaultOptions()
	o.Distro = distros.K3s
	fmt.Println(renderer.FlagArgs(o, renderer.OptDistro, renderer.OptMode, renderer.OptHostNetwork))
	// Output:
	// --distro distro
	// --mode mode
	// --host-network hostNetwork
	// [--distro=k3s --mode=install]
}
