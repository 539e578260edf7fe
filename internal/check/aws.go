package check

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// The AWS side of check (check --aws): what the account the cluster runs
// in holds for the CCM, read with Describe, Get and List calls and
// iam:SimulatePrincipalPolicy only (aws_collect.go), into plain data the
// rules judge (aws_rules.go), so that a test writes an account as a
// literal, as recorded API answers.
//
// The CCM's rules these carry over were read in k8s.io/cloud-provider-aws
// at v1.26.0 and v1.35.3 (pkg/providers/v1): the node lookup
// (instances.go MapToAWSInstanceID, aws.go getInstanceByNodeName), the
// cluster tags (tags.go), the security group per instance
// (findSecurityGroupForInstance), the subnets of a load balancer
// (findSubnets, findELBSubnets, isSubnetPublic), the load balancer's name
// and tags (aws_loadbalancer.go, cloudprovider.DefaultLoadBalancerName).

// AWSOptions say how check reads AWS; a nil *AWSOptions in Input reads
// none of it.
type AWSOptions struct {
	// Profile is a shared config profile ("": the SDK's default chain).
	Profile string
	// Region is the region to read ("": the nodes', else the SDK's).
	Region string
	// Principal is the IAM role or user ARN the CCM calls AWS as ("": the
	// instance-profile roles of the control-plane instances).
	Principal string
}

// AWSAccount is what check read of the account, for the cluster's nodes.
type AWSAccount struct {
	Region     string `json:"region"`
	RegionFrom string `json:"regionFrom"` // flag, nodes or sdk
	// Caller is the ARN check reads as (sts:GetCallerIdentity); "" when
	// it could not tell.
	Caller string `json:"caller,omitempty"`
	// Endpoints are the endpoints check called, by service, where they
	// are not AWS's own: from the cloud config's [ServiceOverride]
	// sections or the SDK's settings.
	Endpoints map[string]string `json:"endpoints,omitempty"`
	// Instances are the instances behind the nodes: by the providerIDs'
	// instance IDs, by the names the CCM looks up, and by the nodes'
	// InternalIPs (to name the instance of a node whose name matches
	// none).
	Instances []AWSInstance `json:"instances"`
	// VPCs are the instances' VPCs.
	VPCs           []AWSVPC           `json:"vpcs"`
	Subnets        []AWSSubnet        `json:"subnets"`
	SecurityGroups []AWSSecurityGroup `json:"securityGroups"`
	RouteTables    []AWSRouteTable    `json:"routeTables"`
	// ZoneTypes are the zones' types (availability-zone, local-zone,
	// wavelength-zone, outpost), by zone name.
	ZoneTypes map[string]string `json:"zoneTypes,omitempty"`
	// Profiles are the control-plane instances' instance profiles.
	Profiles []AWSInstanceProfile `json:"instanceProfiles"`
	// Simulations are the answers of iam:SimulatePrincipalPolicy for the
	// principals the CCM calls AWS as.
	Simulations []AWSSimulation `json:"simulations"`
	// LoadBalancers are the Classic ELBs and NLBs/ALBs of the region.
	LoadBalancers []AWSLoadBalancer `json:"loadBalancers"`
	// Unread are the reads that failed; the areas they feed say so.
	Unread []AWSUnread `json:"unread,omitempty"`
	// Calls counts the AWS calls made, by service:action.
	Calls map[string]int `json:"calls"`
}

// AWSInstance is an EC2 instance as the CCM sees it.
type AWSInstance struct {
	ID             string            `json:"id"`
	State          string            `json:"state"`
	PrivateDNSName string            `json:"privateDnsName,omitempty"`
	PrivateIP      string            `json:"privateIp,omitempty"`
	Zone           string            `json:"zone,omitempty"`
	VPC            string            `json:"vpc,omitempty"`
	Subnet         string            `json:"subnet,omitempty"`
	SecurityGroups []string          `json:"securityGroups,omitempty"`
	Tags           map[string]string `json:"tags,omitempty"`
	// Profile is the instance profile's ARN, "" without one.
	Profile string `json:"instanceProfile,omitempty"`
	// HTTPTokens (required, optional), HopLimit and HTTPEndpoint
	// (enabled, disabled) are its instance metadata options.
	HTTPTokens   string `json:"httpTokens,omitempty"`
	HopLimit     int32  `json:"hopLimit,omitempty"`
	HTTPEndpoint string `json:"httpEndpoint,omitempty"`
}

// AWSVPC is a VPC and its DHCP options' domain name.
type AWSVPC struct {
	ID         string `json:"id"`
	DHCPDomain string `json:"dhcpDomain,omitempty"`
}

// AWSSubnet is a subnet of the nodes' VPCs.
type AWSSubnet struct {
	ID   string            `json:"id"`
	VPC  string            `json:"vpc"`
	Zone string            `json:"zone"`
	Tags map[string]string `json:"tags,omitempty"`
}

// AWSSecurityGroup is a security group of the region.
type AWSSecurityGroup struct {
	ID   string            `json:"id"`
	Name string            `json:"name,omitempty"`
	VPC  string            `json:"vpc,omitempty"`
	Tags map[string]string `json:"tags,omitempty"`
}

// AWSRouteTable is a route table of the nodes' VPCs: the subnets it is
// associated with, whether it is the VPC's main one, and the gateways of
// its routes.
type AWSRouteTable struct {
	ID       string   `json:"id"`
	VPC      string   `json:"vpc"`
	Main     bool     `json:"main,omitempty"`
	Subnets  []string `json:"subnets,omitempty"`
	Gateways []string `json:"gateways,omitempty"`
}

// AWSInstanceProfile is an instance profile and its roles.
type AWSInstanceProfile struct {
	ARN   string   `json:"arn"`
	Roles []string `json:"roles"` // role ARNs
}

// AWSSimulation is iam:SimulatePrincipalPolicy's answer for one principal:
// the decision per action (allowed, implicitDeny, explicitDeny).
type AWSSimulation struct {
	Principal string            `json:"principal"`
	From      string            `json:"from"` // "flag" or the instance profile's ARN
	Decisions map[string]string `json:"decisions"`
}

// AWSLoadBalancer is a load balancer of the region and its tags.
type AWSLoadBalancer struct {
	Name string `json:"name"`
	// Type is classic, network, application or gateway.
	Type string            `json:"type"`
	ARN  string            `json:"arn,omitempty"`
	Tags map[string]string `json:"tags,omitempty"`
}

// AWSUnread is a read that failed.
type AWSUnread struct {
	// Area is the area of the findings that needed it.
	Area string `json:"area"`
	// Action is the IAM action of the call, e.g. ec2:DescribeSubnets.
	Action string `json:"action"`
	// Code is AWS's error code, "" for an endpoint that did not answer.
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
	// Denied: AWS refused check the action.
	Denied bool `json:"denied,omitempty"`
}

// The tags the CCM reads (tags.go).
const (
	tagClusterPrefix = "kubernetes.io/cluster/"
	tagLegacyCluster = "KubernetesCluster"
	tagRoleELB       = "kubernetes.io/role/elb"
	tagRoleInternal  = "kubernetes.io/role/internal-elb"
	tagServiceName   = "kubernetes.io/service-name"
)

// clusterIDsOf are the cluster IDs a resource's tags name: each
// kubernetes.io/cluster/<ID> key (whatever its value), and the legacy
// KubernetesCluster's value.
func clusterIDsOf(tags map[string]string) []string {
	var out []string
	for k, v := range tags {
		if id, ok := strings.CutPrefix(k, tagClusterPrefix); ok && id != "" {
			out = append(out, id)
		} else if k == tagLegacyCluster && v != "" {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// hasClusterTag is the CCM's test of a resource's tags for a cluster ID:
// the key kubernetes.io/cluster/<ID> with any value, or KubernetesCluster
// = <ID>.
func hasClusterTag(tags map[string]string, id string) bool {
	if _, ok := tags[tagClusterPrefix+id]; ok {
		return true
	}
	return tags[tagLegacyCluster] == id
}

// hasAnyClusterKey tells whether a resource carries a
// kubernetes.io/cluster/ key of any cluster.
func hasAnyClusterKey(tags map[string]string) bool {
	for k := range tags {
		if strings.HasPrefix(k, tagClusterPrefix) {
			return true
		}
	}
	return false
}

var instanceIDForm = regexp.MustCompile(`^i-[^/]*$`)

// instanceIDOf reads the instance ID out of a providerID as the CCM does
// (MapToAWSInstanceID, the same at v1.26.0 and v1.35.3): a value without
// the aws:// scheme is read as aws:///VALUE, and the last path segment is
// the ID, which must start with i- (or fargate- for Fargate nodes, which
// have no instance). ok is false when the CCM refuses it ("Invalid format
// for AWS instance").
func instanceIDOf(providerID string) (id string, fargate, ok bool) {
	s := providerID
	if !strings.HasPrefix(s, "aws://") {
		s = "aws:///" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", false, false
	}
	tokens := strings.Split(strings.Trim(u.Path, "/"), "/")
	last := tokens[len(tokens)-1]
	switch {
	case strings.HasPrefix(last, "fargate-"):
		return last, true, true
	case instanceIDForm.MatchString(last):
		return last, false, true
	}
	return "", false, false
}

// nameAsInstanceID is the instance ID a node name that is one stands for
// (resource-based hostnames: i-0abc, or i-0abc.us-west-2.compute.internal
// where the CCM cuts the name at the first dot, from v1.26.11, v1.27.2 and
// v1.28.0; v1.26.0 sends the whole name). ok is false for other names.
func nameAsInstanceID(name string, cuts bool) (string, bool) {
	if !strings.HasPrefix(name, "i-") {
		return "", false
	}
	if cuts {
		name, _, _ = strings.Cut(name, ".")
	}
	return name, true
}

// loadBalancerName is the name the CCM gives a Service's load balancer
// (cloudprovider.DefaultLoadBalancerName): "a" and the Service's UID
// without dashes, at most 32 characters.
func loadBalancerName(uid string) string {
	n := "a" + strings.ReplaceAll(uid, "-", "")
	if len(n) > 32 {
		n = n[:32]
	}
	return n
}

// AWSReadActions are the IAM actions check --aws calls, all read-only:
// the policy docs/check.md gives the identity check runs as
// (sts:GetCallerIdentity needs none).
var AWSReadActions = []string{
	"ec2:DescribeAvailabilityZones", "ec2:DescribeDhcpOptions", "ec2:DescribeInstances", "ec2:DescribeRouteTables",
	"ec2:DescribeSecurityGroups", "ec2:DescribeSubnets", "ec2:DescribeVpcs",
	"elasticloadbalancing:DescribeLoadBalancers", "elasticloadbalancing:DescribeTags",
	"iam:GetInstanceProfile", "iam:SimulatePrincipalPolicy",
}
