package awscheck

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
)

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

// clusterID is the cluster ID the CCM runs with, and where it comes from.
func clusterID(v *check.View) (id, from string) { return shared(v).clusterID, shared(v).clusterBy }

// findClusterID is the cluster ID the CCM runs with: the cloud config's
// KubernetesClusterID or KubernetesClusterTag, else the one the nodes'
// instances carry most. from says which.
func findClusterID(v *check.View, nodes []nodeInstance) (id, from string) {
	if v.CloudConfig != nil {
		if id := check.GlobalSetting(v.CloudConfig.Text, "KubernetesClusterID"); id != "" {
			return id, "the cloud config's KubernetesClusterID"
		}
		if id := check.GlobalSetting(v.CloudConfig.Text, "KubernetesClusterTag"); id != "" {
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

// clusterIDRule: every node's instance carries the cluster's tag, the
// cloud config's two settings agree, and the CCM can find an ID at all.
func clusterIDRule(v *check.View) []check.Finding {
	a := v.AWS
	if a == nil || len(unread(a, check.AreaInstance)) > 0 && len(a.Instances) == 0 {
		return nil
	}
	var out []check.Finding
	if cc := v.CloudConfig; cc != nil {
		idSet, tagSet := check.GlobalSetting(cc.Text, "KubernetesClusterID"), check.GlobalSetting(cc.Text, "KubernetesClusterTag")
		if idSet != "" && tagSet != "" && idSet != tagSet {
			out = append(out, check.Finding{Area: check.AreaClusterID, Severity: check.Error, Subject: "cloud config " + cc.From,
				Message: fmt.Sprintf("KubernetesClusterID %q and KubernetesClusterTag %q differ: the CCM exits at start (clusterID tags did not match)", idSet, tagSet),
				Fix:     "keep KubernetesClusterID alone"})
		}
	}
	id, from := clusterID(v)
	nis := nodeInstances(v)
	if id == "" {
		if len(nis) == 0 {
			return out
		}
		return append(out, check.Finding{Area: check.AreaClusterID, Severity: check.Error,
			Message: "no instance of a node carries kubernetes.io/cluster/<ID> (or KubernetesCluster) and the cloud config names no KubernetesClusterID: the CCM exits at start (AWS cloud failed to find ClusterID)",
			Fix:     check.FixClusterTags})
	}
	missing := check.Finding{Area: check.AreaClusterID, Severity: check.Error,
		Message: fmt.Sprintf("no cluster tag (cluster %s, from %s): the CCM finds such an instance by name only when tagged, and leaves it out of every load balancer and its security group rules", id, from)}
	tagFix := func(ids []string) string {
		return fmt.Sprintf("aws ec2 create-tags --resources %s --tags Key=%s%s,Value=owned", strings.Join(ids, " "), tagClusterPrefix, id)
	}
	other := check.Finding{Area: check.AreaClusterID, Severity: check.Error,
		Message: fmt.Sprintf("tagged for another cluster than %s (from %s): the CCM leaves it out as it does an untagged one", id, from),
		Fix:     "tag it for cluster " + id + ", or correct KubernetesClusterID in the cloud config"}
	several := check.Finding{Area: check.AreaClusterID, Severity: check.Error,
		Message: "a control-plane instance tagged for several clusters: without KubernetesClusterID in the cloud config the CCM reads its own instance's tags and exits at start (Found multiple cluster tags)",
		Fix:     "set KubernetesClusterID = " + id + " in the cloud config, or remove the other cluster's tag"}
	var issues []check.NodeIssue
	for _, ni := range nis {
		ids := clusterIDsOf(ni.instance.Tags)
		switch {
		case hasClusterTag(ni.instance.Tags, id):
			if cp, _, _ := check.IsControlPlane(ni.node); cp && len(ids) > 1 && !strings.HasPrefix(from, "the cloud config") {
				issues = append(issues, check.NodeIssue{Node: ni.instance.ID + " (" + strings.Join(ids, ", ") + ")", Finding: several})
			}
		case len(ids) > 0:
			issues = append(issues, check.NodeIssue{Node: ni.instance.ID + " (node " + ni.node.Name + ", tagged for " + strings.Join(ids, ", ") + ")", Finding: other})
		default:
			issues = append(issues, check.NodeIssue{Node: ni.instance.ID, Finding: missing, Note: ni.instance.ID, FixFor: tagFix})
		}
	}
	out = append(out, check.GroupOf(issues, "instance", "instances")...)
	if len(issues) == 0 {
		out = append(out, check.Finding{Area: check.AreaClusterID, Severity: check.OK, Subject: "cluster " + id,
			Message: fmt.Sprintf("every node's instance (%d) carries its tag (the ID from %s)", len(nis), from)})
	}
	return out
}
