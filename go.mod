module github.com/aws-ccm-renderer/aws-ccm-renderer

go 1.26.0

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/cobra v1.10.2 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	sigs.k8s.io/kustomize/kyaml v0.21.2 // indirect
)
