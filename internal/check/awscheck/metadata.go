package awscheck

import (
	"fmt"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
)

// metadataRule: the control-plane instances' metadata options against
// where the CCM runs: a pod off the host network with IMDSv2 required and
// a hop limit of 1 gets no token, and the CCM reads its instance from the
// metadata at start unless its cloud config says all of it.
func metadataRule(v *check.View) []check.Finding {
	a := v.AWS
	if a == nil || v.Workload == nil {
		return nil
	}
	if configAvoidsIMDS(v) {
		return []check.Finding{{Area: check.AreaMetadata, Severity: check.Info, Message: "the cloud config names the zone, VPC, subnet and cluster ID: the CCM does not read instance metadata at start"}}
	}
	host := v.Workload.HostNetwork()
	var issues []check.NodeIssue
	for _, ni := range nodeInstances(v) {
		if cp, _, _ := check.IsControlPlane(ni.node); !cp {
			continue
		}
		in := ni.instance
		is := check.NodeIssue{Node: in.ID, Finding: check.Finding{Area: check.AreaMetadata}}
		switch {
		case in.HTTPEndpoint == "disabled":
			is.Severity = check.Error
			is.Message = "instance metadata is disabled: the CCM cannot read its instance at start and exits"
			is.Fix = "aws ec2 modify-instance-metadata-options --instance-id " + in.ID + " --http-endpoint enabled, or give the cloud config Zone, VPC, SubnetID and KubernetesClusterID"
		case !host && in.HTTPTokens == "required" && in.HopLimit < 2:
			is.Severity = check.Error
			is.Message = fmt.Sprintf("IMDSv2 is required with a hop limit of %d and the CCM runs off the host network: its token answer never reaches the pod, and the CCM exits at start", in.HopLimit)
			is.Fix = "run the CCM with hostNetwork: true (aws-ccm-renderer's default), or aws ec2 modify-instance-metadata-options --instance-id " + in.ID + " --http-put-response-hop-limit 2"
		default:
			is.Severity = check.OK
			is.Message = fmt.Sprintf("instance metadata reachable by the CCM (tokens %s, hop limit %d, %s)", orUnknown(in.HTTPTokens), in.HopLimit, map[bool]string{true: "host network", false: "pod network"}[host])
		}
		issues = append(issues, is)
	}
	return check.GroupOf(issues, "instance", "instances")
}

// configAvoidsIMDS: the cloud config holds what the CCM otherwise reads
// from instance metadata (a zone, the VPC, a subnet or role, the cluster
// ID).
func configAvoidsIMDS(v *check.View) bool {
	if v.CloudConfig == nil {
		return false
	}
	g := func(k string) bool { return check.GlobalSetting(v.CloudConfig.Text, k) != "" }
	readsRegion, _ := releases.ReadsKey(ccmRelease(v.Snapshot), "Region")
	zone := g("Zone") || readsRegion && g("Region")
	return zone && g("VPC") && (g("SubnetID") || g("RoleARN")) && (g("KubernetesClusterID") || g("KubernetesClusterTag"))
}
