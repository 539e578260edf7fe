package awscheck

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
)

// securityGroups reads the security groups of the instances' VPCs.
func (r *awsReader) securityGroups(ctx context.Context) {
	vpcRead(ctx, r, check.AreaSecurityGroup, "ec2:DescribeSecurityGroups", ec2.NewDescribeSecurityGroupsPaginator(r.ec2, &ec2.DescribeSecurityGroupsInput{Filters: vpcFilter(r.vpcIDs)}),
		func(page *ec2.DescribeSecurityGroupsOutput) (out []check.AWSSecurityGroup) {
			for _, g := range page.SecurityGroups {
				out = append(out, check.AWSSecurityGroup{ID: aws.ToString(g.GroupId), Name: aws.ToString(g.GroupName), VPC: aws.ToString(g.VpcId), Tags: tagsOf(g.Tags)})
			}
			return out
		}, &r.acct.SecurityGroups)
}

// securityGroupRule: per node's instance, the security group the CCM
// opens to its load balancers (findSecurityGroupForInstance): the one
// tagged for the cluster, else the only one.
func securityGroupRule(v *check.View) []check.Finding {
	a := v.AWS
	if a == nil {
		return nil
	}
	if u := unread(a, check.AreaSecurityGroup); len(u) > 0 {
		return unreadFindings(v, check.AreaSecurityGroup)
	}
	if v.CloudConfig != nil && check.IsTrue(check.GlobalSetting(v.CloudConfig.Text, "DisableSecurityGroupIngress")) {
		return []check.Finding{{Area: check.AreaSecurityGroup, Severity: check.Info, Message: "the cloud config sets DisableSecurityGroupIngress: the CCM opens no node security group to its load balancers"}}
	}
	id, _ := clusterID(v)
	if id == "" {
		return nil
	}
	tagged := map[string]bool{}
	for _, g := range a.SecurityGroups {
		if hasClusterTag(g.Tags, id) {
			tagged[g.ID] = true
		}
	}
	var issues []check.NodeIssue
	for _, ni := range nodeInstances(v) {
		var t, u []string
		for _, g := range ni.instance.SecurityGroups {
			if tagged[g] {
				t = append(t, g)
			} else {
				u = append(u, g)
			}
		}
		is := check.NodeIssue{Node: ni.instance.ID, Finding: check.Finding{Area: check.AreaSecurityGroup}}
		switch {
		case len(t) == 1:
			is.Severity, is.Message = check.OK, "one security group tagged for the cluster, which the CCM opens to its load balancers"
		case len(t) > 1:
			is.Severity = check.Error
			is.Message = "several security groups tagged for the cluster: the CCM fails every load balancer (Multiple tagged security groups found for instance)"
			is.One = fmt.Sprintf("security groups %s are all tagged for the cluster: the CCM fails every load balancer (Multiple tagged security groups found for instance)", strings.Join(t, ", "))
			is.Fix = "keep the cluster tag on one of each instance's security groups (aws ec2 delete-tags --resources SG --tags Key=" + tagClusterPrefix + id + ")"
		case len(u) == 1:
			is.Severity = check.Warning
			is.Message = "no security group tagged for the cluster: the CCM opens the instance's only group to its load balancers, and fails them once it has a second one"
			is.Fix = "tag the node security group " + tagClusterPrefix + id + "=owned"
		case len(u) > 1:
			is.Severity = check.Error
			is.Message = "several security groups and none tagged for the cluster: the CCM fails every load balancer (Multiple untagged security groups found for instance)"
			is.One = fmt.Sprintf("security groups %s, none tagged for the cluster: the CCM fails every load balancer (Multiple untagged security groups found for instance)", strings.Join(u, ", "))
			is.Fix = "tag the node security group (one of them) " + tagClusterPrefix + id + "=owned"
		default:
			is.Severity = check.Warning
			is.Message = "no security group: the CCM opens nothing to its load balancers for it"
		}
		issues = append(issues, is)
	}
	return check.GroupOf(issues, "instance", "instances")
}
