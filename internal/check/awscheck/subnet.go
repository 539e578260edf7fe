package awscheck

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
)

func vpcFilter(ids []string) []ec2types.Filter {
	return []ec2types.Filter{{Name: aws.String("vpc-id"), Values: ids}}
}

// subnets reads the subnets of the instances' VPCs: one paged
// DescribeSubnets for them all.
func (r *awsReader) subnets(ctx context.Context) {
	vpcRead(ctx, r, check.AreaSubnet, "ec2:DescribeSubnets", ec2.NewDescribeSubnetsPaginator(r.ec2, &ec2.DescribeSubnetsInput{Filters: vpcFilter(r.vpcIDs)}),
		func(page *ec2.DescribeSubnetsOutput) (out []check.AWSSubnet) {
			for _, s := range page.Subnets {
				out = append(out, check.AWSSubnet{ID: aws.ToString(s.SubnetId), VPC: aws.ToString(s.VpcId), Zone: aws.ToString(s.AvailabilityZone), Tags: tagsOf(s.Tags)})
			}
			return out
		}, &r.acct.Subnets)
}

// routeTables reads the route tables of the instances' VPCs.
func (r *awsReader) routeTables(ctx context.Context) {
	vpcRead(ctx, r, check.AreaSubnet, "ec2:DescribeRouteTables", ec2.NewDescribeRouteTablesPaginator(r.ec2, &ec2.DescribeRouteTablesInput{Filters: vpcFilter(r.vpcIDs)}),
		func(page *ec2.DescribeRouteTablesOutput) (out []check.AWSRouteTable) {
			for _, t := range page.RouteTables {
				rt := check.AWSRouteTable{ID: aws.ToString(t.RouteTableId), VPC: aws.ToString(t.VpcId)}
				for _, a := range t.Associations {
					if aws.ToBool(a.Main) {
						rt.Main = true
					}
					if s := aws.ToString(a.SubnetId); s != "" {
						rt.Subnets = append(rt.Subnets, s)
					}
				}
				for _, route := range t.Routes {
					if g := aws.ToString(route.GatewayId); g != "" {
						rt.Gateways = append(rt.Gateways, g)
					}
				}
				out = append(out, rt)
			}
			return out
		}, &r.acct.RouteTables)
}

// zones reads the zones' types (the CCM from v1.26.1 leaves a load
// balancer out of local, wavelength and outpost zones).
func (r *awsReader) zones(ctx context.Context) {
	out, err := r.ec2.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{})
	if !r.done(check.AreaSubnet, "ec2:DescribeAvailabilityZones", err) {
		return
	}
	types := map[string]string{}
	for _, z := range out.AvailabilityZones {
		types[aws.ToString(z.ZoneName)] = aws.ToString(z.ZoneType)
	}
	r.mu.Lock()
	r.acct.ZoneTypes = types
	r.mu.Unlock()
}

// subnetChoice is the subnet the CCM picks for a load balancer in a zone.
type subnetChoice struct {
	subnet check.AWSSubnet
	public bool
}

// elbSubnets is findELBSubnets of the release for a VPC: per zone, the
// subnet an internet-facing (internal false) or internal load balancer
// goes to, and why not where a subnet has no route table.
func elbSubnets(v *check.View, vpc, clusterID string, internal bool) (map[string]subnetChoice, []string) {
	a := v.AWS
	var cands []check.AWSSubnet
	for _, s := range a.Subnets {
		if s.VPC == vpc && (hasClusterTag(s.Tags, clusterID) || !hasAnyClusterKey(s.Tags)) {
			cands = append(cands, s)
		}
	}
	if len(cands) == 0 {
		// The CCM falls back to its own subnet.
		if own := ownSubnet(v, vpc); own != "" {
			for _, s := range a.Subnets {
				if s.ID == own {
					cands = append(cands, s)
				}
			}
		}
	}
	roleTag := tagRoleELB
	if internal {
		roleTag = tagRoleInternal
	}
	zoneTypes := releases.HasAction(ccmRelease(v.Snapshot), releases.ActionDescribeAZs)
	choice := map[string]subnetChoice{}
	var problems []string
	for _, s := range cands {
		if zoneTypes {
			if t, ok := a.ZoneTypes[s.Zone]; ok && t != "availability-zone" {
				continue
			}
		}
		public, ok := subnetPublic(a, s)
		if !ok {
			problems = append(problems, "could not locate routing table for subnet "+s.ID)
			continue
		}
		if !internal && !public {
			continue
		}
		cur, has := choice[s.Zone]
		if !has {
			choice[s.Zone] = subnetChoice{s, public}
			continue
		}
		_, curRole := cur.subnet.Tags[roleTag]
		_, newRole := s.Tags[roleTag]
		switch {
		case curRole != newRole:
			if newRole {
				choice[s.Zone] = subnetChoice{s, public}
			}
		case hasClusterTag(cur.subnet.Tags, clusterID) != hasClusterTag(s.Tags, clusterID):
			if hasClusterTag(s.Tags, clusterID) {
				choice[s.Zone] = subnetChoice{s, public}
			}
		case s.ID < cur.subnet.ID:
			choice[s.Zone] = subnetChoice{s, public}
		}
	}
	return choice, problems
}

// ownSubnet is the subnet the CCM runs in: the cloud config's SubnetID,
// else a control-plane instance's.
func ownSubnet(v *check.View, vpc string) string {
	if v.CloudConfig != nil {
		if s := check.GlobalSetting(v.CloudConfig.Text, "SubnetID"); s != "" {
			return s
		}
	}
	for _, ni := range nodeInstances(v) {
		if cp, _, _ := check.IsControlPlane(ni.node); cp && ni.instance.VPC == vpc {
			return ni.instance.Subnet
		}
	}
	return ""
}

// subnetPublic is isSubnetPublic: the subnet's route table (the one
// associated with it, else the VPC's main one) routes to an internet
// gateway. ok is false when it has none.
func subnetPublic(a *check.AWSAccount, s check.AWSSubnet) (public, ok bool) {
	var table *check.AWSRouteTable
	for i := range a.RouteTables {
		if slices.Contains(a.RouteTables[i].Subnets, s.ID) {
			table = &a.RouteTables[i]
		}
	}
	if table == nil {
		for i := range a.RouteTables {
			if a.RouteTables[i].VPC == s.VPC && a.RouteTables[i].Main {
				table = &a.RouteTables[i]
			}
		}
	}
	if table == nil {
		return false, false
	}
	for _, g := range table.Gateways {
		if strings.HasPrefix(g, "igw") {
			return true, true
		}
	}
	return false, true
}

// subnetRule: per VPC and zone of the nodes, the subnet the CCM picks for
// an internet-facing and an internal load balancer, and untagged subnets
// of a VPC other clusters share.
func subnetRule(v *check.View) []check.Finding {
	a := v.AWS
	if a == nil {
		return nil
	}
	if u := unread(a, check.AreaSubnet); len(u) > 0 {
		return unreadFindings(v, check.AreaSubnet)
	}
	id, _ := clusterID(v)
	if id == "" {
		return nil
	}
	zonesOf := map[string][]string{}
	for _, ni := range nodeInstances(v) {
		if vpc := ni.instance.VPC; vpc != "" && !slices.Contains(zonesOf[vpc], ni.instance.Zone) {
			zonesOf[vpc] = append(zonesOf[vpc], ni.instance.Zone)
		}
	}
	var out []check.Finding
	for _, vpc := range slices.Sorted(maps.Keys(zonesOf)) {
		zones := zonesOf[vpc]
		sort.Strings(zones)
		others := map[string]bool{}
		for _, s := range a.Subnets {
			if s.VPC == vpc && !hasClusterTag(s.Tags, id) {
				for _, o := range clusterIDsOf(s.Tags) {
					others[o] = true
				}
			}
		}
		for _, internal := range []bool{false, true} {
			kind, role := "internet-facing", tagRoleELB
			if internal {
				kind, role = "internal", tagRoleInternal
			}
			choice, problems := elbSubnets(v, vpc, id, internal)
			for _, p := range problems {
				out = append(out, check.Finding{Area: check.AreaSubnet, Severity: check.Error, Subject: vpc,
					Message: p + ": the CCM fails every " + kind + " load balancer", Fix: "associate the subnet with a route table, or give the VPC a main one"})
			}
			if len(problems) > 0 {
				continue
			}
			if len(choice) == 0 {
				what := "a subnet of " + vpc + " tagged for the cluster (or for none)"
				if !internal {
					what = "a public subnet (routed to an internet gateway) of " + vpc + " tagged for the cluster (or for none)"
				}
				out = append(out, check.Finding{Area: check.AreaSubnet, Severity: check.Error, Subject: vpc,
					Message: "no subnet for an " + kind + " load balancer: the CCM fails every one (could not find any suitable subnets for creating the ELB)",
					Fix:     fmt.Sprintf("give each zone of the nodes %s, with the tags %s%s=shared and %s=1", what, tagClusterPrefix, id, role)})
				continue
			}
			var picked, missing, shared []string
			for _, z := range zones {
				c, ok := choice[z]
				if !ok {
					missing = append(missing, z)
					continue
				}
				why := ""
				if _, ok := c.subnet.Tags[role]; ok {
					why = ", role tag"
				}
				picked = append(picked, z+" → "+c.subnet.ID+why)
				if len(others) > 0 && !hasAnyClusterKey(c.subnet.Tags) {
					shared = append(shared, c.subnet.ID)
				}
			}
			if len(picked) > 0 {
				out = append(out, check.Finding{Area: check.AreaSubnet, Severity: check.OK, Subject: vpc, Message: kind + " load balancers go to " + strings.Join(picked, ", ")})
			}
			if len(missing) > 0 {
				out = append(out, check.Finding{Area: check.AreaSubnet, Severity: check.Warning, Subject: vpc,
					Message: fmt.Sprintf("no subnet for an %s load balancer in %s, where nodes run: its load balancers do not reach that zone", kind, check.JoinAnd(missing)),
					Fix:     fmt.Sprintf("add a subnet there tagged %s%s=shared and %s=1", tagClusterPrefix, id, role)})
			}
			if len(shared) > 0 {
				out = append(out, check.Finding{Area: check.AreaSubnet, Severity: check.Warning, Subject: check.JoinAnd(shared),
					Message: fmt.Sprintf("untagged, in a VPC where subnets are tagged for other clusters (%s): every cluster's CCM may pick it for its %s load balancers", strings.Join(slices.Sorted(maps.Keys(others)), ", "), kind),
					Fix:     fmt.Sprintf("tag the subnets this cluster's load balancers should use %s%s=shared, and the others for their clusters", tagClusterPrefix, id)})
			}
		}
	}
	return out
}
