package check

// The account check --aws read (package awscheck reads it and judges
// it): plain data the snapshot holds, the report summarises and a test
// writes as a literal.

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

// AWSReadActions are the IAM actions check --aws calls, all read-only:
// the policy docs/check.md gives the identity check runs as
// (sts:GetCallerIdentity needs none).
var AWSReadActions = []string{
	"ec2:DescribeAvailabilityZones", "ec2:DescribeDhcpOptions", "ec2:DescribeInstances", "ec2:DescribeRouteTables",
	"ec2:DescribeSecurityGroups", "ec2:DescribeSubnets", "ec2:DescribeVpcs",
	"elasticloadbalancing:DescribeLoadBalancers", "elasticloadbalancing:DescribeTags",
	"iam:GetInstanceProfile", "iam:SimulatePrincipalPolicy",
}

// AWSError is an AWS account check cannot read at all: no region, no
// credentials or expired ones, or no endpoint that answers. The command
// exits 3.
type AWSError struct{ Msg string }

func (e *AWSError) Error() string { return "AWS: " + e.Msg }
