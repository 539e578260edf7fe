package main

import (
	awsv1 "k8s.io/cloud-provider-aws/pkg/providers/v1"
	awsv2 "k8s.io/cloud-provider-aws/pkg/providers/v2"
)

func main() {
	awsv1.Register()
	_ = awsv2.ProviderName
}
