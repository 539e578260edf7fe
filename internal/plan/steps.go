package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// The steps every distribution shares, with the distribution's part passed
// in. A step's ID is its name here; Build prefixes the phase.

func readOnly() Rollback {
	return Rollback{Description: "Nothing to undo: this step only reads."}
}

func ptr[T any](v T) *T { return &v }

// mainCmd marks a command as its step's main command.
func mainCmd(c Command) Command {
	c.Main = true
	return c
}

// Expectations of the check gates, shared by the steps that run them.
const (
	expectFix = "Every ✗ is fixed before going on; its → line says how."
)

// firstMode is the mode of the plan's first install: migrate, but
// install on K3s (no leader migration there).
func (b *builder) firstMode() renderer.Mode {
	if b.r.From != FromInTree {
		return renderer.ModeInstall
	}
	return renderer.ModeMigrate
}

// preflight takes stock of versions and nodes, and runs the first gate:
// the CCM this plan installs, rendered and checked against the cluster.
func (b *builder) preflight(expectNodes, expectCheck string, extra ...Command) Step {
	r := b.r
	mode := b.firstMode()
	cmds := append([]Command{
		run(KindKubectl, atWorkstation, "The API server's version", "kubectl", "version"),
		script(KindKubectl, atWorkstation, "Every node's name, provider ID and kubelet version, kept for later checks",
			shellLine(b.nodesArgv())+" | tee nodes-before.txt"),
	}, extra...)
	return Step{
		ID:    "preflight",
		Title: "Take stock, and check the rendered CCM against the cluster",
		Why: "The AWS CCM is released per Kubernetes minor and meant for its own minor " +
			"(kubernetes/cloud-provider-aws docs/README.md, \"Compatibility with Kubernetes\"); chart " + r.ChartVersion + " deploys " + defaultChartImage(r.ChartVersion) + " by default, so every command of this " +
			"plan pins image.tag=" + r.tag + " (" + r.tagSource + "). check reads the cluster and tells, before anything " +
			"changes, whether the CCM this plan installs lands on every control-plane node, can look up every " +
			"node, and matches the API server's version (docs/check.md). nodes-before.txt is what the checks of " +
			"the switch compare with.",
		Commands: cmds,
		Checks: []Check{
			{Description: "The server version", Expect: "Server Version is v1." + strconv.Itoa(r.minor) + ".x; if not, run this plan again with --kube-version set " +
				"to it."},
			{Description: "The nodes", Expect: expectNodes},
			{Description: "The CCM this plan installs, against the cluster", Command: mainCheck(b.checkRendered(mode)), Expect: expectCheck + " " + expectFix},
		},
		Rollback: readOnly(),
	}
}

// defaultChartImage is the CCM image tag a chart version deploys by default.
func defaultChartImage(chartVersion string) string {
	if tag, ok := releases.DefaultImageTag(chartVersion); ok {
		return tag
	}
	return "the image of its values.yaml"
}

// hostnameLabel finds what depends on the kubernetes.io/hostname label,
// which the switch may change.
func (b *builder) hostnameLabel(why string, notes ...string) Step {
	return Step{
		ID:    "hostname-label",
		Title: "Find what depends on the kubernetes.io/hostname label",
		Why: "The kubelet sets its node's kubernetes.io/hostname label to its own hostname (--hostname-override, " +
			"else the host's name) at every start, on existing nodes too (pkg/kubelet/kubelet_node_status.go " +
			"updateDefaultLabels, v1.26.15). Under the in-tree provider the node's name came from the EC2 API " +
			"and the label from the host, so they can differ; " + why + " Local PersistentVolumes " +
			"(local-path-provisioner, K3s's default StorageClass, OpenEBS, TopoLVM, local PVs) and nodeSelectors " +
			"pinned to the old value stop matching, and a PV's nodeAffinity cannot be changed once set " +
			"(pkg/apis/core/validation ValidatePersistentVolumeUpdate).",
		Notes: append(notes,
			"For each PV listed: note its claim and data path, set persistentVolumeReclaimPolicy: Retain now; "+
				"after the switch create it again with the new value in its nodeAffinity and bind the claim to it. "+
				"For each pod listed: change its workload's nodeSelector or affinity to the new value (or to a label "+
				"of your own) in the same window."),
		Commands: []Command{
			mainCmd(script(KindKubectl, atWorkstation, "Nodes whose label differs from their name: NAME, then the label's value", `
kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.metadata.labels.kubernetes\.io/hostname}{"\n"}{end}' \
  | awk '$1 != $2'`)),
			script(KindKubectl, atWorkstation, "PersistentVolumes pinned to a hostname: PV, then the values", `
kubectl get pv -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.spec.nodeAffinity.required.nodeSelectorTerms[*].matchExpressions[?(@.key=="kubernetes.io/hostname")].values[*]}{"\n"}{end}' \
  | awk 'NF > 1'`),
			script(KindKubectl, atWorkstation, "Pods pinned to a hostname by nodeSelector or node affinity", `
kubectl get pods --all-namespaces -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}{" "}{.spec.nodeSelector.kubernetes\.io/hostname}{" "}{.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[*].matchExpressions[?(@.key=="kubernetes.io/hostname")].values[*]}{"\n"}{end}' \
  | awk 'NF > 1'`),
		},
		Checks: []Check{{
			Description: "What the switch changes",
			Expect: "No node listed: nothing to do. Otherwise every PV and pod whose values include a listed node's " +
				"label value has its plan (note above) before the switch.",
		}},
		Rollback: readOnly(),
	}
}

// iam compares the control-plane instances' IAM role with what the pinned
// CCM release needs.
func (b *builder) iam(who string, k3s bool) Step {
	r := b.r
	actions := releases.IAMPolicy(r.tag)
	role := script(KindAWS, atAWS, "The control-plane role, read off a control-plane instance (INSTANCE_ID)", `
CP_ROLE=$(aws iam get-instance-profile --instance-profile-name "$(aws ec2 describe-instances --instance-ids "$INSTANCE_ID" \
    --query 'Reservations[0].Instances[0].IamInstanceProfile.Arn' --output text | awk -F/ '{print $NF}')" \
  --query 'InstanceProfile.Roles[0].Arn' --output text)`)
	simulate := `
aws iam simulate-principal-policy --policy-source-arn "$CP_ROLE" \
  --action-names $(grep -o '"[a-z0-9-]*:[A-Za-z]*"' ccm-control-plane-policy.json | tr -d '"') \
  --query 'EvaluationResults[?EvalDecision!=` + "`allowed`" + `].EvalActionName' --output text`
	notes := []string{"Give the role only the control-plane policy; the instances of other nodes need only the node policy."}
	onlyCode, onlyDocs := releases.IAMDiff(r.tag)
	var called, deps []string
	for _, c := range onlyCode {
		called = append(called, c.Action)
	}
	for _, d := range releases.IAMDependencies {
		deps = append(deps, d.Action)
	}
	snippets := []Snippet{{File: "ccm-control-plane-policy.json", Language: "json", Content: policyJSON(actions),
		Note: "The actions the " + r.tag + " CCM's code calls, read from its source, and what AWS checks for them (" +
			strings.Join(deps, ", ") + "); docs/prerequisites.md at " + r.tag + " lacks " + strings.Join(called, ", ") +
			", and lists " + strconv.Itoa(len(onlyDocs)) + " actions the code never calls"}}
	attach := []Command{role, (script(KindAWS, atAWS, "Attach it to the control-plane role (an inline policy; repeat for every control-plane role)",
		`aws iam put-role-policy --role-name "${CP_ROLE##*/}" --policy-name aws-cloud-controller-manager \
  --policy-document file://ccm-control-plane-policy.json`))}
	var tgAttrs []string
	for _, a := range []string{releases.ActionDescribeTargetGroupAttributes, releases.ActionModifyTargetGroupAttributes} {
		if slices.Contains(actions, a) {
			tgAttrs = append(tgAttrs, a)
		}
	}
	tga := strings.Join(tgAttrs, " and ")
	lacks := releases.ActionInstanceTopology
	if tga != "" {
		lacks += ", and " + tga
	}
	notes = append(notes, "The Rancher documentation's control-plane policy lacks "+releases.ActionDescribeAZs+
		" and elasticloadbalancing:DeregisterTargets (and "+lacks+"): use the policy above.")
	why := "The CCM calls AWS with the credentials of the instance it runs on, a control-plane node: the policy allows " +
		"what the " + r.tag + " CCM's code calls, which kubernetes/cloud-provider-aws docs/prerequisites.md at " + r.tag +
		" lists only in part; " + iamMissingBy(r.tag) + "."
	if tga != "" {
		why += " Without " + tga + ", which the docs' policy lacks, a Service with the annotation " +
			"service.beta.kubernetes.io/aws-load-balancer-target-group-attributes never gets its NLB."
	}
	why += " A denied call shows only in the CCM's log and events. "
	if k3s {
		why += b.neverCalledAWS() + " never called AWS, so its instances may have no instance profile at all: the " +
			"servers need the control-plane policy, every node the node policy (the ecr-credential-provider " +
			"pulls with it)."
		snippets = append(snippets, Snippet{File: "ccm-node-policy.json", Language: "json", Content: policyJSON(releases.IAMNode()),
			Note: "The node policy of docs/prerequisites.md, for every node's role"})
		notes = append(notes, "An instance without an instance profile: create a role with the policy, an instance profile for it, "+
			"and aws ec2 associate-iam-instance-profile.")
	} else {
		why += who
	}
	return Step{
		ID:       "iam",
		Title:    "Give the control-plane instances the IAM policy of the CCM release",
		Why:      why,
		Notes:    notes,
		Snippets: snippets,
		Commands: attach,
		Checks: []Check{{
			Description: "The control-plane role against the policy of " + r.tag + ", simulated by check --aws (read-only; " +
				"docs/check.md lists what it may read); run it first",
			Command: mainCheck(b.checkRenderedAWS(b.firstMode())),
			Expect: "No ✗ line in the iam area: a ✓ line \"may do all N actions of CCM " + r.tag + "'s policy (simulated)\" per " +
				"control-plane role. A ✗ line names the role and each action it may not: attach the policy above " +
				"(or add the actions to yours) and run it again. A · line in the iam area names the read check " +
				"needs (iam:SimulatePrincipalPolicy, iam:GetInstanceProfile).",
		}, {
			Description: "The same by hand: actions of the policy the control-plane role is not allowed (IAM policy simulator)",
			Command:     ptr(script(KindAWS, atAWS, "", simulate)),
			Expect:      "No output. Each action listed is missing.",
		}},
		Rollback: Rollback{
			Description: "Delete the inline policy again; nothing in the cluster uses it before the CCM is installed.",
			Commands: []Command{script(KindAWS, atAWS, "",
				`aws iam delete-role-policy --role-name "${CP_ROLE##*/}" --policy-name aws-cloud-controller-manager`)},
		},
	}
}

// clusterTags checks the kubernetes.io/cluster/<id> tags the CCM needs.
func (b *builder) clusterTags(previously string) Step {
	listed := "nodes-before.txt"
	if b.r.From == FromNew {
		listed = "the cluster"
	}
	return Step{
		ID:    "cluster-tags",
		Title: "Check the kubernetes.io/cluster/<id> tags on instances, subnets and security groups",
		Why: "The CCM takes its cluster ID from the kubernetes.io/cluster/<id> tag (or the legacy " +
			"KubernetesCluster tag) of the EC2 instance it runs on, unless its cloud config sets " +
			"KubernetesClusterID; with neither, the CCM exits at start with \"AWS cloud failed to find ClusterID\" " +
			"(kubernetes/cloud-provider-aws, pkg/providers/v1/tags.go). It finds the subnets for load balancers " +
			"and the one security group per node it opens for them by the same tag. " + previously,
		Notes: []string{
			"CLUSTER_ID is the <id> of the tag: the instances of the cluster carry kubernetes.io/cluster/<id> " +
				"with the value owned or shared.",
		},
		Commands: []Command{
			script(KindAWS, atAWS, "By hand: the instances tagged for the cluster", `
aws ec2 describe-instances --filters "Name=tag-key,Values=kubernetes.io/cluster/$CLUSTER_ID" \
  --query 'Reservations[].Instances[].[InstanceId,PrivateDnsName]' --output text`),
			script(KindAWS, atAWS, "By hand: the subnets tagged for the cluster", `
aws ec2 describe-subnets --filters "Name=tag-key,Values=kubernetes.io/cluster/$CLUSTER_ID" \
  --query 'Subnets[].[SubnetId,AvailabilityZone]' --output text`),
			script(KindAWS, atAWS, "By hand: the security groups tagged for the cluster", `
aws ec2 describe-security-groups --filters "Name=tag-key,Values=kubernetes.io/cluster/$CLUSTER_ID" \
  --query 'SecurityGroups[].[GroupId,GroupName]' --output text`),
		},
		Checks: []Check{{
			Description: "The tags, names, security groups and subnets the CCM will use, read by check --aws",
			Command:     mainCheck(b.checkRenderedAWS(b.firstMode())),
			Expect:      b.clusterTagsExpect(),
		}, {
			Description: "The same by hand: the tags the commands above list",
			Expect: "Every instance of " + listed +
				" is listed (at least every control-plane instance: the CCM runs there), the subnets of the " +
				"cluster's load balancers are listed, and each node has exactly one tagged security group. Tag " +
				"what is missing before going on.",
		}},
		Rollback: readOnly(),
	}
}

// serviceOverrides is an example [ServiceOverride] pair for both SDKs.
func serviceOverrides() string {
	var s strings.Builder
	ec2 := upstream.AWSServices[0]
	for i, name := range []string{ec2.EndpointID, ec2.ServiceID} {
		fmt.Fprintf(&s, "[ServiceOverride \"%d\"]\nService = %s\nRegion = us-west-2\nURL = https://vpce-0123-ec2.us-west-2.vpce.amazonaws.com\nSigningRegion = us-west-2\n", i+1, name)
	}
	return s.String()
}

// cloudConfig carries the in-tree provider's --cloud-config to the CCM.
func (b *builder) cloudConfig(source string, read *Command) Step {
	ns := b.r.Namespace
	var v1, v2 []string
	for _, n := range upstream.AWSServices {
		if !slices.Contains(v1, n.EndpointID) {
			v1 = append(v1, n.EndpointID)
		}
		v2 = append(v2, `"`+n.ServiceID+`"`)
	}
	why := "The in-tree provider read its settings from the file named by --cloud-config ([Global]: " +
		"KubernetesClusterID, RoleARN, SubnetID, ElbSecurityGroup, ...; [ServiceOverride \"N\"] sections). The " +
		"CCM reads the same format from its own --cloud-config and from nothing else. " + source + " The [ServiceOverride] Service names " +
		"depend on the CCM's AWS SDK: releases on aws-sdk-go match endpoint IDs (" + strings.Join(v1, ", ") +
		"); releases on aws-sdk-go-v2 (" + releases.SDKv2Releases() + ") match service IDs (" + strings.Join(v2, ", ") +
		") and silently ignore an old name, " +
		"sending the calls to the public endpoint (pkg/providers/v1 config/config.go GetResolver, and " +
		"GetCustomEC2Resolver where aws_sdk.go builds the clients with NewFromConfig, at each tag). A file " +
		"with both names works for both, so write each override twice now and no upgrade can lose it; " +
		"aws-ccm-renderer check reads the file the CCM mounts and names an override its release ignores."
	step := Step{
		ID:    "cloud-config",
		Title: "Carry the cloud config over to the CCM",
		Why:   why,
		Rollback: Rollback{
			Description: "Delete the ConfigMap (nothing uses it before the CCM is installed).",
			Commands:    []Command{run(KindKubectl, atWorkstation, "", "kubectl", "-n", ns, "delete", "configmap", "aws-cloud-config")},
		},
	}
	if !b.r.CloudConfig {
		read.Main = true
		step.Commands = []Command{*read}
		step.Checks = []Check{{
			Description: "The in-tree provider's config",
			Expect: "No file, or a [Global] section with nothing but defaults: nothing to carry over. Otherwise run this " +
				"plan again with --cloud-config: its commands then store the file in a ConfigMap and mount it into " +
				"the CCM.",
		}}
		step.Rollback = readOnly()
		return step
	}
	step.Snippets = []Snippet{
		{
			File: "aws-cloud-config.yaml", Language: "yaml",
			Content: yamlOf(configMap{APIVersion: "v1", Kind: "ConfigMap",
				Metadata: objectMeta{Name: "aws-cloud-config", Namespace: ns},
				Data: map[string]string{"cloud.conf": "[Global]\n# the settings of the in-tree provider's file, e.g.\nKubernetesClusterID = my-cluster\n" +
					"# each [ServiceOverride] twice: the endpoint ID, then the SDK v2 service ID\n" + serviceOverrides()}}),
			Note: "The in-tree provider's file, each [ServiceOverride] written a second time with the other name",
		},
		{
			File: cloudConfigValues, Language: "yaml",
			Content: yamlOf(cloudConfigChartValues{
				ExtraVolumes:      []configMapVolume{{Name: "aws-cloud-config", ConfigMap: objectMeta{Name: "aws-cloud-config"}}},
				ExtraVolumeMounts: []volumeMount{{Name: "aws-cloud-config", MountPath: cloudConfigMount, ReadOnly: true}},
			}),
			Note: "Chart values that mount the ConfigMap of before.cloud-config (extraVolumes and extraVolumeMounts " +
				"exist in chart 0.0.11); every CCM command of this plan passes it with --set-arg=cloud-config=" + cloudConfigFile,
		},
	}
	step.Commands = []Command{mainCmd(run(KindKubectl, atWorkstation, "Store it for the CCM", "kubectl", "apply", "-f", "aws-cloud-config.yaml"))}
	if read != nil {
		step.Commands = append([]Command{*read}, step.Commands...)
	}
	step.Checks = []Check{{
		Description: "The ConfigMap",
		Command:     ptr(run(KindKubectl, atWorkstation, "", "kubectl", "-n", ns, "get", "configmap", "aws-cloud-config", "-o", "jsonpath={.data.cloud\\.conf}")),
		Expect:      "The in-tree provider's settings, every [ServiceOverride] under both names.",
	}}
	return step
}

// routes finds out whether the in-tree route controller manages VPC routes.
func (b *builder) routes(kcmFlags Command, defaults string) Step {
	kcmFlags.Main = true
	s := Step{
		ID:    "routes",
		Title: "Find out whether the in-tree controller manager manages VPC routes",
		Why: "The in-tree controller manager runs its route controller when it has --allocate-node-cidrs=true and " +
			"--configure-cloud-routes (default true) (cmd/kube-controller-manager/app/core.go " +
			"startRouteController, v1.26.15); with the aws provider it then writes a route per node's pod CIDR " +
			"into the route table tagged for the cluster (legacy-cloud-providers aws/aws_routes.go). The " +
			"renderer runs the CCM with --configure-cloud-routes=false: if the pod network relies on those " +
			"routes, new nodes would get none. " + defaults,
		Commands: []Command{
			kcmFlags,
			script(KindAWS, atAWS, "Route tables tagged for the cluster, with the routes that point at instances", `
aws ec2 describe-route-tables --filters "Name=tag-key,Values=kubernetes.io/cluster/$CLUSTER_ID" \
  --query 'RouteTables[].[RouteTableId,Routes[?InstanceId].[DestinationCidrBlock,InstanceId]]' --output text`),
		},
		Rollback: readOnly(),
	}
	if b.r.ClusterCIDR != "" {
		s.Checks = []Check{{Description: "Routes", Expect: "Routes to instances for the pod CIDRs of " + b.r.ClusterCIDR + ": this plan renders the CCM with " +
			"--configure-cloud-routes=true and --cluster-cidr=" + b.r.ClusterCIDR + ", and its route controller takes them " +
			"over (the renderer warns about it on every render)."}}
	} else {
		s.Checks = []Check{{Description: "Routes", Expect: "--allocate-node-cidrs is not true, or --configure-cloud-routes=false, or no tagged route table " +
			"holds routes to instances: nothing to take over. Otherwise run this plan again with --cluster-cidr " +
			"set to the controller manager's --cluster-cidr: its commands then run the CCM's route controller."}}
	}
	return s
}

// ebsWhy says what happens to in-tree EBS volumes at the switch, for a minor.
func ebsWhy(minor int) string {
	switch {
	case csiMigrationLocked(minor):
		return "In 1." + strconv.Itoa(minor) + " CSI migration for EBS (CSIMigrationAWS) is GA and locked on " +
			"(pkg/features/kube_features.go, on by default from 1.23, locked from 1.25): kubernetes.io/aws-ebs " +
			"volumes are already served by the EBS CSI driver, which must therefore run, and the switch does not " +
			"change that. Kubernetes 1.27 removes the in-tree plugin."
	case csiMigrationDefaultOn(minor):
		return "In 1." + strconv.Itoa(minor) + " CSI migration for EBS (CSIMigrationAWS) is on by default " +
			"(pkg/features/kube_features.go): kubernetes.io/aws-ebs volumes are served by the EBS CSI driver, " +
			"and the switch does not change that. A cluster that set feature-gates=CSIMigrationAWS=false still " +
			"attaches them with the in-tree plugin, which works through the in-tree provider and stops at the " +
			"switch: drop that gate, with the driver installed, before the switch."
	}
	return "In 1." + strconv.Itoa(minor) + " CSI migration for EBS (CSIMigrationAWS) is beta and off by default " +
		"(pkg/features/kube_features.go): kubernetes.io/aws-ebs volumes are attached by the in-tree plugin, " +
		"which works through the in-tree provider and stops at the switch. Install the EBS CSI driver and " +
		"turn on CSIMigrationAWS on the controller managers and kubelets before the switch."
}

// ebsCSI checks that EBS volumes do not depend on the in-tree plugin.
func (b *builder) ebsCSI(why string) Step {
	return Step{
		ID:    "ebs-csi",
		Title: "Check that EBS volumes are served by the EBS CSI driver",
		Why:   why,
		Commands: []Command{
			mainCmd(run(KindKubectl, atWorkstation, "PersistentVolumes: in-tree EBS or CSI", "kubectl", "get", "pv",
				"-o", "custom-columns=NAME:.metadata.name,IN-TREE-EBS:.spec.awsElasticBlockStore.volumeID,CSI:.spec.csi.driver")),
			run(KindKubectl, atWorkstation, "StorageClasses and their provisioners", "kubectl", "get", "storageclass",
				"-o", "custom-columns=NAME:.metadata.name,PROVISIONER:.provisioner"),
			run(KindKubectl, atWorkstation, "The EBS CSI driver (nothing printed when it is not installed)", "kubectl", "get", "csidriver", "ebs.csi.aws.com", "--ignore-not-found"),
		},
		Checks: []Check{{
			Description: "EBS",
			Expect: "If any PersistentVolume shows an IN-TREE-EBS volume or any StorageClass the provisioner " +
				"kubernetes.io/aws-ebs, the CSIDriver ebs.csi.aws.com exists and the driver's controller and node " +
				"pods run. Otherwise install the driver (kubernetes-sigs/aws-ebs-csi-driver) before going on.",
		}},
		Rollback: readOnly(),
	}
}

// ecrConfig is the kubelet's CredentialProviderConfig for the
// ecr-credential-provider of the cluster's minor.
func (b *builder) ecrConfig() string {
	m := b.r.minor
	cfgVersion := "kubelet.config.k8s.io/v1"
	switch {
	case m <= 23:
		cfgVersion = "kubelet.config.k8s.io/v1alpha1"
	case m <= 25:
		cfgVersion = "kubelet.config.k8s.io/v1beta1"
	}
	return yamlOf(credentialProviderConfig{APIVersion: cfgVersion, Kind: "CredentialProviderConfig",
		Providers: []credentialProvider{{
			Name:                 "ecr-credential-provider",
			MatchImages:          []quoted{"*.dkr.ecr.*.amazonaws.com", "*.dkr.ecr.*.amazonaws.com.cn"},
			DefaultCacheDuration: "12h",
			APIVersion:           ecrPluginAPI(m),
		}},
	})
}

// credentialProviderConfig is the kubelet's CredentialProviderConfig
// (k8s.io/kubelet config/v1 CredentialProviderConfig).
type credentialProviderConfig struct {
	APIVersion string               `yaml:"apiVersion"`
	Kind       string               `yaml:"kind"`
	Providers  []credentialProvider `yaml:"providers"`
}

type credentialProvider struct {
	Name                 string   `yaml:"name"`
	MatchImages          []quoted `yaml:"matchImages"`
	DefaultCacheDuration quoted   `yaml:"defaultCacheDuration"`
	APIVersion           string   `yaml:"apiVersion"`
}

// configMap is a ConfigMap of string data.
type configMap struct {
	APIVersion string            `yaml:"apiVersion"`
	Kind       string            `yaml:"kind"`
	Metadata   objectMeta        `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
}

type objectMeta struct {
	Name      string `yaml:"name"`
	Namespace string `yaml:"namespace,omitempty"`
}

// cloudConfigChartValues are the chart values that mount the cloud
// config's ConfigMap into the CCM.
type cloudConfigChartValues struct {
	ExtraVolumes      []configMapVolume `yaml:"extraVolumes"`
	ExtraVolumeMounts []volumeMount     `yaml:"extraVolumeMounts"`
}

type configMapVolume struct {
	Name      string     `yaml:"name"`
	ConfigMap objectMeta `yaml:"configMap"`
}

type volumeMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
	ReadOnly  bool   `yaml:"readOnly"`
}

// ecrPluginAPI is the credential provider API the ecr-credential-provider of
// a minor answers in: v1alpha1 up to v1.26 (its cmd/ecr-credential-provider
// at v1.25.15 and v1.26.14), v1 from v1.27.
func ecrPluginAPI(minor int) string {
	if minor <= releases.LastInTreeMinor {
		return "credentialprovider.kubelet.k8s.io/v1alpha1"
	}
	return "credentialprovider.kubelet.k8s.io/v1"
}

// ecrFeatureGate is the kubelet feature gate the plugin needs before 1.24.
func (b *builder) ecrFeatureGate() string {
	if b.r.minor < 24 {
		return "KubeletCredentialProviders=true"
	}
	return ""
}

// ecr sets up the kubelet's image credential provider for ECR.
func (b *builder) ecr(why, binDir string, snippets []Snippet, apply []Command) Step {
	notes := []string{
		"The binary is ecr-credential-provider of kubernetes/cloud-provider-aws " + b.r.tag + " (`make ecr-credential-provider` at " +
			"that tag builds it), on every node under the name the config gives it. It answers in " + ecrPluginAPI(b.r.minor) + ", and the kubelet rejects an answer in " +
			"another apiVersion than configured: binary and apiVersion change together with the minor.",
	}
	if g := b.ecrFeatureGate(); g != "" {
		notes = append(notes, "Before Kubernetes 1.24 the kubelet needs --feature-gates="+g+" for the plugin.")
	}
	if len(apply) > 0 {
		apply[0].Main = true
	}
	return Step{
		ID:       "ecr-credentials",
		Title:    "Give the kubelets the ECR credential provider plugin",
		Why:      why,
		Notes:    notes,
		Snippets: snippets,
		Commands: append([]Command{
			script(KindKubectl, atWorkstation, "Images the cluster pulls from ECR",
				`kubectl get pods --all-namespaces -o jsonpath='{..image}' | tr ' ' '\n' | grep '\.dkr\.ecr\.' | sort -u`),
		}, apply...),
		Checks: []Check{{
			Description: "The plugin itself, on a node, with one of the images listed (ECR_IMAGE)",
			Command: ptr(script(KindNode, atEveryNode, "", fmt.Sprintf(`
printf '{"apiVersion":"%s","kind":"CredentialProviderRequest","image":"%%s"}' "$ECR_IMAGE" \
  | sudo %s/ecr-credential-provider`, ecrPluginAPI(b.r.minor), binDir))),
			Expect: "A CredentialProviderResponse whose auth names the image's registry. An error is the plugin's " +
				"(binary, apiVersion, or the node's IAM role lacks ecr:GetAuthorizationToken). A test pull proves " +
				"nothing up to 1.26: the kubelet merges the credentials of every provider, the built-in amazon-ecr " +
				"one included (pkg/credentialprovider/keyring.go, aws/aws_credentials.go at v1.26.15). No ECR images " +
				"listed: nothing to do.",
		}},
		Rollback: Rollback{Description: "Remove the kubelet flags or files again."},
	}
}

// ecrInTree says why the plugin must be in place before 1.27.
func ecrInTree(minor int) string {
	return "Kubelets pull from ECR with their built-in credential provider (amazon-ecr, " +
		"pkg/credentialprovider/aws), which works whatever --cloud-provider says and is still in the kubelet " +
		"of 1." + strconv.Itoa(minor) + ". Kubernetes 1.27 removed it (kubernetes/kubernetes#116329): ECR pulls stop at the " +
		"upgrade to 1.27 unless every kubelet runs the ecr-credential-provider plugin of " +
		"kubernetes/cloud-provider-aws. Install it now, while both work."
}

func ecrUpgradeNote(minor int) string {
	if minor <= releases.LastInTreeMinor {
		return "ECR: before the kubelets reach 1.27, install the 1.27 release of ecr-credential-provider and set " +
			"the provider's apiVersion to " + ecrPluginAPI(releases.LastInTreeMinor+1) + " (before.ecr-credentials)."
	}
	return "ECR: with the kubelets, move ecr-credential-provider to the release of the new minor " +
		"(before.ecr-credentials)."
}

// grantLease lets the in-tree controller manager take the migration lease.
func (b *builder) grantLease() Step {
	r := b.r
	return Step{
		ID:    "grant-kcm-lease",
		Title: "Let the in-tree controller manager take the migration lease",
		Why: "The Kubernetes 1.26 bootstrap RBAC policy lets " + r.KCMUser + " create Leases but get and update only " +
			"the Lease kube-controller-manager (plugin/pkg/auth/authorizer/rbac/bootstrappolicy at v1.26.15). " +
			"Leader election starts with a get: refused, the in-tree controller manager never starts its cloud " +
			"controllers under leader migration, and the CCM later takes the free lease at once while the " +
			"in-tree provider is still configured. The renderer's --mode=migrate output carries such a Role, but " +
			"it arrives with the CCM, one step too late.",
		Commands: []Command{
			mainCmd(run(KindKubectl, atWorkstation, "A Role for the one lease", "kubectl", "-n", releases.LeaseNamespace, "create", "role", kcmRole,
				"--verb=get,update", "--resource=leases.coordination.k8s.io", "--resource-name="+r.LeaderName)),
			run(KindKubectl, atWorkstation, "Bound to the controller manager's user", "kubectl", "-n", releases.LeaseNamespace, "create", "rolebinding", kcmRole,
				"--role="+kcmRole, "--user="+r.KCMUser),
		},
		Checks: []Check{
			{Description: "The controller manager may update the lease", Command: b.canI("update"), Expect: "yes"},
			{Description: "... and read it", Command: b.canI("get"), Expect: "yes"},
		},
		Notes: []string{
			r.KCMUser + " is the user in the in-tree controller manager's kubeconfig (its client certificate's " +
				"CN): " + distros.Alternatives(distros.DisplayNames(distros.WithMigrate(distros.Named(distros.Records()), true)), "and") + " all use " + renderer.DefaultKCMUser + ". If yours differs, run this plan with " +
				"--kcm-user.",
		},
		Rollback: Rollback{
			Description: "Delete both, as long as the controller manager does not run with leader migration.",
			Commands: []Command{
				run(KindKubectl, atWorkstation, "", "kubectl", "-n", releases.LeaseNamespace, "delete", "rolebinding,role", kcmRole),
			},
		},
	}
}

// etcdSnapshot takes a snapshot before a step that changes the control
// plane; what restores it is the distribution's own command.
func (b *builder) etcdSnapshot(before string, take Command, restore string) Step {
	take.Main = true
	return Step{
		ID:    "etcd-snapshot",
		Title: "Take an etcd snapshot before " + before,
		Why: "The next step restarts the control plane with other flags. A snapshot taken right before it is what " +
			"a restore goes back to if the cluster's state is damaged; a failed step itself is undone by its " +
			"rollback, not by a restore.",
		Commands: []Command{take},
		Checks:   []Check{{Description: "The snapshot", Expect: "The command reports the snapshot saved; copy it off the node."}},
		Rollback: Rollback{Description: "Nothing to undo. " + restore},
	}
}

// kcmLeaderMigration is the distribution's step that turns leader migration
// on in the in-tree controller manager.
func (b *builder) kcmLeaderMigration(s Step) Step {
	s.ID = "kcm-leader-migration"
	s.Title = "Turn on leader migration in the in-tree controller manager"
	s.Why = "With --enable-leader-migration the in-tree controller manager runs its cloud controllers " +
		"(cloud-node-lifecycle, service and route, as a 1." + strconv.Itoa(b.r.minor) + " controller manager names them) only " +
		"while it holds the Lease " + b.r.LeaderName + "; its other controllers stay under its own lease. From now " +
		"on that lease decides which controller manager runs the cloud controllers, and the CCM, installed " +
		"next, waits for it. " + s.Why
	s.Checks = append(s.Checks, Check{
		Description: "Who holds the migration lease (check against the CCM this plan installs)",
		Command:     b.checkRenderedHolding(renderer.ModeMigrate, holderKCM),
		Expect: "Exit 0: the lease line of " + releases.LeaseNamespace + "/" + b.r.LeaderName + " says it is held by the in-tree " +
			"kube-controller-manager. Exit 1 with that line a ✗ (the lease missing, expired or held by " +
			"another): the controller manager does not run with leader migration, or may not take the lease " +
			"(before.grant-kcm-lease); roll this step back.",
	})
	return s
}

// installMigrate installs the CCM beside the in-tree controller manager.
func (b *builder) installMigrate() Step {
	rd := render{mode: renderer.ModeMigrate}
	return Step{
		ID:    "install-ccm",
		Title: "Install the CCM with leader migration (--mode=migrate)",
		Why: "The CCM starts on every control-plane node, leads its own controllers (Lease " + releases.CCMLease + ") and runs the cloud controllers only " +
			"once it holds the Lease " + b.r.LeaderName + ", which the in-tree controller manager keeps renewing. The " +
			"renderer writes the CCM's LeaderMigrationConfiguration (the CCM's controllers by their current and " +
			"pre-1.28 names), the Role that lets the in-tree controller manager at the lease, and this " +
			"distribution's placement and tolerations. Cordoning holds nothing back: the DaemonSet controller " +
			"gives a cordoned node its pod all the same; the lease does. The chart wrapper records these options " +
			"on the release and keeps them on every later upgrade, so an upgrade that forgets --mode=migrate " +
			"stays in migrate mode (docs/chart-wrapper.md); a plain helm upgrade without it would drop leader " +
			"migration.",
		Commands: []Command{b.diff(rd), b.ccmUpgrade("Install the CCM in migrate mode, pinned to the cluster's minor", rd)},
		Checks: []Check{{
			Description: "The CCM against the cluster (wait a minute after the rollout)",
			Command:     b.checkReleaseHolding(holderKCM),
			Expect: "Exit 0: a CCM pod running and ready on every control-plane node, cordoned ones included; the Lease " + releases.CCMLease + " held by the CCM's leader; " + b.r.LeaderName + " still held by the in-tree " +
				"kube-controller-manager. A ✗ on " + b.r.LeaderName + " saying the CCM's leader holds it: the in-tree " +
				"controller manager is not in leader migration, roll back now.",
		}},
		Rollback: Rollback{
			Description: "Uninstall the CCM: the in-tree controller manager holds the lease and goes on alone.",
			Commands:    []Command{b.uninstall()},
		},
	}
}

// handoverExpect is what check shows while the control plane is switched.
func (b *builder) handoverExpect() string {
	return "The lease " + b.r.LeaderName + " is always held: by the in-tree kube-controller-manager until the last " +
		"controller manager with the in-tree provider restarts, then by the CCM's leader. A line saying it " +
		"expired is expected for up to about 25 s while it changes hands (a lease duration of 15 s, then up " +
		"to two retry periods of 2 s with jitter 1.2: k8s.io/client-go tools/leaderelection, the " +
		"component-base defaults); longer means no controller manager runs the cloud controllers: roll back."
}

// verifyHandover checks that the CCM runs the cloud controllers.
func (b *builder) verifyHandover(extra ...Check) Step {
	return Step{
		ID:    "verify",
		Title: "Check that the CCM runs the cloud controllers and every node kept its identity",
		Why: "When the last controller manager with the in-tree provider has restarted with " +
			"--cloud-provider=external, nobody renews the migration lease for it and the CCM takes it. Nodes " +
			"keep their names and provider IDs: the in-tree provider set them, and the CCM recognises them.",
		Checks: append([]Check{
			{
				Description: "The CCM against the cluster",
				Command:     mainCheck(b.checkReleaseHolding(holderCCM)),
				Expect: "Exit 0: " + b.r.LeaderName + " held by the CCM's leader (a ✗ when the in-tree kube-controller-manager " +
					"still holds it), every node initialised by the AWS CCM. " + expectFix,
			},
			{Description: "The same nodes, with the same provider IDs", Command: b.nodesUnchanged(), Expect: "No output: no node was renamed, added or lost its provider ID."},
			{Description: "Load balancers", Command: b.lbServices(), Expect: "Every Service of type LoadBalancer has its ELB hostname, as before."},
		}, extra...),
		Rollback: Rollback{Description: "See the rollback of during.switch."},
	}
}

// installMode renders the CCM without leader migration.
func (b *builder) installMode() Step {
	rd := render{mode: renderer.ModeInstall}
	return Step{
		ID:    "ccm-install-mode",
		Title: "Render the CCM without leader migration (--mode=install)",
		Why: "Leader migration has done its work once no controller manager with the in-tree provider is left to " +
			"start. --mode=install removes --enable-leader-migration, --leader-migration-config, the config's " +
			"ConfigMap, its volume and the Role for the in-tree controller manager; the CCM then runs the cloud " +
			"controllers under its own lease. Only when the switch will not be rolled back: an in-tree " +
			"controller manager started later would run the cloud controllers beside the CCM, since neither " +
			"would look at the migration lease.",
		Commands: []Command{b.diff(rd), b.ccmUpgrade("The CCM alone", rd)},
		Checks: []Check{{
			Description: "The CCM against the cluster",
			Command:     b.checkRelease(),
			Expect: "Exit 0, the workload in install mode. An error that the migration lease is held by the in-tree " +
				"kube-controller-manager means a controller manager still runs the in-tree provider with leader " +
				"migration: roll back at once. A warning that a CCM instance still holds it passes once the rollout " +
				"is done.",
		}},
		Rollback: Rollback{
			Description: "Render with --mode=migrate again (the command of before.install-ccm) before any in-tree controller " +
				"manager starts.",
		},
	}
}

// cleanup removes what only the migration needed.
func (b *builder) cleanup(extra ...Command) Step {
	r := b.r
	cmds := []Command{
		mainCmd(run(KindKubectl, atWorkstation, "The Role of before.grant-kcm-lease", "kubectl", "-n", releases.LeaseNamespace, "delete", "rolebinding,role", kcmRole)),
		run(KindKubectl, atWorkstation, "The migration lease, no longer renewed", "kubectl", "-n", releases.LeaseNamespace, "delete", "lease", r.LeaderName),
	}
	return Step{
		ID:    "cleanup",
		Title: "Remove what only the migration needed",
		Why: "The in-tree controller manager needed get and update on the Lease " + r.LeaderName + " only while it took part in leader " +
			"migration; least privilege says take them back, and drop the stale lease.",
		Commands: append(cmds, extra...),
		Checks:   []Check{{Description: "The grant is gone", Command: b.canI("update"), Expect: "no"}},
		Rollback: Rollback{Description: "Nothing to restore: the cluster does not use these any more."},
	}
}

// clusterTagsExpect is what the cluster-tags check must show. On the
// distribution's own cloud controller every node's provider ID is the
// distribution's (rke2://NODE), which the CCM cannot read: check's
// instance area says so for each node until during.reregister-nodes
// registers them anew.
func (b *builder) clusterTagsExpect() string {
	if b.r.From == FromBuiltin {
		return "No ✗ line in the cluster-id, security-group and subnet areas, and in the instance area only the " +
			"nodes on their " + string(b.r.Distro) + ":// provider IDs, which the CCM cannot read until " +
			"during.reregister-nodes registers them anew: \"every node's instance (N) carries its tag\", one " +
			"tagged security group per instance, and per zone of the nodes a subnet for internet-facing and " +
			"internal load balancers. Each ✗ line names the instance, security group or subnet and the aws " +
			"command that fixes it."
	}
	return "No ✗ line in the instance, cluster-id, security-group and subnet areas: \"every node's instance " +
		"(N) carries its tag\", one tagged security group per instance, and per zone of the nodes a subnet " +
		"for internet-facing and internal load balancers. Each ✗ line names the instance, security group " +
		"or subnet and the aws command that fixes it."
}

// upgradeIAMNote says to run before.iam of each minor's plan on the way.
func (b *builder) upgradeIAMNote() string {
	next := ""
	if hint := b.iamHint(b.r.minor + 1); hint != "" {
		next = " (for 1." + strconv.Itoa(b.r.minor+1) + ": `" + hint + "`)"
	}
	return "At every CCM minor: run before.iam of that minor's plan" + next + ": it prints the policy of that release. " +
		"v1.26.1 and later ensure no load balancer without " + releases.ActionDescribeAZs + "; v1.30 and later initialise " +
		"no node without it and ask for " + releases.ActionInstanceTopology + "."
}

// upgradeNotes are what every distribution's upgrade shares, for the
// next minors.
func (b *builder) upgradeNotes() []string {
	r := b.r
	notes := []string{
		"One minor at a time, the control plane first, then the CCM of the same minor: a CCM must not be " +
			"newer than the API server (the version skew policy), and the AWS CCM is made for its own minor.",
		b.upgradeIAMNote(),
		ecrUpgradeNote(r.minor),
	}
	if v2, _ := releases.UsesSDKv2(r.tag); r.CloudConfig && !v2 {
		notes = append(notes, "The cloud config: CCM releases on aws-sdk-go-v2 ("+releases.SDKv2Releases()+") read the [ServiceOverride] sections "+
			"by service ID; before.cloud-config wrote both names, so nothing changes (check names an override "+
			"the release ignores).")
	}
	return notes
}

// iamHint is the plan command that prints before.iam of a later minor, ""
// when this program knows no plan of it.
func (b *builder) iamHint(minor int) string {
	r := b.r
	if _, ok := releases.Latest(minor); !ok || r.profile.Node.LastMinor != 0 && minor > r.profile.Node.LastMinor {
		return ""
	}
	from := r.From
	switch {
	case from == FromInTree && minor > releases.LastInTreeMinor:
		from = FromNew
	case from == FromInTree:
		from = ""
	}
	o := DefaultOptions()
	o.Distro, o.KubeVersion, o.From = r.Distro, fmt.Sprintf("1.%d", minor), from
	return strings.Join(append([]string{"aws-ccm-renderer", "plan"}, o.Flags()...), " ") + " --step before.iam"
}

// upgrade moves the cluster past the in-tree provider, with the CCM
// following every minor.
func (b *builder) upgrade(how string, notes []string, checks ...Check) Step {
	r := b.r
	next := r.minor + 1
	tag, ok := releases.Latest(next)
	var cmds []Command
	notes = append(b.upgradeNotes(), notes...)
	if ok {
		cmds = append(cmds, b.upgrade1(next, tag))
		if r.Helm {
			notes = append(notes, "Plain Helm cannot ask the cluster its version: add --post-renderer-args=--kube-version=<the new "+
				"version> so that the renderer checks the CCM against it.")
		}
	} else {
		notes = append(notes, "No CCM release of 1."+strconv.Itoa(next)+" is known to this version of aws-ccm-renderer: pick the latest v1."+strconv.Itoa(next)+".x tag of "+
			"registry.k8s.io/provider-aws/cloud-controller-manager.")
	}
	gate := b.checkRelease()
	if len(cmds) == 0 {
		gate = mainCheck(gate)
	}
	return Step{
		ID:       "upgrade",
		Title:    "Upgrade Kubernetes, and the CCM with every minor",
		Why:      how,
		Notes:    notes,
		Commands: cmds,
		Checks: append([]Check{{
			Description: "The CCM against the cluster, after each minor",
			Command:     gate,
			Expect:      "Exit 0: the CCM's minor is the API server's, every node initialised. " + expectFix,
		}}, checks...),
		Rollback: Rollback{
			Description: "A control plane cannot go back a minor in place. Roll back the CCM alone, to the release of the " +
				"minor the control plane runs.",
			Commands: []Command{run(KindRenderer, atWorkstation, "", "helm", "rollback", r.Release, "--namespace", r.Namespace, "--wait")},
		},
	}
}

// upgrade1 is the CCM command of the next minor.
func (b *builder) upgrade1(next int, tag string) Command {
	// The new version is the cluster's by then: the chart wrapper asks the
	// API server for it; with plain Helm only the operator knows it.
	rd := render{mode: renderer.ModeInstall, tag: tag, noKubeVersion: true}
	return b.ccmUpgrade("After the control plane runs 1."+strconv.Itoa(next)+": the CCM of 1."+strconv.Itoa(next), rd)
}
