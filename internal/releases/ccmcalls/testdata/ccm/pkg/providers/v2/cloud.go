package v2

import "github.com/aws/aws-sdk-go/service/ec2"

const ProviderName = "aws/v2"

func init() { _ = &ec2.ModifyVolumeInput{} }
