package check

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
)

// The AWS rules (check --aws): each judges the account as the CCM release
// that runs, or will run, would use it, and returns nothing without --aws.

// cutsInstanceIDNames: the release reads a node name
// i-0abc.REGION.compute.internal as instance i-0abc (v1.26.11+, v1.27.2,
// v1.28.0+); v1.26.0 sends the whole name to EC2.
func (v *View) cutsInstanceIDNames() bool {
	r, err := version.ParseGeneric(v.ccmRelease())
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
func (v *View) panicsOnProviderID() (fixed string, panics bool) {
	r, err := version.ParseGeneric(v.ccmRelease())
	if err != nil || r.Major() != 1 {
		return "", false
	}
	first, ok := map[uint]uint{23: 20, 24: 19, 25: 15, 26: 11, 27: 6}[r.Minor()]
	if !ok || r.Patch() >= first {
		return "", false
	}
	return fmt.Sprintf("v1.%d.%d", r.Minor(), first), true
}

// unreadFindings say what an area could not read, and what check needs.
func (v *View) unreadFindings(area string) []Finding {
	var out []Finding
	for _, u := range v.AWS.unread(area) {
		f := Finding{Area: area, Severity: Info, Subject: u.Action, Message: "could not read: " + strings.TrimPrefix(u.Code+": ", ": ") + u.Message}
		if u.Denied {
			f.Message = "could not read: AWS refused check " + u.Action + " (" + u.Code + ")"
			f.Fix = "grant " + u.Action + " to the identity check runs as (" + orUnknown(v.AWS.Caller) + "); docs/check.md has the read-only policy check --aws needs"
		}
		out = append(out, f)
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// awsAccountRule says which account and region check read, where from.
func awsAccountRule(v *View) []Finding {
	a := v.AWS
	if a == nil {
		return nil
	}
	msg := "region " + a.Region + " (from " + map[string]string{"flag": "--aws-region", "nodes": "the nodes", "sdk": "the AWS configuration"}[a.RegionFrom] + ")"
	if a.Caller != "" {
		msg += ", read as " + a.Caller
	}
	if len(a.Endpoints) > 0 {
		var eps []string
		for _, s := range slices.Sorted(maps.Keys(a.Endpoints)) {
			eps = append(eps, s+" at "+a.Endpoints[s])
		}
		msg += "; endpoints: " + strings.Join(eps, ", ")
	}
	n := 0
	for _, c := range a.Calls {
		n += c
	}
	msg += fmt.Sprintf("; %d read-only calls", n)
	return append([]Finding{{Area: AreaAWS, Severity: Info, Message: msg}}, v.unreadFindings(AreaAWS)...)
}

// awsView is what the AWS rules share, worked out once per view: the
// instances by ID and name, the nodes whose instance the CCM finds, and
// the cluster ID.
type awsView struct {
	index                instanceIndex
	nodes                []nodeInstance
	clusterID, clusterBy string
}

// newAWSView works out the AWS rules' shared view of an account.
func (v *View) newAWSView() *awsView {
	av := &awsView{index: indexInstances(v.AWS.Instances)}
	cuts := v.cutsInstanceIDNames()
	for i := range v.Nodes {
		n := v.Nodes[i].node
		if in, ok := av.index.ofNode(n, cuts); ok {
			av.nodes = append(av.nodes, nodeInstance{n, in})
		}
	}
	av.clusterID, av.clusterBy = v.findClusterID(av.nodes)
	return av
}

// clusterID is the cluster ID the CCM runs with, and where it comes from.
func (v *View) clusterID() (id, from string) { return v.aws.clusterID, v.aws.clusterBy }

// findClusterID is the cluster ID the CCM runs with: the cloud config's
// KubernetesClusterID or KubernetesClusterTag, else the one the nodes'
// instances carry most. from says which.
func (v *View) findClusterID(nodes []nodeInstance) (id, from string) {
	if v.CloudConfig != nil {
		if id := globalSetting(v.CloudConfig.Text, "KubernetesClusterID"); id != "" {
			return id, "the cloud config's KubernetesClusterID"
		}
		if id := globalSetting(v.CloudConfig.Text, "KubernetesClusterTag"); id != "" {
			return id, "the cloud config's KubernetesClusterTag"
		}
	}
	count := map[string]int{}
	for _, in := range nodes {
		for _, id := range clusterIDsOf(in.instance.Tags) {
			count[id]++
		}
	}
	best := ""
	for id, n := range count {
		if n > count[best] || n == count[best] && id < best {
			best = id
		}
	}
	if best == "" {
		return "", ""
	}
	return best, "the instances' tags"
}

// nodeInstance is a node and the instance the CCM finds for it.
type nodeInstance struct {
	node     *corev1.Node
	instance AWSInstance
}

// nodeInstances are the nodes whose instance the CCM finds.
func (v *View) nodeInstances() []nodeInstance { return v.aws.nodes }

// instanceRule: per node, the instance the CCM looks up exists and runs,
// and the node's name or providerID is what the release looks up.
func instanceRule(v *View) []Finding {
	a := v.AWS
	if a == nil {
		return nil
	}
	if u := a.unread(AreaInstance); len(u) > 0 && u[0].Action == "ec2:DescribeInstances" {
		return v.unreadFindings(AreaInstance)
	}
	id, _ := v.clusterID()
	var issues []nodeIssue
	for i := range v.Nodes {
		n := v.Nodes[i].node
		if is, ok := v.instanceIssue(n, id); ok {
			issues = append(issues, is)
		}
	}
	return append(groupNodes(issues), v.unreadFindings(AreaInstance)...)
}

func (v *View) instanceIssue(n *corev1.Node, clusterID string) (nodeIssue, bool) {
	a := v.AWS
	is := nodeIssue{node: n.Name, Finding: Finding{Area: AreaInstance}}
	tag := v.ccmRelease()
	if pid := n.Spec.ProviderID; pid != "" {
		iid, fargate, ok := instanceIDOf(pid)
		switch {
		case !ok:
			is.Severity = Error
			is.Message = fmt.Sprintf("its providerID %q names no instance: the CCM refuses it (Invalid format for AWS instance) and never initialises the node", pid)
			is.Fix = "a providerID cannot be changed: delete the Node object and restart its kubelet without --provider-id (the CCM then sets aws:///ZONE/INSTANCE-ID)"
			if fixed, panics := v.panicsOnProviderID(); panics {
				is.Message = fmt.Sprintf("its providerID %q names no instance: CCM %s's node informer panics on it (unable to calculate an index entry on index \"instanceID\": Invalid format for AWS instance), so the CCM exits at start, and on every restart, and initialises no node at all", pid, tag)
				is.Fix += "; " + fixed + " and later skip such a node instead of exiting"
			}
			if in, ok := a.instanceAt(internalIP(n)); ok {
				is.Fix += "; the instance at " + in.PrivateIP + " is " + in.ID
			}
			return is, true
		case fargate:
			return is, false
		}
		in, found := v.aws.index.byID[iid]
		switch {
		case !found || in.State == "terminated":
			is.Severity = Error
			is.Message = fmt.Sprintf("instance %s of its providerID is not in %s, or is terminated: the CCM's node lifecycle controller deletes the node", iid, a.Region)
			is.Fix = "check the account and region (--aws-region), or remove the node"
		case in.State != "running" && in.State != "pending":
			is.Severity = Warning
			is.Message = fmt.Sprintf("instance %s is %s", iid, in.State)
			is.Fix = "start it, or remove the node"
		default:
			is.Severity = OK
			is.Message = "its providerID names a running instance"
		}
		return is, true
	}
	if name, isID := nameAsInstanceID(n.Name, v.cutsInstanceIDNames()); isID {
		if strings.Contains(name, ".") {
			is.Severity = Error
			is.Message = fmt.Sprintf("CCM %s looks the name up whole as an instance ID, which EC2 refuses (releases from v1.26.11, v1.27.2 and v1.28.0 cut it at the first dot)", tag)
			is.Fix = "use a later CCM release of the cluster's minor"
			return is, true
		}
		in, found := v.aws.index.byID[name]
		if !found || in.State == "terminated" {
			is.Severity = Error
			is.Message = fmt.Sprintf("the CCM reads its name as instance %s, which is not in %s", name, a.Region)
			is.Fix = "check the account and region (--aws-region)"
			return is, true
		}
		is.Severity, is.Message = OK, "its name is its instance's ID, which the CCM looks up"
		return is, true
	}
	if in, ok := v.aws.index.byDNS[n.Name]; ok {
		if clusterID != "" && !hasClusterTag(in.Tags, clusterID) {
			is.Severity = Error
			is.Message = fmt.Sprintf("its instance lacks the tag %s%s: the CCM looks a node up by name among the cluster's instances only, so it never initialises this node", tagClusterPrefix, clusterID)
			is.note = in.ID
			is.fix = func(ids []string) string {
				return fmt.Sprintf("aws ec2 create-tags --resources %s --tags Key=%s%s,Value=owned", strings.Join(ids, " "), tagClusterPrefix, clusterID)
			}
			return is, true
		}
		is.Severity, is.Message = OK, "its name is its instance's private DNS name, which the CCM looks up"
		return is, true
	}
	is.Severity = Error
	ip := internalIP(n)
	if in, ok := a.instanceAt(ip); ok {
		is.Message = fmt.Sprintf("no instance has the private DNS name the CCM looks up (the node's name); its InternalIP %s is instance %s's, named %s", ip, in.ID, in.PrivateDNSName)
		is.one = is.Message
		is.Message = "no instance has the private DNS name the CCM looks up (the node's name); the instance at its InternalIP has another"
		if d := a.dhcpDomain(in.VPC); d != "" && strings.HasSuffix(n.Name, "."+d) {
			is.Message += ": the VPC's DHCP options set domain-name " + d + ", which named the host"
			is.one += ": the VPC's DHCP options set domain-name " + d + ", which named the host"
		}
		is.note = n.Name + " → " + in.PrivateDNSName
		is.fix = func(notes []string) string {
			return "name each node as its instance (" + someOf(notes) + "), or give it the providerID aws:///ZONE/INSTANCE-ID at registration; the node area says how on this distribution"
		}
		return is, true
	}
	is.Message = fmt.Sprintf("no instance in %s has its name as private DNS name, nor its InternalIP: the CCM never initialises it", a.Region)
	is.Fix = fixInstanceRegion
	return is, true
}

func (a *AWSAccount) instanceAt(ip string) (AWSInstance, bool) {
	if ip == "" {
		return AWSInstance{}, false
	}
	for _, in := range a.Instances {
		if in.PrivateIP == ip && in.State != "terminated" {
			return in, true
		}
	}
	return AWSInstance{}, false
}

// dhcpDomain is a VPC's DHCP options' domain name when it is not EC2's
// own (REGION.compute.internal, ec2.internal).
func (a *AWSAccount) dhcpDomain(vpc string) string {
	for _, x := range a.VPCs {
		if x.ID == vpc && x.DHCPDomain != "" && x.DHCPDomain != "ec2.internal" && !strings.HasSuffix(x.DHCPDomain, ".compute.internal") {
			return x.DHCPDomain
		}
	}
	return ""
}

// clusterIDRule: every node's instance carries the cluster's tag, the
// cloud config's two settings agree, and the CCM can find an ID at all.
func clusterIDRule(v *View) []Finding {
	a := v.AWS
	if a == nil || len(a.unread(AreaInstance)) > 0 && len(a.Instances) == 0 {
		return nil
	}
	var out []Finding
	if cc := v.CloudConfig; cc != nil {
		idSet, tagSet := globalSetting(cc.Text, "KubernetesClusterID"), globalSetting(cc.Text, "KubernetesClusterTag")
		if idSet != "" && tagSet != "" && idSet != tagSet {
			out = append(out, Finding{Area: AreaClusterID, Severity: Error, Subject: "cloud config " + cc.From,
				Message: fmt.Sprintf("KubernetesClusterID %q and KubernetesClusterTag %q differ: the CCM exits at start (clusterID tags did not match)", idSet, tagSet),
				Fix:     "keep KubernetesClusterID alone"})
		}
	}
	id, from := v.clusterID()
	nis := v.nodeInstances()
	if id == "" {
		if len(nis) == 0 {
			return out
		}
		return append(out, Finding{Area: AreaClusterID, Severity: Error,
			Message: "no instance of a node carries kubernetes.io/cluster/<ID> (or KubernetesCluster) and the cloud config names no KubernetesClusterID: the CCM exits at start (AWS cloud failed to find ClusterID)",
			Fix:     fixClusterTags})
	}
	missing := Finding{Area: AreaClusterID, Severity: Error,
		Message: fmt.Sprintf("no cluster tag (cluster %s, from %s): the CCM finds such an instance by name only when tagged, and leaves it out of every load balancer and its security group rules", id, from)}
	tagFix := func(ids []string) string {
		return fmt.Sprintf("aws ec2 create-tags --resources %s --tags Key=%s%s,Value=owned", strings.Join(ids, " "), tagClusterPrefix, id)
	}
	other := Finding{Area: AreaClusterID, Severity: Error,
		Message: fmt.Sprintf("tagged for another cluster than %s (from %s): the CCM leaves it out as it does an untagged one", id, from),
		Fix:     "tag it for cluster " + id + ", or correct KubernetesClusterID in the cloud config"}
	several := Finding{Area: AreaClusterID, Severity: Error,
		Message: "a control-plane instance tagged for several clusters: without KubernetesClusterID in the cloud config the CCM reads its own instance's tags and exits at start (Found multiple cluster tags)",
		Fix:     "set KubernetesClusterID = " + id + " in the cloud config, or remove the other cluster's tag"}
	var issues []nodeIssue
	for _, ni := range nis {
		ids := clusterIDsOf(ni.instance.Tags)
		switch {
		case hasClusterTag(ni.instance.Tags, id):
			if cp, _, _ := controlPlane(ni.node); cp && len(ids) > 1 && !strings.HasPrefix(from, "the cloud config") {
				issues = append(issues, nodeIssue{node: ni.instance.ID + " (" + strings.Join(ids, ", ") + ")", Finding: several})
			}
		case len(ids) > 0:
			issues = append(issues, nodeIssue{node: ni.instance.ID + " (node " + ni.node.Name + ", tagged for " + strings.Join(ids, ", ") + ")", Finding: other})
		default:
			issues = append(issues, nodeIssue{node: ni.instance.ID, Finding: missing, note: ni.instance.ID, fix: tagFix})
		}
	}
	out = append(out, groupOf(issues, "instance", "instances")...)
	if len(issues) == 0 {
		out = append(out, Finding{Area: AreaClusterID, Severity: OK, Subject: "cluster " + id,
			Message: fmt.Sprintf("every node's instance (%d) carries its tag (the ID from %s)", len(nis), from)})
	}
	return out
}

// securityGroupRule: per node's instance, the security group the CCM
// opens to its load balancers (findSecurityGroupForInstance): the one
// tagged for the cluster, else the only one.
func securityGroupRule(v *View) []Finding {
	a := v.AWS
	if a == nil {
		return nil
	}
	if u := a.unread(AreaSecurityGroup); len(u) > 0 {
		return v.unreadFindings(AreaSecurityGroup)
	}
	if v.CloudConfig != nil && isTrue(globalSetting(v.CloudConfig.Text, "DisableSecurityGroupIngress")) {
		return []Finding{{Area: AreaSecurityGroup, Severity: Info, Message: "the cloud config sets DisableSecurityGroupIngress: the CCM opens no node security group to its load balancers"}}
	}
	id, _ := v.clusterID()
	if id == "" {
		return nil
	}
	tagged := map[string]bool{}
	for _, g := range a.SecurityGroups {
		if hasClusterTag(g.Tags, id) {
			tagged[g.ID] = true
		}
	}
	var issues []nodeIssue
	for _, ni := range v.nodeInstances() {
		var t, u []string
		for _, g := range ni.instance.SecurityGroups {
			if tagged[g] {
				t = append(t, g)
			} else {
				u = append(u, g)
			}
		}
		is := nodeIssue{node: ni.instance.ID, Finding: Finding{Area: AreaSecurityGroup}}
		switch {
		case len(t) == 1:
			is.Severity, is.Message = OK, "one security group tagged for the cluster, which the CCM opens to its load balancers"
		case len(t) > 1:
			is.Severity = Error
			is.Message = "several security groups tagged for the cluster: the CCM fails every load balancer (Multiple tagged security groups found for instance)"
			is.one = fmt.Sprintf("security groups %s are all tagged for the cluster: the CCM fails every load balancer (Multiple tagged security groups found for instance)", strings.Join(t, ", "))
			is.Fix = "keep the cluster tag on one of each instance's security groups (aws ec2 delete-tags --resources SG --tags Key=" + tagClusterPrefix + id + ")"
		case len(u) == 1:
			is.Severity = Warning
			is.Message = "no security group tagged for the cluster: the CCM opens the instance's only group to its load balancers, and fails them once it has a second one"
			is.Fix = "tag the node security group " + tagClusterPrefix + id + "=owned"
		case len(u) > 1:
			is.Severity = Error
			is.Message = "several security groups and none tagged for the cluster: the CCM fails every load balancer (Multiple untagged security groups found for instance)"
			is.one = fmt.Sprintf("security groups %s, none tagged for the cluster: the CCM fails every load balancer (Multiple untagged security groups found for instance)", strings.Join(u, ", "))
			is.Fix = "tag the node security group (one of them) " + tagClusterPrefix + id + "=owned"
		default:
			is.Severity = Warning
			is.Message = "no security group: the CCM opens nothing to its load balancers for it"
		}
		issues = append(issues, is)
	}
	return groupOf(issues, "instance", "instances")
}

// subnetChoice is the subnet the CCM picks for a load balancer in a zone.
type subnetChoice struct {
	subnet AWSSubnet
	public bool
}

// elbSubnets is findELBSubnets of the release for a VPC: per zone, the
// subnet an internet-facing (internal false) or internal load balancer
// goes to, and why not where a subnet has no route table.
func (v *View) elbSubnets(vpc, clusterID string, internal bool) (map[string]subnetChoice, []string) {
	a := v.AWS
	var cands []AWSSubnet
	for _, s := range a.Subnets {
		if s.VPC == vpc && (hasClusterTag(s.Tags, clusterID) || !hasAnyClusterKey(s.Tags)) {
			cands = append(cands, s)
		}
	}
	if len(cands) == 0 {
		// The CCM falls back to its own subnet.
		if own := v.ownSubnet(vpc); own != "" {
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
	zoneTypes := releases.HasAction(v.ccmRelease(), releases.ActionDescribeAZs)
	choice := map[string]subnetChoice{}
	var problems []string
	for _, s := range cands {
		if zoneTypes {
			if t, ok := a.ZoneTypes[s.Zone]; ok && t != "availability-zone" {
				continue
			}
		}
		public, ok := a.subnetPublic(s)
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
func (v *View) ownSubnet(vpc string) string {
	if v.CloudConfig != nil {
		if s := globalSetting(v.CloudConfig.Text, "SubnetID"); s != "" {
			return s
		}
	}
	for _, ni := range v.nodeInstances() {
		if cp, _, _ := controlPlane(ni.node); cp && ni.instance.VPC == vpc {
			return ni.instance.Subnet
		}
	}
	return ""
}

// subnetPublic is isSubnetPublic: the subnet's route table (the one
// associated with it, else the VPC's main one) routes to an internet
// gateway. ok is false when it has none.
func (a *AWSAccount) subnetPublic(s AWSSubnet) (public, ok bool) {
	var table *AWSRouteTable
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
func subnetRule(v *View) []Finding {
	a := v.AWS
	if a == nil {
		return nil
	}
	if u := a.unread(AreaSubnet); len(u) > 0 {
		return v.unreadFindings(AreaSubnet)
	}
	id, _ := v.clusterID()
	if id == "" {
		return nil
	}
	zonesOf := map[string][]string{}
	for _, ni := range v.nodeInstances() {
		if vpc := ni.instance.VPC; vpc != "" && !slices.Contains(zonesOf[vpc], ni.instance.Zone) {
			zonesOf[vpc] = append(zonesOf[vpc], ni.instance.Zone)
		}
	}
	var out []Finding
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
			choice, problems := v.elbSubnets(vpc, id, internal)
			for _, p := range problems {
				out = append(out, Finding{Area: AreaSubnet, Severity: Error, Subject: vpc,
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
				out = append(out, Finding{Area: AreaSubnet, Severity: Error, Subject: vpc,
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
				out = append(out, Finding{Area: AreaSubnet, Severity: OK, Subject: vpc, Message: kind + " load balancers go to " + strings.Join(picked, ", ")})
			}
			if len(missing) > 0 {
				out = append(out, Finding{Area: AreaSubnet, Severity: Warning, Subject: vpc,
					Message: fmt.Sprintf("no subnet for an %s load balancer in %s, where nodes run: its load balancers do not reach that zone", kind, joinAnd(missing)),
					Fix:     fmt.Sprintf("add a subnet there tagged %s%s=shared and %s=1", tagClusterPrefix, id, role)})
			}
			if len(shared) > 0 {
				out = append(out, Finding{Area: AreaSubnet, Severity: Warning, Subject: joinAnd(shared),
					Message: fmt.Sprintf("untagged, in a VPC where subnets are tagged for other clusters (%s): every cluster's CCM may pick it for its %s load balancers", strings.Join(slices.Sorted(maps.Keys(others)), ", "), kind),
					Fix:     fmt.Sprintf("tag the subnets this cluster's load balancers should use %s%s=shared, and the others for their clusters", tagClusterPrefix, id)})
			}
		}
	}
	return out
}

// iamSimulationRule: the principals the CCM calls AWS as may do what the
// CCM release's policy lists (iam:SimulatePrincipalPolicy).
func iamSimulationRule(v *View) []Finding {
	a := v.AWS
	if a == nil {
		return nil
	}
	out := v.unreadFindings(AreaIAM)
	tag := v.ccmRelease()
	actions := upstream.IAMControlPlane(tag)
	for _, s := range a.Simulations {
		var denied []string
		for _, act := range actions {
			if d := s.Decisions[act]; d != "allowed" {
				denied = append(denied, act)
			}
		}
		subject := s.Principal
		if s.From != "flag" {
			subject += " (instance profile " + s.From + ")"
		}
		if len(denied) == 0 {
			out = append(out, Finding{Area: AreaIAM, Severity: OK, Subject: subject,
				Message: fmt.Sprintf("may do all %d actions of CCM %s's policy (simulated)", len(actions), tag)})
			continue
		}
		msg := fmt.Sprintf("may not %s (simulated against CCM %s's policy)", joinAnd(denied), tag)
		if slices.Contains(denied, upstream.ActionDescribeAZs) {
			switch {
			case releases.LabelsZoneID(v.ccmRelease()):
				msg += ": without " + upstream.ActionDescribeAZs + " it initialises no node and ensures no load balancer"
			case releases.HasAction(v.ccmRelease(), releases.ActionDescribeAZs):
				msg += ": without " + upstream.ActionDescribeAZs + " it ensures no load balancer"
			}
		}
		f := Finding{Area: AreaIAM, Severity: Error, Subject: subject, Message: msg,
			Fix: "add " + plural(len(denied), "it", "them") + " to the policy of " + s.Principal + "; " + v.iamPolicyHint()}
		if len(denied) > 1 {
			f.Subjects, f.Count = denied, len(denied)
		}
		out = append(out, f)
	}
	if len(a.Simulations) == 0 && len(a.unread(AreaIAM)) == 0 && (v.AWSOptions == nil || v.AWSOptions.Principal == "") {
		cps := 0
		for _, ni := range v.nodeInstances() {
			if cp, _, _ := controlPlane(ni.node); cp {
				cps++
			}
		}
		if cps > 0 {
			out = append(out, Finding{Area: AreaIAM, Severity: Warning,
				Message: "no control-plane instance has an instance profile: the CCM has no AWS credentials there unless it is given others",
				Fix:     "attach an instance profile whose role has the CCM's policy; if the CCM gets credentials another way, name them with --aws-ccm-principal ARN"})
		}
	}
	return out
}

// metadataRule: the control-plane instances' metadata options against
// where the CCM runs: a pod off the host network with IMDSv2 required and
// a hop limit of 1 gets no token, and the CCM reads its instance from the
// metadata at start unless its cloud config says all of it.
func metadataRule(v *View) []Finding {
	a := v.AWS
	if a == nil || v.Workload == nil {
		return nil
	}
	if v.configAvoidsIMDS() {
		return []Finding{{Area: AreaMetadata, Severity: Info, Message: "the cloud config names the zone, VPC, subnet and cluster ID: the CCM does not read instance metadata at start"}}
	}
	host := v.Workload.spec.HostNetwork
	var issues []nodeIssue
	for _, ni := range v.nodeInstances() {
		if cp, _, _ := controlPlane(ni.node); !cp {
			continue
		}
		in := ni.instance
		is := nodeIssue{node: in.ID, Finding: Finding{Area: AreaMetadata}}
		switch {
		case in.HTTPEndpoint == "disabled":
			is.Severity = Error
			is.Message = "instance metadata is disabled: the CCM cannot read its instance at start and exits"
			is.Fix = "aws ec2 modify-instance-metadata-options --instance-id " + in.ID + " --http-endpoint enabled, or give the cloud config Zone, VPC, SubnetID and KubernetesClusterID"
		case !host && in.HTTPTokens == "required" && in.HopLimit < 2:
			is.Severity = Error
			is.Message = fmt.Sprintf("IMDSv2 is required with a hop limit of %d and the CCM runs off the host network: its token answer never reaches the pod, and the CCM exits at start", in.HopLimit)
			is.Fix = "run the CCM with hostNetwork: true (aws-ccm-renderer's default), or aws ec2 modify-instance-metadata-options --instance-id " + in.ID + " --http-put-response-hop-limit 2"
		default:
			is.Severity = OK
			is.Message = fmt.Sprintf("instance metadata reachable by the CCM (tokens %s, hop limit %d, %s)", orUnknown(in.HTTPTokens), in.HopLimit, map[bool]string{true: "host network", false: "pod network"}[host])
		}
		issues = append(issues, is)
	}
	return groupOf(issues, "instance", "instances")
}

// configAvoidsIMDS: the cloud config holds what the CCM otherwise reads
// from instance metadata (a zone, the VPC, a subnet or role, the cluster
// ID).
func (v *View) configAvoidsIMDS() bool {
	if v.CloudConfig == nil {
		return false
	}
	g := func(k string) bool { return globalSetting(v.CloudConfig.Text, k) != "" }
	readsRegion, _ := releases.ReadsKey(v.ccmRelease(), "Region")
	zone := g("Zone") || readsRegion && g("Region")
	return zone && g("VPC") && (g("SubnetID") || g("RoleARN")) && (g("KubernetesClusterID") || g("KubernetesClusterTag"))
}

// The AWS Load Balancer Controller: its Service webhook, and the values of
// aws-load-balancer-type that make a Service its own
// (cloud-provider-aws isLBExternal).
const (
	albcServiceWebhook = "mservice.elbv2.k8s.aws"
	annotationLBType   = "service.beta.kubernetes.io/aws-load-balancer-type"
)

// loadBalancerRule: per Service of type LoadBalancer, who owns its load
// balancer and whether the CCM's exists with the CCM's tags; load
// balancers tagged for the cluster whose Service is gone.
func loadBalancerRule(v *View) []Finding {
	a := v.AWS
	if a == nil {
		return nil
	}
	if u := a.unread(AreaLoadBalancer); len(u) > 0 {
		return v.unreadFindings(AreaLoadBalancer)
	}
	id, _ := v.clusterID()
	var out []Finding
	if w := v.serviceWebhook(); w != "" {
		out = append(out, Finding{Area: AreaLoadBalancer, Severity: Warning, Subject: "MutatingWebhookConfiguration " + w,
			Message: "the AWS Load Balancer Controller's webhook gives every new Service of type LoadBalancer its loadBalancerClass: the CCM ensures none of them",
			Fix:     "to have the CCM serve them, turn the webhook off (the controller's chart: enableServiceMutatorWebhook=false)"})
	} else if v.WebhooksUnread != "" {
		out = append(out, Finding{Area: AreaLoadBalancer, Severity: Info, Message: "could not read the mutating webhooks: " + v.WebhooksUnread})
	}
	byName := map[string]AWSLoadBalancer{}
	for _, lb := range a.LoadBalancers {
		byName[lb.Name] = lb
	}
	services := map[string]bool{}
	var mine, theirs []string
	var missing []Finding
	for _, svc := range v.LoadBalancers {
		ref := svc.Namespace + "/" + svc.Name
		services[ref] = true
		if c := svc.Spec.LoadBalancerClass; c != nil {
			theirs = append(theirs, ref+" (class "+*c+")")
			continue
		}
		if t := svc.Annotations[annotationLBType]; t == "external" || t == "nlb-ip" {
			theirs = append(theirs, ref+" ("+annotationLBType+": "+t+")")
			continue
		}
		name := loadBalancerName(string(svc.UID))
		lb, ok := byName[name]
		switch {
		case !ok:
			missing = append(missing, Finding{Area: AreaLoadBalancer, Severity: Warning, Subject: "Service " + ref,
				Message: "the CCM's load balancer " + name + " is not in " + a.Region + ": not ensured yet, or it fails (the iam area and the Service's events say why)",
				Fix:     "kubectl describe service -n " + svc.Namespace + " " + svc.Name})
		case lb.Tags[tagServiceName] != ref || id != "" && !hasClusterTag(lb.Tags, id):
			missing = append(missing, Finding{Area: AreaLoadBalancer, Severity: Warning, Subject: "Service " + ref,
				Message: "load balancer " + name + " lacks the CCM's tags (" + tagServiceName + "=" + ref + ", " + tagClusterPrefix + id + "): not the CCM's, or tagged by hand"})
		default:
			mine = append(mine, ref+" → "+name)
		}
	}
	if len(mine) > 0 {
		out = append(out, Finding{Area: AreaLoadBalancer, Severity: OK, Message: fmt.Sprintf("the CCM's %s: %s", plural(len(mine), "load balancer", "load balancers"), someOf(mine))})
	}
	if len(theirs) > 0 {
		out = append(out, Finding{Area: AreaLoadBalancer, Severity: Info, Subject: someOf(theirs),
			Message: "another controller's (the AWS Load Balancer Controller's): the CCM leaves them alone"})
	}
	out = append(out, missing...)
	if id == "" {
		return out
	}
	var orphans []string
	for _, lb := range a.LoadBalancers {
		ref := lb.Tags[tagServiceName]
		if ref == "" || !hasClusterTag(lb.Tags, id) || services[ref] {
			continue
		}
		orphans = append(orphans, lb.Name+" (Service "+ref+")")
	}
	if len(orphans) > 0 {
		f := Finding{Area: AreaLoadBalancer, Severity: Warning, Subject: someOf(orphans),
			Message: "tagged for the cluster, and its Service of type LoadBalancer is gone: AWS bills it, and nothing deletes it",
			Fix:     "delete it once nothing uses it (aws elb delete-load-balancer / aws elbv2 delete-load-balancer)"}
		if len(orphans) > 1 {
			f.Subjects, f.Count = orphans, len(orphans)
		}
		out = append(out, f)
	}
	return out
}

// serviceWebhook names the MutatingWebhookConfiguration holding the AWS
// Load Balancer Controller's Service webhook; "" when none does.
func (v *View) serviceWebhook() string {
	for _, w := range v.Webhooks {
		if w.Webhook == albcServiceWebhook {
			return w.Configuration
		}
	}
	return ""
}
