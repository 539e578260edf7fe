module k8s.io/cloud-provider-aws

go 1.22
