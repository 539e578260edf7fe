//go:build syntheticdistro

package distros

// synthetic is a distribution no consumer knows by name, built in with the
// tag syntheticdistro only: TestSyntheticDistro (internal/generated) shows
// that every list, enum, help text, schema, generated file and chart
// validation derived from the records takes it in.
var synthetic = []Record{{
	Distro:           "synthd",
	Name:             "SynthD",
	Aliases:          []string{"synth"},
	RancherProvider:  "synthd",
	NodeSelector:     map[string]string{LabelControlPlane: "true"},
	Tolerations:      []Toleration{tolUninitialized, exists(LabelControlPlane, "NoSchedule"), tolEtcd, tolCritical},
	NoInTreeProvider: true,
	Signs:            []Sign{{SignKubeletVersion, "+synthd", SignBuild}, {SignAnnotationPrefix, "synthd.example/", SignOwn}},
	Controller: &OwnController{Scheme: "synthd", Lease: "synthd-cloud-controller-manager",
		Disable: "synthd: disable its cloud controller", Source: "synthetic"},
	Node: NodeFacts{
		NodeArgs:         "synthd.example/node-args",
		Configuration:    "SynthD's synthd.conf",
		NameFix:          "SynthD: name {what} {name}",
		KeepNameFix:      "SynthD: keep {what}'s name{nodes}",
		ExternalKubelets: "SynthD: kubelets on --cloud-provider=external",
	},
}}
