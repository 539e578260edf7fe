package check

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
)

// securityGroups reads the security groups of the instances' VPCs.
func (r *awsReader) securityGroups(ctx context.Context) {
	vpcRead(ctx, r, AreaSecurityGroup, "ec2:DescribeSecurityGroups", ec2.NewDescribeSecurityGroupsPaginator(r.ec2, &ec2.DescribeSecurityGroupsInput{Filters: vpcFilter(r.vpcIDs)}),
		func(page *ec2.DescribeSecurityGroupsOutput) (out []AWSSecurityGroup) {
			for _, g := range page.SecurityGroups {
				out = append(out, AWSSecurityGroup{ID: aws.ToString(g.GroupId), Name: aws.ToString(g.GroupName), VPC: aws.ToString(g.VpcId), Tags: tagsOf(g.Tags)})
			}
			return out
		}, &r.acct.SecurityGroups)
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
