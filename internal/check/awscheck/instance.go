package awscheck

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/kubeversion"
)

// instances reads the instances behind the nodes: by the instance IDs of
// their providerIDs (and names that are instance IDs), by the names the
// CCM looks up (private-dns-name), and, for a node found by neither, by
// its check.InternalIP, with filters of at most awsFilterValues values.
func (r *awsReader) instances(ctx context.Context) {
	var ids, names []string
	for i := range r.s.Nodes {
		n := &r.s.Nodes[i]
		if n.Spec.ProviderID != "" {
			if id, fargate, ok := check.InstanceIDOf(n.Spec.ProviderID); ok && !fargate {
				ids = append(ids, id)
			}
			continue
		}
		if id, ok := check.NameAsInstanceID(n.Name, true); ok {
			ids = append(ids, id)
			continue
		}
		names = append(names, n.Name)
	}
	seen := map[string]bool{}
	r.describeInstances(ctx, "instance-id", ids, seen)
	r.describeInstances(ctx, "private-dns-name", names, seen)
	var ips []string
	byDNS := map[string]bool{}
	for _, in := range r.acct.Instances {
		byDNS[in.PrivateDNSName] = true
	}
	for i := range r.s.Nodes {
		n := &r.s.Nodes[i]
		if n.Spec.ProviderID == "" && !byDNS[n.Name] && !strings.HasPrefix(n.Name, "i-") {
			if ip := check.InternalIP(n); ip != "" {
				ips = append(ips, ip)
			}
		}
	}
	r.describeInstances(ctx, "private-ip-address", ips, seen)
}

func (r *awsReader) describeInstances(ctx context.Context, filter string, values []string, seen map[string]bool) {
	values = slices.Compact(slices.Sorted(slices.Values(values)))
	for chunk := range slices.Chunk(values, awsFilterValues) {
		p := ec2.NewDescribeInstancesPaginator(r.ec2, &ec2.DescribeInstancesInput{
			Filters: []ec2types.Filter{{Name: aws.String(filter), Values: chunk}}, MaxResults: aws.Int32(1000)})
		if !ec2Pages(ctx, r, check.AreaInstance, "ec2:DescribeInstances", p, func(page *ec2.DescribeInstancesOutput) {
			for _, res := range page.Reservations {
				for _, in := range res.Instances {
					if id := aws.ToString(in.InstanceId); !seen[id] {
						seen[id] = true
						r.acct.Instances = append(r.acct.Instances, instanceOf(in))
					}
				}
			}
		}) {
			return
		}
	}
}

func instanceOf(in ec2types.Instance) check.AWSInstance {
	out := check.AWSInstance{ID: aws.ToString(in.InstanceId), PrivateDNSName: aws.ToString(in.PrivateDnsName), PrivateIP: aws.ToString(in.PrivateIpAddress),
		VPC: aws.ToString(in.VpcId), Subnet: aws.ToString(in.SubnetId), Tags: tagsOf(in.Tags)}
	if in.State != nil {
		out.State = string(in.State.Name)
	}
	if in.Placement != nil {
		out.Zone = aws.ToString(in.Placement.AvailabilityZone)
	}
	for _, g := range in.SecurityGroups {
		out.SecurityGroups = append(out.SecurityGroups, aws.ToString(g.GroupId))
	}
	if in.IamInstanceProfile != nil {
		out.Profile = aws.ToString(in.IamInstanceProfile.Arn)
	}
	if m := in.MetadataOptions; m != nil {
		out.HTTPTokens, out.HTTPEndpoint = string(m.HttpTokens), string(m.HttpEndpoint)
		out.HopLimit = aws.ToInt32(m.HttpPutResponseHopLimit)
	}
	return out
}

func tagsOf(tags []ec2types.Tag) map[string]string {
	if len(tags) == 0 {
		return nil
	}
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}

// vpcs reads the VPCs and their DHCP options' domain names.
func (r *awsReader) vpcs(ctx context.Context) {
	ids := r.vpcIDs
	if len(ids) == 0 {
		return
	}
	out, err := r.ec2.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{VpcIds: ids})
	if !r.done(check.AreaInstance, "ec2:DescribeVpcs", err) {
		return
	}
	var vpcs []check.AWSVPC
	dhcp := map[string][]int{}
	for _, v := range out.Vpcs {
		vpcs = append(vpcs, check.AWSVPC{ID: aws.ToString(v.VpcId)})
		if d := aws.ToString(v.DhcpOptionsId); d != "" && d != "default" {
			dhcp[d] = append(dhcp[d], len(vpcs)-1)
		}
	}
	if len(dhcp) > 0 {
		opts, err := r.ec2.DescribeDhcpOptions(ctx, &ec2.DescribeDhcpOptionsInput{DhcpOptionsIds: slices.Sorted(maps.Keys(dhcp))})
		if r.done(check.AreaInstance, "ec2:DescribeDhcpOptions", err) {
			for _, o := range opts.DhcpOptions {
				for _, c := range o.DhcpConfigurations {
					if aws.ToString(c.Key) == "domain-name" && len(c.Values) > 0 {
						for _, i := range dhcp[aws.ToString(o.DhcpOptionsId)] {
							vpcs[i].DHCPDomain = aws.ToString(c.Values[0].Value)
						}
					}
				}
			}
		}
	}
	r.mu.Lock()
	r.acct.VPCs = vpcs
	r.mu.Unlock()
}

// instanceIndex finds the instances read by ID and, the non-terminated
// ones (the CCM's filter), by private DNS name.
type instanceIndex struct {
	byID, byDNS map[string]check.AWSInstance
}

func indexInstances(ins []check.AWSInstance) instanceIndex {
	x := instanceIndex{byID: make(map[string]check.AWSInstance, len(ins)), byDNS: make(map[string]check.AWSInstance, len(ins))}
	for _, in := range ins {
		x.byID[in.ID] = in
		if in.PrivateDNSName != "" && in.State != "terminated" {
			x.byDNS[in.PrivateDNSName] = in
		}
	}
	return x
}

// ofNode is the instance the CCM finds for a node: by its providerID's
// instance ID, else by its name (an instance ID, or the private DNS name
// of a non-terminated instance; cuts: the release cuts a name that is an
// instance ID at the first dot). ok is false when none.
func (x instanceIndex) ofNode(n *corev1.Node, cuts bool) (check.AWSInstance, bool) {
	if n.Spec.ProviderID != "" {
		id, fargate, ok := check.InstanceIDOf(n.Spec.ProviderID)
		if !ok || fargate {
			return check.AWSInstance{}, false
		}
		in, ok := x.byID[id]
		return in, ok
	}
	if id, ok := check.NameAsInstanceID(n.Name, cuts); ok {
		in, ok := x.byID[id]
		return in, ok
	}
	in, ok := x.byDNS[n.Name]
	return in, ok
}

// cutsInstanceIDNames: the release reads a node name
// i-0abc.REGION.compute.internal as instance i-0abc (v1.26.11+, v1.27.2,
// v1.28.0+); v1.26.0 sends the whole name to EC2.
func cutsInstanceIDNames(v *check.View) bool {
	r, err := kubeversion.Parse(ccmRelease(v.Snapshot))
	if err != nil {
		return true
	}
	switch r.Minor() {
	case 26:
		return r.Patch() >= 11
	case 27:
		return r.Patch() == 2
	}
	return r.Minor() >= 28
}

// panicsOnProviderID: the release's node informer indexes the nodes by
// the instance ID of their providerID (InstanceIDIndexFunc, from v1.23.0)
// and returns the error of one it cannot read, on which client-go panics:
// the CCM exits whenever a node has such a providerID. v1.23.20, v1.24.19,
// v1.25.15, v1.26.11, v1.27.6 and v1.28.0 log it instead; fixed is the
// first such release of the minor.
func panicsOnProviderID(v *check.View) (fixed string, panics bool) {
	r, err := kubeversion.Parse(ccmRelease(v.Snapshot))
	if err != nil {
		return "", false
	}
	first, ok := map[uint]uint{23: 20, 24: 19, 25: 15, 26: 11, 27: 6}[r.Minor()]
	if !ok || r.Patch() >= first {
		return "", false
	}
	return fmt.Sprintf("v1.%d.%d", r.Minor(), first), true
}

// nodeInstance is a node and the instance the CCM finds for it.
type nodeInstance struct {
	node     *corev1.Node
	instance check.AWSInstance
}

// nodeInstances are the nodes whose instance the CCM finds.
func nodeInstances(v *check.View) []nodeInstance { return shared(v).nodes }

// instanceRule: per node, the instance the CCM looks up exists and runs,
// and the node's name or providerID is what the release looks up.
func instanceRule(v *check.View) []check.Finding {
	a := v.AWS
	if a == nil {
		return nil
	}
	if u := unread(a, check.AreaInstance); len(u) > 0 && u[0].Action == "ec2:DescribeInstances" {
		return unreadFindings(v, check.AreaInstance)
	}
	id, _ := clusterID(v)
	var issues []check.NodeIssue
	for i := range v.Nodes {
		n := v.Nodes[i].Node()
		if is, ok := instanceIssue(v, n, id); ok {
			issues = append(issues, is)
		}
	}
	return append(check.GroupNodes(issues), unreadFindings(v, check.AreaInstance)...)
}

func instanceIssue(v *check.View, n *corev1.Node, clusterID string) (check.NodeIssue, bool) {
	a := v.AWS
	is := check.NodeIssue{Node: n.Name, Finding: check.Finding{Area: check.AreaInstance}}
	tag := ccmRelease(v.Snapshot)
	if pid := n.Spec.ProviderID; pid != "" {
		iid, fargate, ok := check.InstanceIDOf(pid)
		switch {
		case !ok:
			is.Severity = check.Error
			is.Message = fmt.Sprintf("its providerID %q names no instance: the CCM refuses it (Invalid format for AWS instance) and never initialises the node", pid)
			is.Fix = "a providerID cannot be changed: delete the Node object and restart its kubelet without --provider-id (the CCM then sets aws:///ZONE/INSTANCE-ID)"
			if fixed, panics := panicsOnProviderID(v); panics {
				is.Message = fmt.Sprintf("its providerID %q names no instance: CCM %s's node informer panics on it (unable to calculate an index entry on index \"instanceID\": Invalid format for AWS instance), so the CCM exits at start, and on every restart, and initialises no node at all", pid, tag)
				is.Fix += "; " + fixed + " and later skip such a node instead of exiting"
			}
			if in, ok := instanceAt(a, check.InternalIP(n)); ok {
				is.Fix += "; the instance at " + in.PrivateIP + " is " + in.ID
			}
			return is, true
		case fargate:
			return is, false
		}
		in, found := shared(v).index.byID[iid]
		switch {
		case !found || in.State == "terminated":
			is.Severity = check.Error
			is.Message = fmt.Sprintf("instance %s of its providerID is not in %s, or is terminated: the CCM's node lifecycle controller deletes the node", iid, a.Region)
			is.Fix = "check the account and region (--aws-region), or remove the node"
		case in.State != "running" && in.State != "pending":
			is.Severity = check.Warning
			is.Message = fmt.Sprintf("instance %s is %s", iid, in.State)
			is.Fix = "start it, or remove the node"
		default:
			is.Severity = check.OK
			is.Message = "its providerID names a running instance"
		}
		return is, true
	}
	if name, isID := check.NameAsInstanceID(n.Name, cutsInstanceIDNames(v)); isID {
		if strings.Contains(name, ".") {
			is.Severity = check.Error
			is.Message = fmt.Sprintf("CCM %s looks the name up whole as an instance ID, which EC2 refuses (releases from v1.26.11, v1.27.2 and v1.28.0 cut it at the first dot)", tag)
			is.Fix = "use a later CCM release of the cluster's minor"
			return is, true
		}
		in, found := shared(v).index.byID[name]
		if !found || in.State == "terminated" {
			is.Severity = check.Error
			is.Message = fmt.Sprintf("the CCM reads its name as instance %s, which is not in %s", name, a.Region)
			is.Fix = "check the account and region (--aws-region)"
			return is, true
		}
		is.Severity, is.Message = check.OK, "its name is its instance's ID, which the CCM looks up"
		return is, true
	}
	if in, ok := shared(v).index.byDNS[n.Name]; ok {
		if clusterID != "" && !hasClusterTag(in.Tags, clusterID) {
			is.Severity = check.Error
			is.Message = fmt.Sprintf("its instance lacks the tag %s%s: the CCM looks a node up by name among the cluster's instances only, so it never initialises this node", tagClusterPrefix, clusterID)
			is.Note = in.ID
			is.FixFor = func(ids []string) string {
				return fmt.Sprintf("aws ec2 create-tags --resources %s --tags Key=%s%s,Value=owned", strings.Join(ids, " "), tagClusterPrefix, clusterID)
			}
			return is, true
		}
		is.Severity, is.Message = check.OK, "its name is its instance's private DNS name, which the CCM looks up"
		return is, true
	}
	is.Severity = check.Error
	ip := check.InternalIP(n)
	if in, ok := instanceAt(a, ip); ok {
		is.Message = fmt.Sprintf("no instance has the private DNS name the CCM looks up (the node's name); its check.InternalIP %s is instance %s's, named %s", ip, in.ID, in.PrivateDNSName)
		is.One = is.Message
		is.Message = "no instance has the private DNS name the CCM looks up (the node's name); the instance at its check.InternalIP has another"
		if d := dhcpDomain(a, in.VPC); d != "" && strings.HasSuffix(n.Name, "."+d) {
			is.Message += ": the VPC's DHCP options set domain-name " + d + ", which named the host"
			is.One += ": the VPC's DHCP options set domain-name " + d + ", which named the host"
		}
		is.Note = n.Name + " → " + in.PrivateDNSName
		is.FixFor = func(notes []string) string {
			return "name each node as its instance (" + check.SomeOf(notes) + "), or give it the providerID aws:///ZONE/INSTANCE-ID at registration; the node area says how on this distribution"
		}
		return is, true
	}
	is.Message = fmt.Sprintf("no instance in %s has its name as private DNS name, nor its check.InternalIP: the CCM never initialises it", a.Region)
	is.Fix = check.FixInstanceRegion
	return is, true
}

func instanceAt(a *check.AWSAccount, ip string) (check.AWSInstance, bool) {
	if ip == "" {
		return check.AWSInstance{}, false
	}
	for _, in := range a.Instances {
		if in.PrivateIP == ip && in.State != "terminated" {
			return in, true
		}
	}
	return check.AWSInstance{}, false
}

// dhcpDomain is a VPC's DHCP options' domain name when it is not EC2's
// own (REGION.compute.internal, ec2.internal).
func dhcpDomain(a *check.AWSAccount, vpc string) string {
	for _, x := range a.VPCs {
		if x.ID == vpc && x.DHCPDomain != "" && x.DHCPDomain != "ec2.internal" && !strings.HasSuffix(x.DHCPDomain, ".compute.internal") {
			return x.DHCPDomain
		}
	}
	return ""
}
