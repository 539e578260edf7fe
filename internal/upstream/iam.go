package upstream

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/version"
)

// IAM: the actions docs/prerequisites.md of kubernetes/cloud-provider-aws
// lists, read at every promoted tag of CCMReleases. The control-plane
// policy is the same from v1.22.8 to v1.26.0; from v1.26.1 the CCM calls
// ec2:DescribeAvailabilityZones when it ensures a load balancer
// (pkg/providers/v1/aws.go findELBSubnets → getZoneTypesByName) and the
// document lists it; from v1.30.0 it also calls it while initialising a
// node (instances_v2.go getAdditionalLabels, the topology.k8s.aws/zone-id
// label: refused, no node is initialised) and asks for
// ec2:DescribeInstanceTopology. The node policy is the same at every tag.
var (
	iamControlPlaneBase = []string{
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
	iamNode = []string{
		"ec2:DescribeInstances", "ec2:DescribeRegions",
		"ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:DescribeRepositories", "ecr:GetAuthorizationToken",
		"ecr:GetDownloadUrlForLayer", "ecr:GetRepositoryPolicy", "ecr:ListImages",
	}
)

// The actions the newer releases added.
const (
	ActionDescribeAZs      = "ec2:DescribeAvailabilityZones"
	ActionInstanceTopology = "ec2:DescribeInstanceTopology"
)

// IAMControlPlane returns the control-plane policy's actions of
// docs/prerequisites.md at a CCM tag, sorted.
func IAMControlPlane(tag string) []string {
	v := version.MustParseGeneric(tag)
	a := slices.Clone(iamControlPlaneBase)
	if v.AtLeast(version.MustParseGeneric("v1.26.1")) {
		a = append(a, ActionDescribeAZs)
	}
	if v.AtLeast(version.MustParseGeneric("v1.30.0")) {
		a = append(a, ActionInstanceTopology)
	}
	slices.Sort(a)
	return a
}

// IAMNode returns the node policy's actions, sorted.
func IAMNode() []string { return slices.Sorted(slices.Values(iamNode)) }
