package awscheck

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check/checktest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// The AWS rules on recorded answers: a healthy account written out whole,
// and each fault class as one change to it. The e2e calibration
// (e2e/awsccm) runs the same classes on moto with the real CCM.

const (
	cpNamed = "ip-10-0-1-7.us-west-2.compute.internal"
	cpRole  = "arn:aws:iam::123456789012:role/control-plane"
	cpProf  = "arn:aws:iam::123456789012:instance-profile/control-plane"
)

// healthyAWS is an RKE2 cluster on EC2: a server with its providerID, an
// agent registered by its instance's private DNS name, each instance
// tagged for cluster c1 with one tagged security group, a public and a
// private subnet in the zone, the server's role allowed every action of
// the CCM's policy, and a Service whose Classic ELB the CCM made.
func healthyAWS(t *testing.T) *check.Snapshot { return healthyAWSWith(t, nil) }

// healthyAWSWith is healthyAWS with edit applied to the CCM's pod spec
// in the manifests (nil: none).
func healthyAWSWith(t *testing.T, edit func(*corev1.PodSpec)) *check.Snapshot {
	t.Helper()
	nodes := []corev1.Node{
		checktest.RKE2Server("cp-1", checktest.Internal("10.0.1.5")),
		checktest.RKE2Agent(cpNamed, checktest.Internal("10.0.1.7"), func(n *corev1.Node) { n.Spec.ProviderID = "" }),
	}
	s := rke2Snapshot(t, nodes, edit)
	tags := map[string]string{"kubernetes.io/cluster/c1": "owned"}
	inst := func(id, dns, ip, profile string) check.AWSInstance {
		return check.AWSInstance{ID: id, State: "running", PrivateDNSName: dns, PrivateIP: ip, Zone: "us-west-2a", VPC: "vpc-1", Subnet: "subnet-pub",
			SecurityGroups: []string{"sg-node"}, Tags: tags, Profile: profile, HTTPTokens: "required", HopLimit: 1, HTTPEndpoint: "enabled"}
	}
	decisions := map[string]string{}
	for _, a := range releases.IAMPolicy("v1.34.0") {
		decisions[a] = "allowed"
	}
	s.AWSOptions = &check.AWSOptions{}
	s.AWS = &check.AWSAccount{Region: "us-west-2", RegionFrom: "nodes", Caller: "arn:aws:iam::123456789012:user/ops", Calls: map[string]int{"ec2:DescribeInstances": 2},
		Instances: []check.AWSInstance{
			inst("i-0123", "ip-10-0-1-5.us-west-2.compute.internal", "10.0.1.5", cpProf),
			inst("i-0789", cpNamed, "10.0.1.7", ""),
		},
		VPCs: []check.AWSVPC{{ID: "vpc-1", DHCPDomain: "us-west-2.compute.internal"}},
		Subnets: []check.AWSSubnet{
			{ID: "subnet-pub", VPC: "vpc-1", Zone: "us-west-2a", Tags: map[string]string{"kubernetes.io/cluster/c1": "shared", tagRoleELB: "1"}},
			{ID: "subnet-priv", VPC: "vpc-1", Zone: "us-west-2a", Tags: map[string]string{"kubernetes.io/cluster/c1": "shared", tagRoleInternal: "1"}},
		},
		SecurityGroups: []check.AWSSecurityGroup{{ID: "sg-node", VPC: "vpc-1", Tags: tags}, {ID: "sg-admin", VPC: "vpc-1"}},
		RouteTables: []check.AWSRouteTable{
			{ID: "rtb-pub", VPC: "vpc-1", Subnets: []string{"subnet-pub"}, Gateways: []string{"local", "igw-1"}},
			{ID: "rtb-main", VPC: "vpc-1", Main: true, Gateways: []string{"local"}},
		},
		ZoneTypes:   map[string]string{"us-west-2a": "availability-zone", "us-west-2-lax-1a": "local-zone"},
		Profiles:    []check.AWSInstanceProfile{{ARN: cpProf, Roles: []string{cpRole}}},
		Simulations: []check.AWSSimulation{{Principal: cpRole, From: cpProf, Decisions: decisions}},
		LoadBalancers: []check.AWSLoadBalancer{{Name: loadBalancerName("0a1b2c3d-0000-4000-8000-000000000001"), Type: "classic",
			Tags: map[string]string{tagServiceName: "default/web", "kubernetes.io/cluster/c1": "owned"}}},
	}
	s.LoadBalancers = []corev1.Service{awsLBService("default", "web", "0a1b2c3d-0000-4000-8000-000000000001")}
	return s
}

func awsLBService(ns, name, uid string) corev1.Service {
	return corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid), Annotations: map[string]string{}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}}
}

// awsFindings are the report's findings of the AWS areas (and iam).
func awsFindings(r *check.Report) []check.Finding {
	var out []check.Finding
	for _, f := range r.Findings {
		if check.AWSArea(f.Area) || f.Area == check.AreaIAM {
			out = append(out, f)
		}
	}
	return out
}

// TestAWSHealthy: on the healthy account every AWS area says ✓ (or ·),
// none ! or ✗, and the report's aws summary maps each node to its
// instance.
func TestAWSHealthy(t *testing.T) {
	r := check.Evaluate(healthyAWS(t))
	areas := map[string]bool{}
	for _, f := range awsFindings(r) {
		areas[f.Area] = true
		if f.Severity == check.Error || f.Severity == check.Warning {
			t.Errorf("healthy account: %s %s: %s: %s", f.Severity, f.Area, f.Subject, f.Message)
		}
	}
	for _, a := range []string{check.AreaAWS, check.AreaInstance, check.AreaClusterID, check.AreaSecurityGroup, check.AreaSubnet, check.AreaIAM, check.AreaMetadata, check.AreaLoadBalancer} {
		if !areas[a] {
			t.Errorf("no %s finding on the healthy account", a)
		}
	}
	if r.AWS == nil || r.AWS.Instances["cp-1"] != "i-0123" || r.AWS.Instances[cpNamed] != "i-0789" || r.AWS.Errors != 0 {
		t.Errorf("aws summary: %+v", r.AWS)
	}
}

// TestAWSFaults: each fault class, one change to the healthy account, is
// an error (or warning) of its area naming the AWS resources and the fix.
func TestAWSFaults(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(s *check.Snapshot)
		area   string
		sev    check.Severity
		says   []string // in subject, message or fix
	}{
		{"instance without the cluster tag", func(s *check.Snapshot) { s.AWS.Instances[1].Tags = map[string]string{"Name": "w"} },
			check.AreaInstance, check.Error, []string{cpNamed, "lacks the tag kubernetes.io/cluster/c1", "aws ec2 create-tags --resources i-0789"}},
		{"the same, as the cluster-id area says it", func(s *check.Snapshot) { s.AWS.Instances[1].Tags = nil },
			check.AreaClusterID, check.Error, []string{"i-0789", "no cluster tag", "leaves it out of every load balancer"}},
		{"two instances without the cluster tag, one finding", func(s *check.Snapshot) {
			s.AWS.Instances[0].Tags, s.AWS.Instances[1].Tags = nil, nil
			s.CloudConfig = &check.CloudConfig{From: "ConfigMap kube-system/cc (key cloud.conf)", Text: "[Global]\nKubernetesClusterID = c1\n"}
		}, check.AreaClusterID, check.Error, []string{"2 instances: i-0123 and i-0789", "no cluster tag (cluster c1, from the cloud config's KubernetesClusterID)", "--resources i-0123 i-0789 --tags"}},
		{"instance tagged for another cluster", func(s *check.Snapshot) {
			s.AWS.Instances[0].Tags = map[string]string{"kubernetes.io/cluster/c2": "owned"}
		},
			check.AreaClusterID, check.Error, []string{"i-0123", "tagged for c2", "another cluster"}},
		{"no cluster ID at all", func(s *check.Snapshot) { s.AWS.Instances[0].Tags, s.AWS.Instances[1].Tags = nil, nil },
			check.AreaClusterID, check.Error, []string{"failed to find ClusterID", "KubernetesClusterID"}},
		{"providerID aws alone", func(s *check.Snapshot) { s.Nodes[0].Spec.ProviderID = "aws" },
			check.AreaInstance, check.Error, []string{"cp-1", `providerID "aws" names no instance`, "Invalid format for AWS instance", "instance at 10.0.1.5 is i-0123"}},
		{"providerID of a terminated instance", func(s *check.Snapshot) { s.AWS.Instances[0].State = "terminated" },
			check.AreaInstance, check.Error, []string{"cp-1", "i-0123", "deletes the node"}},
		{"node named by a custom DHCP domain", func(s *check.Snapshot) {
			s.Nodes[1].Name = "ip-10-0-1-7.corp.example"
			s.AWS.VPCs[0].DHCPDomain = "corp.example"
		}, check.AreaInstance, check.Error, []string{"ip-10-0-1-7.corp.example", "instance i-0789", "named " + cpNamed, "domain-name corp.example"}},
		{"two tagged security groups", func(s *check.Snapshot) {
			s.AWS.Instances[0].SecurityGroups = []string{"sg-node", "sg-admin"}
			s.AWS.SecurityGroups[1].Tags = map[string]string{"kubernetes.io/cluster/c1": "owned"}
		}, check.AreaSecurityGroup, check.Error, []string{"instance i-0123", "sg-node, sg-admin", "Multiple tagged security groups found"}},
		{"two untagged security groups", func(s *check.Snapshot) {
			s.AWS.Instances[1].SecurityGroups = []string{"sg-a", "sg-b"}
		}, check.AreaSecurityGroup, check.Error, []string{"instance i-0789", "Multiple untagged security groups found"}},
		{"no public subnet", func(s *check.Snapshot) { s.AWS.RouteTables[0].Gateways = []string{"local", "nat-1"} },
			check.AreaSubnet, check.Error, []string{"vpc-1", "internet-facing", "could not find any suitable subnets"}},
		{"the public subnet tagged for another cluster", func(s *check.Snapshot) {
			s.AWS.Subnets[0].Tags = map[string]string{"kubernetes.io/cluster/c2": "owned", tagRoleELB: "1"}
		}, check.AreaSubnet, check.Error, []string{"internet-facing", "could not find any suitable subnets"}},
		{"an untagged subnet picked in a VPC shared with another cluster", func(s *check.Snapshot) {
			s.AWS.Subnets[0].Tags = map[string]string{tagRoleELB: "1"}
			s.AWS.Subnets = append(s.AWS.Subnets, check.AWSSubnet{ID: "subnet-c2", VPC: "vpc-1", Zone: "us-west-2b", Tags: map[string]string{"kubernetes.io/cluster/c2": "owned"}})
		}, check.AreaSubnet, check.Warning, []string{"subnet-pub", "other clusters (c2)", "kubernetes.io/cluster/c1=shared"}},
		{"a subnet without a route table", func(s *check.Snapshot) { s.AWS.RouteTables = s.AWS.RouteTables[:1] },
			check.AreaSubnet, check.Error, []string{"could not locate routing table for subnet subnet-priv"}},
		{"the role lacks DescribeAvailabilityZones", func(s *check.Snapshot) {
			s.AWS.Simulations[0].Decisions[releases.ActionDescribeAZs] = "implicitDeny"
		}, check.AreaIAM, check.Error, []string{cpRole, "instance profile " + cpProf, "may not ec2:DescribeAvailabilityZones", "initialises no node"}},
		{"IMDSv2 hop limit 1 off the host network", func(s *check.Snapshot) {
			*s = *healthyAWSWith(t, func(p *corev1.PodSpec) { p.HostNetwork = false })
		}, check.AreaMetadata, check.Error, []string{"instance i-0123", "hop limit of 1", "hostNetwork: true"}},
		{"metadata disabled", func(s *check.Snapshot) { s.AWS.Instances[0].HTTPEndpoint = "disabled" },
			check.AreaMetadata, check.Error, []string{"instance i-0123", "disabled", "--http-endpoint enabled"}},
		{"a load balancer whose Service is gone", func(s *check.Snapshot) { s.LoadBalancers = nil },
			check.AreaLoadBalancer, check.Warning, []string{"Service default/web", "is gone", "delete-load-balancer"}},
		{"the CCM's load balancer missing", func(s *check.Snapshot) { s.AWS.LoadBalancers = nil },
			check.AreaLoadBalancer, check.Warning, []string{"Service default/web", "not in us-west-2"}},
		{"the AWS Load Balancer Controller's webhook", func(s *check.Snapshot) {
			s.Webhooks = []check.ServiceWebhook{{Configuration: "aws-load-balancer-webhook", Webhook: albcServiceWebhook}}
		}, check.AreaLoadBalancer, check.Warning, []string{"aws-load-balancer-webhook", "loadBalancerClass", "enableServiceMutatorWebhook=false"}},
		{"DescribeSubnets refused to check", func(s *check.Snapshot) {
			s.AWS.Unread = []check.AWSUnread{{Area: check.AreaSubnet, Action: "ec2:DescribeSubnets", Code: "UnauthorizedOperation", Denied: true}}
		}, check.AreaSubnet, check.Info, []string{"ec2:DescribeSubnets", "could not read", "grant ec2:DescribeSubnets", "arn:aws:iam::123456789012:user/ops"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := healthyAWS(t)
			c.change(s)
			r := check.Evaluate(s)
			ruleAreas(t, s)
			var hit *check.Finding
			for i, f := range r.Findings {
				if f.Area == c.area && f.Severity == c.sev {
					text := f.Subject + " " + f.Message + " " + f.Fix + " " + strings.Join(f.Subjects, " ")
					all := true
					for _, w := range c.says {
						all = all && strings.Contains(text, w)
					}
					if all {
						hit = &r.Findings[i]
					}
				}
			}
			if hit == nil {
				for _, f := range awsFindings(r) {
					t.Logf("%s %s: %s: %s → %s", f.Severity, f.Area, f.Subject, f.Message, f.Fix)
				}
				t.Fatalf("no %s %s finding saying %q", c.sev, c.area, c.says)
			}
		})
	}
}

// TestCutsInstanceIDNames: the releases that read i-0abc.REGION... as
// i-0abc.
func TestCutsInstanceIDNames(t *testing.T) {
	for tag, want := range map[string]bool{"v1.26.0": false, "v1.26.11": true, "v1.27.2": true, "v1.27.3": false, "v1.28.0": true, "v1.35.3": true} {
		s := healthyAWSWith(t, ccmImage("registry.k8s.io/provider-aws/cloud-controller-manager:"+tag))
		v := check.NewView(s)
		if got := cutsInstanceIDNames(v); got != want {
			t.Errorf("%s: cuts %v, want %v", tag, got, want)
		}
	}
}

// TestLoadBalancerName: the CCM's name for a Service's load balancer.
func TestLoadBalancerName(t *testing.T) {
	if got := loadBalancerName("0a1b2c3d-0000-4000-8000-000000000001"); got != "a0a1b2c3d000040008000000000000001"[:32] {
		t.Errorf("%q", got)
	}
}

// TestCCMRelease: the release the AWS rules judge for, from the image tag;
// a tag that is no release (latest, a digest) is judged as the newest.
func TestCCMRelease(t *testing.T) {
	for tag, want := range map[string]string{"v1.30.4": "v1.30.4", "v1.26.0": "v1.26.0", "v1.30.4-eks-1": "v1.30.4-eks-1", "latest": releases.Newest(), "main": releases.Newest(), "v2.0.0": releases.Newest()} {
		s := healthyAWSWith(t, ccmImage("registry.example/provider-aws/cloud-controller-manager:"+tag))
		if got := ccmRelease(s); got != want {
			t.Errorf("%s: %s, want %s", tag, got, want)
		}
		_ = releases.IAMPolicy(ccmRelease(s)) // must not panic
	}
}

// rke2Snapshot is the sample chart rendered for RKE2, installed on the
// nodes, with edit applied to the CCM's pod spec (nil: none).
func rke2Snapshot(t *testing.T, nodes []corev1.Node, edit func(*corev1.PodSpec)) *check.Snapshot {
	t.Helper()
	o := renderer.DefaultOptions()
	o.Distro = distros.RKE2
	objs, err := check.DecodeManifests(checktest.Render(t, o))
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if ds, ok := obj.(*appsv1.DaemonSet); ok && edit != nil {
			edit(&ds.Spec.Template.Spec)
		}
	}
	s, err := check.ManifestSnapshot(objs, nodes, true)
	if err != nil {
		t.Fatal(err)
	}
	s.AWSSide = Side()
	s.Now, s.KubernetesVersion = time.Now(), "v1.34.10"
	return s
}

// ccmImage sets the image of the CCM's container.
func ccmImage(image string) func(*corev1.PodSpec) {
	return func(p *corev1.PodSpec) {
		for i := range p.Containers {
			if strings.Contains(p.Containers[i].Image, "cloud-controller-manager") {
				p.Containers[i].Image = image
			}
		}
	}
}

// TestComposed: a snapshot with the side gets its AWS summary.
func TestComposed(t *testing.T) {
	if r := check.Evaluate(healthyAWS(t)); r.AWS == nil || r.AWS.Instances["cp-1"] != "i-0123" {
		t.Errorf("the report's AWS summary: %+v", r.AWS)
	}
}

// ruleAreas fails the test for a finding of an AWS rule whose area is not
// the rule's (package check's TestMain holds its own rules to theirs).
// Side's rules are exactly Rules' AWS rules (TestSide).
func ruleAreas(t *testing.T, s *check.Snapshot) {
	t.Helper()
	v := check.NewView(s)
	for _, r := range check.Rules {
		if r.Kind != check.AWSRule {
			continue
		}
		for _, f := range Side().Rules[r.Name](v) {
			if f.Area != r.Area {
				t.Errorf("rule %s (area %s) gave a finding of area %q: %s", r.Name, r.Area, f.Area, f.Message)
			}
		}
	}
}

// TestSide: the side's rules are exactly the AWS rules of check.Rules.
func TestSide(t *testing.T) {
	if err := Side().Validate(); err != nil {
		t.Error(err)
	}
}
