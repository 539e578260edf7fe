package v1

import "github.com/aws/aws-sdk-go/service/ec2"

func (c *Cloud) EnsureLoadBalancerFake() { _ = &ec2.CreateVolumeInput{} }

func Register2() { _ = &ec2.DeleteVolumeInput{} }
