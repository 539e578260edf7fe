package v1

import "github.com/aws/aws-sdk-go/service/ec2"

func init() { _ = &ec2.DetachVolumeInput{} }
