package moto

import (
	"context"
	"fmt"
)

// Cluster names a Kubernetes cluster in AWS: its ID (the value of
// kubernetes.io/cluster/<ID> tags and the CCM's KubernetesClusterID), and
// the zone its instances run in.
type Cluster struct {
	ID   string // e2e
	Zone string // us-west-2a
}

// Region is the zone's region.
func (c Cluster) Region() string { return c.Zone[:len(c.Zone)-1] }

// Tag is the tag key that marks a resource as the cluster's.
func (c Cluster) Tag() string { return "kubernetes.io/cluster/" + c.ID }

// Network is what a cluster's instances run in.
type Network struct {
	VPC, Subnet, SecurityGroup, InternetGateway, RouteTable string
}

// Instance is an EC2 instance of the cluster.
type Instance struct {
	Name           string // its Name tag: the fixture it stands for
	ID             string // i-...
	PrivateDNSName string // ip-10-0-1-23.us-west-2.compute.internal: the node name the CCM looks up
	PrivateIP      string
	Zone           string
}

// ProviderID is the node providerID the AWS CCM gives the instance.
func (i Instance) ProviderID() string { return "aws:///" + i.Zone + "/" + i.ID }

// SeedNetwork creates the cluster's network as a cluster on AWS has it: a
// VPC with one public subnet in the cluster's zone (a route to an internet
// gateway: where the CCM puts an internet-facing load balancer) and a
// security group for its instances, each tagged as the cluster's.
func (s *Server) SeedNetwork(ctx context.Context, c Cluster) (Network, error) {
	var n Network
	tags := func(kind string) []map[string]any {
		return []map[string]any{{"ResourceType": kind, "Tags": []map[string]string{
			{"Key": c.Tag(), "Value": "owned"}, {"Key": "Name", "Value": c.ID},
		}}}
	}
	var vpc struct{ Vpc struct{ VpcId string } }
	if err := s.Call(ctx, "ec2", "CreateVpc", map[string]any{"CidrBlock": "10.0.0.0/16", "TagSpecifications": tags("vpc")}, &vpc); err != nil {
		return n, err
	}
	n.VPC = vpc.Vpc.VpcId
	var subnet struct{ Subnet struct{ SubnetId string } }
	subnetTags := tags("subnet")
	subnetTags[0]["Tags"] = append(subnetTags[0]["Tags"].([]map[string]string), map[string]string{"Key": "kubernetes.io/role/elb", "Value": "1"})
	if err := s.Call(ctx, "ec2", "CreateSubnet", map[string]any{
		"VpcId": n.VPC, "CidrBlock": "10.0.1.0/24", "AvailabilityZone": c.Zone, "TagSpecifications": subnetTags,
	}, &subnet); err != nil {
		return n, err
	}
	n.Subnet = subnet.Subnet.SubnetId
	var igw struct {
		InternetGateway struct{ InternetGatewayId string }
	}
	if err := s.Call(ctx, "ec2", "CreateInternetGateway", map[string]any{"TagSpecifications": tags("internet-gateway")}, &igw); err != nil {
		return n, err
	}
	n.InternetGateway = igw.InternetGateway.InternetGatewayId
	if err := s.Call(ctx, "ec2", "AttachInternetGateway", map[string]any{"InternetGatewayId": n.InternetGateway, "VpcId": n.VPC}, nil); err != nil {
		return n, err
	}
	var rt struct{ RouteTable struct{ RouteTableId string } }
	if err := s.Call(ctx, "ec2", "CreateRouteTable", map[string]any{"VpcId": n.VPC, "TagSpecifications": tags("route-table")}, &rt); err != nil {
		return n, err
	}
	n.RouteTable = rt.RouteTable.RouteTableId
	if err := s.Call(ctx, "ec2", "CreateRoute", map[string]any{
		"RouteTableId": n.RouteTable, "DestinationCidrBlock": "0.0.0.0/0", "GatewayId": n.InternetGateway,
	}, nil); err != nil {
		return n, err
	}
	if err := s.Call(ctx, "ec2", "AssociateRouteTable", map[string]any{"RouteTableId": n.RouteTable, "SubnetId": n.Subnet}, nil); err != nil {
		return n, err
	}
	var sg struct{ GroupId string }
	if err := s.Call(ctx, "ec2", "CreateSecurityGroup", map[string]any{
		"GroupName": c.ID + "-nodes", "Description": "the cluster's nodes", "VpcId": n.VPC, "TagSpecifications": tags("security-group"),
	}, &sg); err != nil {
		return n, err
	}
	n.SecurityGroup = sg.GroupId
	return n, nil
}

// RunInstances starts one instance per name in the network's subnet and
// security group, tagged as the cluster's, and returns them in order.
func (s *Server) RunInstances(ctx context.Context, c Cluster, n Network, names ...string) ([]Instance, error) {
	out := make([]Instance, 0, len(names))
	for _, name := range names {
		var res struct {
			Instances []struct {
				InstanceId, PrivateDnsName, PrivateIpAddress string
				Placement                                    struct{ AvailabilityZone string }
			}
		}
		if err := s.Call(ctx, "ec2", "RunInstances", map[string]any{
			"ImageId": "ami-e2e", "InstanceType": "t3.medium", "MinCount": 1, "MaxCount": 1,
			"SubnetId": n.Subnet, "SecurityGroupIds": []string{n.SecurityGroup},
			"TagSpecifications": []map[string]any{{"ResourceType": "instance", "Tags": []map[string]string{
				{"Key": c.Tag(), "Value": "owned"}, {"Key": "Name", "Value": name},
			}}},
		}, &res); err != nil {
			return nil, err
		}
		if len(res.Instances) != 1 {
			return nil, fmt.Errorf("moto: RunInstances %s: %d instances", name, len(res.Instances))
		}
		i := res.Instances[0]
		out = append(out, Instance{Name: name, ID: i.InstanceId, PrivateDNSName: i.PrivateDnsName,
			PrivateIP: i.PrivateIpAddress, Zone: i.Placement.AvailabilityZone})
	}
	return out, nil
}

// LoadBalancer is a Classic ELB.
type LoadBalancer struct {
	LoadBalancerName, DNSName, Scheme, VPCId string
	Instances                                []struct{ InstanceId string }
	ListenerDescriptions                     []struct {
		Listener struct {
			Protocol         string
			LoadBalancerPort int
			InstancePort     int
		}
	}
	HealthCheck struct{ Target string }
	Subnets     []string
	CreatedTime string
}

// LoadBalancers returns the Classic ELBs.
func (s *Server) LoadBalancers(ctx context.Context) ([]LoadBalancer, error) {
	var out struct{ LoadBalancerDescriptions []LoadBalancer }
	err := s.Call(ctx, "elb", "DescribeLoadBalancers", map[string]any{}, &out)
	return out.LoadBalancerDescriptions, err
}
