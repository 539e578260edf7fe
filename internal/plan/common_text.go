package plan

import "fmt"

// Texts the leader migration distributions share.

const nodesInTree = "Every NAME is its instance's EC2 private DNS name (ip-10-0-1-10.us-west-2.compute.internal, " +
	"ip-10-0-1-10.ec2.internal in us-east-1, or i-0123456789abcdef0.us-west-2.compute.internal with resource-based " +
	"names) and every PROVIDER-ID reads aws:///<zone>/<instance-id>: the in-tree provider set both, and the switch must " +
	"keep them. A node without them was never initialised by the in-tree provider; fix it before going on."

const ebsInTree = "The in-tree EBS volume plugin works through the in-tree cloud provider, so it stops attaching volumes " +
	"for a controller manager and kubelets that run --cloud-provider=external. What keeps kubernetes.io/aws-ebs " +
	"volumes working is CSI migration: the CSIMigrationAWS feature gate, on by default from Kubernetes 1.23 and GA and " +
	"locked on in 1.26 (pkg/features/kube_features.go at v1.26.15), hands them to the EBS CSI driver " +
	"(ebs.csi.aws.com), which must therefore be installed; Kubernetes 1.27 removes the in-tree plugin. A cluster that " +
	"set feature-gates=CSIMigrationAWS=false to keep the in-tree plugin (possible before 1.25) must drop that gate, " +
	"with the driver installed, before the switch."

func ecrInTree(minor int) string {
	return fmt.Sprintf("Kubelets pull from ECR with their built-in credential provider (amazon-ecr, "+
		"pkg/credentialprovider/aws), which works whatever --cloud-provider says and is still in the kubelet of 1.%d. "+
		"Kubernetes 1.27 removed it (kubernetes/kubernetes#116329): ECR pulls go on working through the switch and "+
		"stop at the upgrade to 1.27 unless every kubelet runs the ecr-credential-provider plugin of "+
		"kubernetes/cloud-provider-aws. Install it now, while both work, and see pulls succeed through it.", minor)
}

const tagsInTree = "The in-tree provider used the same tags: keep them."

const upgradeInTree = "With the CCM alone in charge, the cluster can leave 1.26: the in-tree AWS provider, its EBS " +
	"plugin and its ECR credential provider are gone in 1.27, and nothing here depends on them any more."
