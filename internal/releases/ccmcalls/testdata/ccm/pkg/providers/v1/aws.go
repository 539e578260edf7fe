package v1

import (
	"context"

	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go/service/ec2"
)

type Cloud struct{ ec2 EC2 }

type EC2 interface {
	DescribeInstances(*ec2.DescribeInstancesInput) ([]*ec2.Instance, error)
	DescribeVolumes(*ec2.DescribeVolumesInput) ([]*ec2.Volume, error)
}

var defaultFilter = &ec2.DescribeRegionsInput{}

func Register() {}

// EnsureLoadBalancer is called by the service controller.
func (c *Cloud) EnsureLoadBalancer(ctx context.Context) error {
	c.attributes(ctx)
	_, err := c.ec2.DescribeInstances(&ec2.DescribeInstancesInput{})
	return err
}

func (c *Cloud) attributes(ctx context.Context) {
	var in elbv2.DescribeTargetGroupAttributesInput
	_ = in
	_ = new(elbv2.ModifyTargetGroupAttributesInput)
}

// GetLabelsForVolume is an interface method no controller calls.
func (c *Cloud) GetLabelsForVolume() {
	_, _ = c.ec2.DescribeVolumes(&ec2.DescribeVolumesInput{})
}

// AttachDisk is called by nothing.
func (c *Cloud) AttachDisk() {
	_ = &ec2.AttachVolumeInput{}
}
