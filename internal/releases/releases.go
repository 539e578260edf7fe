// Package releases is the one home of the facts that change with a release
// of another component: the AWS cloud controller manager's releases (which
// tag to pin for a Kubernetes minor, the IAM actions each needs, its AWS
// SDK, its known defects) and the flags Kubernetes and the distributions
// removed, made fatal or turned into no-ops. The renderer, check, plan and
// the generated docs read them here; each fact names the public source it
// was read in (repository, path, tag).
package releases

// CCMMinor is the AWS CCM's releases for one Kubernetes minor.
type CCMMinor struct {
	Minor int
	// Latest is the newest release of the minor whose image is promoted to
	// registry.k8s.io (a tag without a promoted image cannot be pulled), or,
	// when none of the minor is (Unpromoted), the newest tag the Go module
	// proxy serves.
	Latest string
	// SDKv2From is the first patch of the minor whose AWS clients are
	// aws-sdk-go-v2: 0 for every release of the minor, -1 for none.
	SDKv2From int
	// Unpulled are newer tags of the minor the module proxy serves whose
	// images are not yet seen promoted: known, and not pinned.
	Unpulled []string
}

// CCMSource says where CCM's Latest tags come from.
const CCMSource = "the latest cloud-controller-manager image of the minor promoted to registry.k8s.io (kubernetes/k8s.io, registry.k8s.io/images/k8s-staging-provider-aws/images.yaml)"

// SDKSource says where SDKv2From was read.
const SDKSource = "kubernetes/cloud-provider-aws pkg/providers/v1/aws_sdk.go at every tag (ec2.NewFromConfig against ec2.New(sess))"

// CCM lists the releases, oldest minor first. Some later patch releases are
// tagged in kubernetes/cloud-provider-aws without a promoted image
// (v1.24.20, v1.25.16, v1.26.13): those cannot be pulled.
var CCM = []CCMMinor{
	{Minor: 22, Latest: "v1.22.8", SDKv2From: -1},
	{Minor: 23, Latest: "v1.23.20", SDKv2From: -1},
	{Minor: 24, Latest: "v1.24.19", SDKv2From: -1},
	{Minor: 25, Latest: "v1.25.15", SDKv2From: -1},
	{Minor: 26, Latest: "v1.26.14", SDKv2From: -1},
	{Minor: 27, Latest: "v1.27.10", SDKv2From: -1},
	{Minor: 28, Latest: "v1.28.11", SDKv2From: -1},
	{Minor: 29, Latest: "v1.29.10", SDKv2From: 9},
	{Minor: 30, Latest: "v1.30.10", SDKv2From: 10},
	{Minor: 31, Latest: "v1.31.9", SDKv2From: 9},
	{Minor: 32, Latest: "v1.32.8", SDKv2From: 4},
	{Minor: 33, Latest: "v1.33.4", SDKv2From: 1},
	{Minor: 34, Latest: "v1.34.3", SDKv2From: 0, Unpulled: []string{"v1.34.4"}},
	{Minor: 35, Latest: "v1.35.2", SDKv2From: 0, Unpulled: []string{"v1.35.3"}},
	{Minor: 36, Latest: "v1.36.2", SDKv2From: 0},
	{Minor: 37, Latest: "v1.37.1", SDKv2From: 0},
}

// Kubernetes facts that bound what a cluster can do.
const (
	// CCMLease and KCMLease are the leases the cloud controller manager
	// and kube-controller-manager take by default, in LeaseNamespace
	// (their --leader-elect-resource-name and
	// --leader-elect-resource-namespace defaults).
	CCMLease       = "cloud-controller-manager"
	KCMLease       = "kube-controller-manager"
	LeaseNamespace = "kube-system"
	// LastInTreeMinor is the last Kubernetes minor with the in-tree AWS
	// cloud provider (removed in 1.27, kubernetes/kubernetes#115838): a
	// cluster that migrates runs it or an older one.
	LastInTreeMinor = 26
	// FirstLeaderMigrationMinor is the first minor whose controller
	// managers have leader migration on by default (beta from 1.22; 1.21
	// has it only behind a feature gate).
	FirstLeaderMigrationMinor = 22
	// LastInTreeKubernetes is the last Kubernetes release of that minor
	// (kubernetes/kubernetes tag v1.26.15, CHANGELOG/CHANGELOG-1.26.md).
	LastInTreeKubernetes = "v1.26.15"
)

// IAMAction is an action of the CCM's control-plane policy that not every
// release needs.
type IAMAction struct {
	Action string
	// Since are the first releases whose docs/prerequisites.md lists it,
	// one per release line that got it within the line, oldest first;
	// every later minor has it.
	Since []string
	// Without says what a release that needs it does without it.
	Without string
	Source  string
}

// The actions the newer releases added.
const (
	ActionDescribeAZs       = "ec2:DescribeAvailabilityZones"
	ActionInstanceTopology  = "ec2:DescribeInstanceTopology"
	ActionSetSecurityGroups = "elasticloadbalancing:SetSecurityGroups"
)

// IAMAdded are the actions the control-plane policy gained after v1.26.0,
// oldest first. The policy is otherwise the same from v1.22.8 to v1.37.1;
// the node policy never changed.
var IAMAdded = []IAMAction{
	{
		// From NodeZoneIDFrom the CCM also calls it while initialising a
		// node, and initialises none without it.
		Action: ActionDescribeAZs, Since: []string{"v1.26.1"},
		Without: "ensures no load balancer (it looks up the zones of the ELB's subnets)",
		Source:  "kubernetes/cloud-provider-aws docs/prerequisites.md and pkg/providers/v1/aws.go findELBSubnets, v1.26.1",
	},
	{
		Action: ActionInstanceTopology, Since: []string{"v1.30.4", "v1.31.2", "v1.32.0"},
		Without: "logs a warning and leaves the topology labels off",
		Source:  "kubernetes/cloud-provider-aws docs/prerequisites.md and pkg/providers/v1/topology.go, v1.30.4, v1.31.2, v1.32.0",
	},
	{
		Action: ActionSetSecurityGroups, Since: []string{"v1.37.0"},
		Without: "fails to update the security groups of an NLB it manages (NLBSecurityGroupMode = Managed)",
		Source:  "kubernetes/cloud-provider-aws docs/prerequisites.md and pkg/providers/v1/aws_loadbalancer.go, v1.37.0",
	},
}

// NodeZoneIDFrom is the first release that labels each node it initialises
// with its zone ID (topology.k8s.aws/zone-id), calling
// ec2:DescribeAvailabilityZones: without that action it initialises no node
// (kubernetes/cloud-provider-aws pkg/providers/v1/instances_v2.go
// getAdditionalLabels, v1.30.0; measured with v1.35.3 on moto).
const NodeZoneIDFrom = "v1.30.0"

// IAMControlPlaneBase is the control-plane policy of docs/prerequisites.md
// at v1.22.8 to v1.26.0.
var IAMControlPlaneBase = []string{
	"autoscaling:DescribeAutoScalingGroups", "autoscaling:DescribeLaunchConfigurations", "autoscaling:DescribeTags",
	"ec2:AttachVolume", "ec2:AuthorizeSecurityGroupIngress", "ec2:CreateRoute", "ec2:CreateSecurityGroup", "ec2:CreateTags",
	"ec2:CreateVolume", "ec2:DeleteRoute", "ec2:DeleteSecurityGroup", "ec2:DeleteVolume", "ec2:DescribeInstances",
	"ec2:DescribeRegions", "ec2:DescribeRouteTables", "ec2:DescribeSecurityGroups", "ec2:DescribeSubnets",
	"ec2:DescribeVolumes", "ec2:DescribeVpcs", "ec2:DetachVolume", "ec2:ModifyInstanceAttribute", "ec2:ModifyVolume",
	"ec2:RevokeSecurityGroupIngress",
	"elasticloadbalancing:AddTags", "elasticloadbalancing:ApplySecurityGroupsToLoadBalancer",
	"elasticloadbalancing:AttachLoadBalancerToSubnets", "elasticloadbalancing:ConfigureHealthCheck",
	"elasticloadbalancing:CreateListener", "elasticloadbalancing:CreateLoadBalancer",
	"elasticloadbalancing:CreateLoadBalancerListeners", "elasticloadbalancing:CreateLoadBalancerPolicy",
	"elasticloadbalancing:CreateTargetGroup", "elasticloadbalancing:DeleteListener", "elasticloadbalancing:DeleteLoadBalancer",
	"elasticloadbalancing:DeleteLoadBalancerListeners", "elasticloadbalancing:DeleteTargetGroup",
	"elasticloadbalancing:DeregisterInstancesFromLoadBalancer", "elasticloadbalancing:DeregisterTargets",
	"elasticloadbalancing:DescribeListeners", "elasticloadbalancing:DescribeLoadBalancerAttributes",
	"elasticloadbalancing:DescribeLoadBalancerPolicies", "elasticloadbalancing:DescribeLoadBalancers",
	"elasticloadbalancing:DescribeTargetGroups", "elasticloadbalancing:DescribeTargetHealth",
	"elasticloadbalancing:DetachLoadBalancerFromSubnets", "elasticloadbalancing:ModifyListener",
	"elasticloadbalancing:ModifyLoadBalancerAttributes", "elasticloadbalancing:ModifyTargetGroup",
	"elasticloadbalancing:RegisterInstancesWithLoadBalancer", "elasticloadbalancing:RegisterTargets",
	"elasticloadbalancing:SetLoadBalancerPoliciesForBackendServer", "elasticloadbalancing:SetLoadBalancerPoliciesOfListener",
	"iam:CreateServiceLinkedRole", "kms:DescribeKey",
}

// IAMNodePolicy is the node policy of docs/prerequisites.md, the same at
// every tag.
var IAMNodePolicy = []string{
	"ec2:DescribeInstances", "ec2:DescribeRegions",
	"ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:DescribeRepositories", "ecr:GetAuthorizationToken",
	"ecr:GetDownloadUrlForLayer", "ecr:GetRepositoryPolicy", "ecr:ListImages",
}

// Defect is a known defect of some CCM releases that hits one
// configuration.
type Defect struct {
	ID string
	// Affected are inclusive ranges of tags, "v1.34.0-v1.34.3".
	Affected []string
	FixedIn  string
	// Flag is the CCM flag and value the defect needs ("" when every
	// configuration has it).
	Flag    string
	Summary string
	Source  string
}

// Defects are the known defects, by release.
var Defects = []Defect{{
	ID:       "route-batch-describe",
	Affected: []string{"v1.34.0-v1.34.3", "v1.35.0-v1.35.2", "v1.36.0-v1.36.0"},
	FixedIn:  "v1.34.4, v1.35.3 and v1.36.1",
	Flag:     "--configure-cloud-routes=true",
	Summary: "the route controller's batched DescribeInstances refuses more than one instance (expected to receive a " +
		"single instance only), so once the cluster's route table holds two instance routes no route is created or repaired",
	Source: "kubernetes/cloud-provider-aws pkg/providers/v1/describe_instance_batch.go, v1.34.0 to v1.36.0; fixed by kubernetes/cloud-provider-aws#1388",
}}

// ProviderIDFallbackUntil is the last minor whose CCM initialises a node
// whose providerID it cannot read by looking the node up by its name: from
// 1.30 the CCM serves InstancesV2, which reads spec.providerID only, so such
// a node stays uninitialized (kubernetes/cloud-provider-aws
// pkg/providers/v1/aws.go InstancesV2, v1.29.10 against v1.30.0). Every
// release leaves such nodes out of its load balancers
// (aws_loadbalancer.go findInstancesForELB) and never deletes them
// (instances.go MapToAWSInstanceID: "Invalid format for AWS instance").
const ProviderIDFallbackUntil = 29

// CloudConfigKey is a [Global] key of the CCM's cloud config that not every
// release reads, or whose values are restricted.
type CloudConfigKey struct {
	Key string
	// Since are the first releases that read it, one per release line
	// that got it within the line; empty: every release.
	Since []string
	// RemovedIn is the first release that no longer reads it.
	RemovedIn string
	// Values are the values the release accepts; empty: any.
	Values []string
	// Bad says what a value outside Values does.
	Bad    string
	Source string
}

// UnknownKeysFatal are the releases that refuse a cloud config with a key
// they do not know (gcfg.ReadInto); every later release ignores such a key
// (gcfg.FatalOnly): kubernetes/cloud-provider-aws
// pkg/providers/v1/aws.go readAWSCloudConfig at the tags.
var UnknownKeysFatal = []string{"v1.26.0-v1.26.6", "v1.27.0-v1.27.2", "v1.28.0-v1.28.1"}

// CloudConfigBaseKeys are the [Global] keys of v1.26.0's cloud config
// (kubernetes/cloud-provider-aws pkg/providers/v1/aws.go CloudConfig,
// v1.26.0); CloudConfigKeys has the ones that came or went since. A key
// among neither is one no release reads.
var CloudConfigBaseKeys = []string{"Zone", "VPC", "SubnetID", "RouteTableID", "RoleARN", "KubernetesClusterTag",
	"KubernetesClusterID", "DisableSecurityGroupIngress", "ElbSecurityGroup", "DisableStrictZoneCheck", "NodeIPFamilies"}

// CloudConfigKeys are the keys whose reading changed after v1.26.0.
var CloudConfigKeys = []CloudConfigKey{
	{Key: "SourceARN", Since: []string{"v1.26.7", "v1.27.3", "v1.28.2"}, Source: "kubernetes/cloud-provider-aws pkg/providers/v1/config/config.go"},
	{Key: "Region", Since: []string{"v1.27.1"}, Source: "kubernetes/cloud-provider-aws pkg/providers/v1/config/config.go, v1.27.1"},
	{Key: "DisableStrictZoneCheck", RemovedIn: "v1.27.1", Source: "kubernetes/cloud-provider-aws pkg/providers/v1/config/config.go, v1.27.1"},
	{Key: "SupportedTopologyInstanceTypePattern", Since: []string{"v1.30.8", "v1.31.6", "v1.32.2"},
		Bad:    "a value that is no regular expression makes the CCM panic at start (regexp.MustCompile)",
		Source: "kubernetes/cloud-provider-aws pkg/providers/v1/topology.go NewInstanceTopologyManager, v1.30.8 to v1.37.1"},
	{Key: "ClusterServiceLoadBalancerHealthProbeMode", Since: []string{"v1.33.0"}, Values: []string{"", "Shared", "ServiceNodePort"},
		Bad:    "every load balancer's reconcile fails (Unsupported ClusterServiceLoadBalancerHealthProbeMode)",
		Source: "kubernetes/cloud-provider-aws pkg/providers/v1/aws.go, v1.33.0 to v1.37.1"},
	{Key: "ClusterServiceSharedLoadBalancerHealthProbePort", Since: []string{"v1.33.0"}, Source: "kubernetes/cloud-provider-aws pkg/providers/v1/config/config.go, v1.33.0"},
	{Key: "ClusterServiceSharedLoadBalancerHealthProbePath", Since: []string{"v1.33.0"}, Source: "kubernetes/cloud-provider-aws pkg/providers/v1/config/config.go, v1.33.0"},
	{Key: "NLBSecurityGroupMode", Since: []string{"v1.35.0"}, Values: []string{"", "Managed"},
		Bad:    "every NLB Service's reconcile fails (invalid NLB security group mode), though kubernetes/cloud-provider-aws docs/nlb_security_groups.md says other values fall back",
		Source: "kubernetes/cloud-provider-aws pkg/providers/v1/aws_loadbalancer.go IsNLBSecurityGroupModeManaged, v1.35.0 to v1.37.1"},
	{Key: "NodeIPFamilies", Values: []string{"ipv4", "ipv6"},
		Bad:    "is ignored without a word: a node whose families are all unknown gets no addresses from the CCM",
		Source: "kubernetes/cloud-provider-aws pkg/providers/v1/aws.go getInstanceNodeAddress, v1.26.0 to v1.37.1"},
}

// Effect is what a Kubernetes or distribution release did to an option.
type Effect string

const (
	// Removed: the option is gone and the component exits on it.
	Removed Effect = "removed"
	// NoOp: the option is accepted and does nothing (or no longer what it
	// did).
	NoOp Effect = "no-op"
	// Fatal: the option, with another, stops the component.
	Fatal Effect = "fatal"
	// Changed: the option does something else than before.
	Changed Effect = "changed"
)

// OptionChange is a change of a component's option at a release.
type OptionChange struct {
	// Component is kube-apiserver, kube-controller-manager, kubelet, rke2,
	// k3s or rke.
	Component string
	// Option as the component takes it: a flag (--cloud-provider) or a
	// configuration key (cloud-provider-name: aws).
	Option string
	// Minor is the first Kubernetes minor with the change, for Kubernetes'
	// own components and for distributions whose releases follow it.
	Minor int
	// Releases are the first distribution releases with the change, one a
	// release line, when they differ within a minor.
	Releases []string
	Effect   Effect
	Says     string
	Fix      string
	Source   string
}

// OptionChanges are the changes that matter to a cluster moving to, or
// running, the AWS CCM.
var OptionChanges = []OptionChange{
	{
		Component: "kube-apiserver", Option: "--cloud-provider", Minor: 33, Effect: Removed,
		Says:   "kube-apiserver has no --cloud-provider or --cloud-config from 1.33 and exits on the unknown flag",
		Fix:    "remove --cloud-provider and --cloud-config from kube-apiserver's flags (RKE2: kube-apiserver-arg; kubeadm: apiServer.extraArgs)",
		Source: "kubernetes/kubernetes pkg/kubeapiserver/options/cloudprovider.go, at v1.32.0 and gone at v1.33.0 (kubernetes/kubernetes#130162)",
	},
	{
		Component: "kube-controller-manager", Option: "--cloud-provider=aws", Minor: 27, Effect: Removed,
		Says: "kube-controller-manager has no in-tree AWS provider from 1.27 and exits on --cloud-provider=aws " +
			"(unknown cloud provider \"aws\"; from 1.32: built-in cloud providers are disabled)",
		Fix:    "run the AWS CCM and give kube-controller-manager --cloud-provider=external",
		Source: "kubernetes/kubernetes pkg/cloudprovider/providers/providers.go, aws gone at v1.27.0; cmd/kube-controller-manager/app/options/options.go, v1.32.0",
	},
	{
		Component: "kube-controller-manager", Option: "--controllers=-cloud-node-lifecycle", Minor: 37, Effect: Removed,
		Says: "kube-controller-manager no longer registers its cloud controllers (service-lb-controller, node-route-controller, " +
			"cloud-node-lifecycle-controller) from 1.37, so a --controllers list that names them refuses to start",
		Fix:    "drop service, route and cloud-node-lifecycle (and their -controller names) from kube-controller-manager's --controllers",
		Source: "kubernetes/kubernetes cmd/kube-controller-manager/app/controller_descriptor.go, at v1.36.1 and gone at v1.37.2",
	},
	{
		Component: "kubelet", Option: "--cloud-provider=aws", Minor: 27, Effect: Removed,
		Says:   "the kubelet has no in-tree AWS provider from 1.27 and exits on --cloud-provider=aws: it takes external or nothing",
		Fix:    "give every kubelet --cloud-provider=external, so that it registers its node with the uninitialized taint the CCM removes",
		Source: "kubernetes/kubernetes cmd/kubelet/app/server.go, v1.27.0; pkg/kubelet/kubelet.go NewMainKubelet, v1.34.0",
	},
	{
		Component: "kubelet", Option: "--cloud-config", Minor: 34, Effect: Removed,
		Says:   "the kubelet has no --cloud-config from 1.34 and exits on the unknown flag",
		Fix:    "remove --cloud-config from the kubelet's flags (RKE2 stopped passing it in v1.34.1+rke2r1)",
		Source: "kubernetes/kubernetes cmd/kubelet/app/options/options.go, gone at v1.34.0 (kubernetes/kubernetes#130161)",
	},
	{
		Component: "kubeadm", Option: "kubeadm.k8s.io/v1beta3", Minor: 37, Effect: Removed,
		Says:   "kubeadm refuses the v1beta3 configuration API from 1.37 (deprecated since 1.31, when v1beta4 became the default)",
		Fix:    "write kubeadm's configuration as kubeadm.k8s.io/v1beta4 (kubeadm config migrate, with kubeadm 1.36 or older)",
		Source: "kubernetes/kubernetes cmd/kubeadm/app/util/config/common.go oldKnownAPIVersions, v1.37.2",
	},
	{
		Component: "rke2", Option: "cloud-provider-name: aws", Effect: NoOp,
		Releases: []string{"v1.29.11+rke2r1", "v1.30.7+rke2r1", "v1.31.3+rke2r1", "v1.32.0+rke2r1"},
		Says: "cloud-provider-name: aws passes no --cloud-provider at all and only names the node from instance metadata, " +
			"as node-name-from-cloud-provider-metadata: true does, which replaces it; the kubelets then register without the uninitialized taint",
		Fix:    "set cloud-provider-name: external and node-name-from-cloud-provider-metadata: true, and disable-cloud-controller: true",
		Source: "rancher/rke2 pkg/rke2/rke2_linux.go and pkg/cli/cmds/root.go at those tags (not at v1.29.10, v1.30.6, v1.31.2)",
	},
	{
		Component: "rke2", Option: "node-name", Effect: Changed,
		Releases: []string{"v1.29.11+rke2r1", "v1.30.7+rke2r1", "v1.31.3+rke2r1", "v1.32.0+rke2r1"},
		Says: "with cloud-provider-name: aws or node-name-from-cloud-provider-metadata: true, RKE2 names the node from instance " +
			"metadata whatever node-name says: a node named otherwise registers anew at that upgrade",
		Fix: "turn both off on such a node in " + NodeNameDropIn + ": " +
			"cloud-provider-name: external, node-name-from-cloud-provider-metadata: false, and its node-name",
		Source: "rancher/rke2 pkg/rke2/rke2_linux.go at those tags (not at v1.29.10, v1.30.6, v1.31.2)",
	},
	{
		Component: "rke2", Option: "kube-apiserver --cloud-provider", Minor: 33, Effect: NoOp,
		Releases: []string{"v1.33.0+rke2r1"},
		Says:     "RKE2 passes kube-apiserver no --cloud-provider from v1.33.0+rke2r1, whatever cloud-provider-name says",
		Fix:      "drop kube-apiserver-arg cloud-provider=... from the configuration: kube-apiserver exits on it from 1.33",
		Source:   "rancher/rke2 pkg/podexecutor/staticpod.go, v1.32.0+rke2r1 against v1.33.0+rke2r1",
	},
	{
		Component: "rke2", Option: "disable-cloud-controller", Minor: 36, Effect: Changed,
		Releases: []string{"v1.36.0+rke2r1"},
		Says: "RKE2 no longer turns its own cloud controller off when cloud-provider-name is set: without " +
			"disable-cloud-controller: true it runs beside the AWS CCM and gives new nodes rke2:// provider IDs, which never change",
		Fix:    "set disable-cloud-controller: true on every server",
		Source: "rancher/rke2 pkg/rke2/rke2_linux.go, v1.35.7+rke2r1 against v1.36.0+rke2r1 (rancher/rke2#10352)",
	},
	{
		Component: "rke2", Option: "node-external-ip", Effect: Fatal,
		Says:   "node-external-ip together with any cloud-provider-name stops RKE2 (can't set node-external-ip while using cloud provider)",
		Fix:    "drop node-external-ip on nodes with a cloud provider: the CCM writes the instance's public address",
		Source: "rancher/rke2 pkg/rke2/rke2_linux.go; pkg/cli/cmds/root.go validateCloudProvider from v1.36.0+rke2r1",
	},
}

// NodeNameDropIn is the file of an RKE2 node that keeps its node-name from
// the release that names nodes from instance metadata whatever node-name
// says: config.yaml.d's files are read by name, after Rancher's
// 50-rancher.yaml.
const NodeNameDropIn = "/etc/rancher/rke2/config.yaml.d/99-node-name.yaml"

// DropInOrder is how RKE2 and K3s read their configuration files, and
// where.
const DropInOrder = "config.yaml.d's files are read after config.yaml, by name, a later value replacing an earlier one " +
	"(k3s-io/k3s pkg/configfilearg/parser.go readConfigFile)"

// KDMData is the KDM data of a Rancher minor that lists a configuration
// key: Rancher's planner passes a machine configuration key on to RKE2 only
// where the KDM data of its Rancher minor lists it for the cluster's RKE2
// release, and drops any other without a word.
type KDMData struct {
	Rancher string // the Rancher minor: 2.14
	Since   string // when its KDM data first listed the key
	Ref     string // the change to the KDM data
}

// NamingKeyKDM are the Rancher minors whose KDM data lists
// node-name-from-cloud-provider-metadata, oldest first; older Rancher, or KDM
// data older than Since (an air-gapped Rancher's), drops the key.
var NamingKeyKDM = []KDMData{
	{Rancher: "2.12", Since: "July 2026", Ref: "rancher/kontainer-driver-metadata#2125 (rancher/rancher#55935)"},
	{Rancher: "2.13", Since: "July 2026", Ref: "rancher/kontainer-driver-metadata#2124 (rancher/rancher#55934)"},
	{Rancher: "2.14", Since: "February 2026", Ref: "rancher/kontainer-driver-metadata#1957 (rancher/rancher#53852)"},
}

// KDMFilterSource is where Rancher drops the keys its KDM data does not
// list.
const KDMFilterSource = "rancher/rancher pkg/capr/planner/filter.go filterConfigData"

// RKE1: the rke release line that runs each Kubernetes minor, from the "RKE
// Kubernetes versions" of rancher/rke's release notes (v1.5.12: 1.25–1.28;
// v1.6.9: 1.27–1.30; v1.7.3: 1.28–1.31; v1.8.14: 1.30–1.32, "the final
// release in the RKE 1.x series"); cloud_provider external-aws exists from
// rke v1.4.15 and v1.5.0 (rancher/rke cluster/plan.go getCloudProviderName
// at those tags; not at v1.4.14).
var RKELines = map[int]string{26: "v1.4.15 or v1.5", 27: "v1.5", 28: "v1.5", 29: "v1.6", 30: "v1.6", 31: "v1.7", 32: "v1.8"}

// RKELastMinor is the last Kubernetes minor RKE1 runs: rke v1.8.14, its
// last release, tops out at 1.32 (RKE1 reached end of life on 2025-07-31).
const RKELastMinor = 32

// CSI migration of the in-tree EBS plugin (pkg/features/kube_features.go
// CSIMigrationAWS): beta and off in 1.22, beta and on in 1.23 and 1.24, GA
// and locked on from 1.25.
const (
	CSIMigrationDefaultOnMinor = 23
	CSIMigrationLockedMinor    = 25
)

// ChartImages are the CCM image tags each version of the upstream chart
// deploys by default: image.tag in
// charts/aws-cloud-controller-manager/values.yaml of
// kubernetes/cloud-provider-aws at each tag
// helm-chart-aws-cloud-controller-manager-0.0.N.
var ChartImages = map[string]string{
	"0.0.2": "v1.20.0-alpha.0", "0.0.3": "v1.21.0-alpha.0",
	"0.0.4": "v1.22.0-alpha.0", "0.0.5": "v1.22.0-alpha.0",
	"0.0.6": "v1.23.0-alpha.0", "0.0.7": "v1.23.0-alpha.0",
	"0.0.8": "v1.27.1", "0.0.9": "v1.33.0", "0.0.10": "v1.34.0", "0.0.11": "v1.35.0",
}

// ProviderIDSource says where what the CCM and the API server do with a
// node's providerID was read.
const ProviderIDSource = "kubernetes/cloud-provider-aws pkg/providers/v1/instances.go MapToAWSInstanceID (v1.26.0 to v1.37.1); " +
	"kubernetes/kubernetes pkg/apis/core/validation/validation.go ValidateNodeUpdate (a providerID changes only from empty), v1.27.0 to v1.37.2"

// UninitializedTaint is the taint a kubelet with --cloud-provider=external
// registers its node with, and the only sign the cloud node controller
// initialises a node by: added by hand to a node without a providerID, it
// has the CCM initialise it and set the providerID, which the API server
// lets change from empty (kubernetes/kubernetes
// pkg/kubelet/kubelet_node_status.go initialNode; k8s.io/cloud-provider
// controllers/node/node_controller.go, v0.27.0 to v0.37.0).
const UninitializedTaint = "node.cloudprovider.kubernetes.io/uninitialized"

// KubeadmConfig is where kubeadm keeps the cluster's ClusterConfiguration,
// with the API version of the kubeadm that last wrote it.
const KubeadmConfig = "kube-system/kubeadm-config"
