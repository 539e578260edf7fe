package plan

// Texts the leader migration distributions share.

const nodesInTree = "Every NAME is its instance's EC2 private DNS name (ip-10-0-1-10.us-west-2.compute.internal, " +
	"ip-10-0-1-10.ec2.internal in us-east-1, or i-0123456789abcdef0.us-west-2.compute.internal with resource-based " +
	"names) and every PROVIDER-ID reads aws:///<zone>/<instance-id>: the in-tree provider named the node after the EC2 " +
	"API's PrivateDnsName of its instance (legacy-cloud-providers aws/aws.go, CurrentNodeName and buildSelfAWSInstance, " +
	"v0.26.15) and the switch must keep both."

const checkBeforeLM = "Exit 0, with warnings that are expected at this point: the migration lease is missing (the " +
	"controller manager does not run leader migration yet), and the controller manager's access to it comes only with " +
	"the rendered manifests. A hostname warning is before.hostname-label's to settle, an in-tree warning about the route " +
	"controller before.routes'. Every control-plane node shows where a CCM pod would run, every node is initialised (aws:// " +
	"provider IDs), and the CCM's version matches the API server."

const tagsInTree = "The in-tree provider used the same tags: keep them."

const upgradeInTree = "With the CCM alone in charge, the cluster can leave 1.26: the in-tree AWS provider, its EBS " +
	"plugin and its ECR credential provider are gone in 1.27, and nothing here depends on them any more."
