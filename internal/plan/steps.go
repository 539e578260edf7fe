package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// The steps every distribution shares, with the distribution's part passed
// in. A step's ID is its name here; Build prefixes the phase.

func readOnly() Rollback {
	return Rollback{Description: prose("steps.readOnly.description", nil)}
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
		run(KindKubectl, atWorkstation, b.text("steps.preflight.cmds"), "kubectl", "version"),
		script(KindKubectl, atWorkstation, b.text("steps.preflight.cmds.2"),
			shellLine(b.nodesArgv())+" | tee nodes-before.txt"),
	}, extra...)
	return Step{
		ID:       "preflight",
		Title:    b.text("steps.preflight.title"),
		Why:      b.textWith("steps.preflight.why", map[string]any{"chartImage": defaultChartImage(r.ChartVersion)}),
		Commands: cmds,
		Checks: []Check{
			{Description: "The server version", Expect: b.text("steps.preflight.check.expect")},
			{Description: "The nodes", Expect: expectNodes},
			{Description: b.text("steps.preflight.check.description"), Command: mainCheck(b.checkRendered(mode)), Expect: expectCheck + " " + expectFix},
		},
		Rollback: readOnly(),
	}
}

// defaultChartImage is the CCM image tag a chart version deploys by default.
func defaultChartImage(chartVersion string) string {
	if tag, ok := releases.DefaultImageTag(chartVersion); ok {
		return tag
	}
	return prose("steps.defaultChartImage", nil)
}

// hostnameLabel finds what depends on the kubernetes.io/hostname label,
// which the switch may change.
func (b *builder) hostnameLabel(why string, notes ...string) Step {
	return Step{
		ID:    "hostname-label",
		Title: b.text("steps.hostname-label.title"),
		Why:   b.textWith("steps.hostname-label.why", map[string]any{"why": why}),
		Notes: append(notes,
			b.text("steps.hostname-label.notes")),
		Commands: []Command{
			mainCmd(script(KindKubectl, atWorkstation, b.text("steps.hostname-label.command"), `
kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.metadata.labels.kubernetes\.io/hostname}{"\n"}{end}' \
  | awk '$1 != $2'`)),
			script(KindKubectl, atWorkstation, b.text("steps.hostname-label.command.2"), `
kubectl get pv -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.spec.nodeAffinity.required.nodeSelectorTerms[*].matchExpressions[?(@.key=="kubernetes.io/hostname")].values[*]}{"\n"}{end}' \
  | awk 'NF > 1'`),
			script(KindKubectl, atWorkstation, b.text("steps.hostname-label.command.3"), `
kubectl get pods --all-namespaces -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}{" "}{.spec.nodeSelector.kubernetes\.io/hostname}{" "}{.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[*].matchExpressions[?(@.key=="kubernetes.io/hostname")].values[*]}{"\n"}{end}' \
  | awk 'NF > 1'`),
		},
		Checks: []Check{{
			Description: b.text("steps.hostname-label.check.description"),
			Expect:      b.text("steps.hostname-label.check.expect"),
		}},
		Rollback: readOnly(),
	}
}

// iam compares the control-plane instances' IAM role with what the pinned
// CCM release needs.
func (b *builder) iam(who string, k3s bool) Step {
	r := b.r
	actions := releases.IAMPolicy(r.tag)
	role := script(KindAWS, atAWS, b.text("steps.iam.role"), `
CP_ROLE=$(aws iam get-instance-profile --instance-profile-name "$(aws ec2 describe-instances --instance-ids "$INSTANCE_ID" \
    --query 'Reservations[0].Instances[0].IamInstanceProfile.Arn' --output text | awk -F/ '{print $NF}')" \
  --query 'InstanceProfile.Roles[0].Arn' --output text)`)
	simulate := `
aws iam simulate-principal-policy --policy-source-arn "$CP_ROLE" \
  --action-names $(grep -o '"[a-z0-9-]*:[A-Za-z]*"' ccm-control-plane-policy.json | tr -d '"') \
  --query 'EvaluationResults[?EvalDecision!=` + "`allowed`" + `].EvalActionName' --output text`
	notes := []string{b.text("steps.iam.notes")}
	onlyCode, onlyDocs := releases.IAMDiff(r.tag)
	var called, deps []string
	for _, c := range onlyCode {
		called = append(called, c.Action)
	}
	for _, d := range releases.IAMDependencies {
		deps = append(deps, d.Action)
	}
	snippets := []Snippet{{File: "ccm-control-plane-policy.json", Language: "json", Content: policyJSON(actions),
		Note: b.textWith("steps.iam.snippets.note", map[string]any{"dependencies": strings.Join(deps, ", "),
			"onlyCode": strings.Join(called, ", "), "onlyDocs": len(onlyDocs)})}}
	attach := []Command{role, (script(KindAWS, atAWS, b.text("steps.iam.attach"),
		`aws iam put-role-policy --role-name "${CP_ROLE##*/}" --policy-name aws-cloud-controller-manager \
  --policy-document file://ccm-control-plane-policy.json`))}
	var tgAttrs []string
	for _, a := range []string{releases.ActionDescribeTargetGroupAttributes, releases.ActionModifyTargetGroupAttributes} {
		if slices.Contains(actions, a) {
			tgAttrs = append(tgAttrs, a)
		}
	}
	notes = append(notes, b.textWith("steps.iam.notes.2", map[string]any{"targetGroupAttributes": strings.Join(tgAttrs, " and ")}))
	why := b.textWith("steps.iam.why.calls", map[string]any{"missing": iamMissingBy(r.tag), "targetGroupAttributes": strings.Join(tgAttrs, " and ")}) + " "
	if k3s {
		why += b.textWith("steps.iam.why", map[string]any{"neverCalledAWS": b.neverCalledAWS()})
		snippets = append(snippets, Snippet{File: "ccm-node-policy.json", Language: "json", Content: policyJSON(releases.IAMNode()),
			Note: b.text("steps.iam.snippets.note.2")})
		notes = append(notes, b.text("steps.iam.notes.3"))
	} else {
		why += who
	}
	return Step{
		ID:       "iam",
		Title:    b.text("steps.iam.title"),
		Why:      why,
		Notes:    notes,
		Snippets: snippets,
		Commands: attach,
		Checks: []Check{{
			Description: b.text("steps.iam.check.description"),
			Command:     mainCheck(b.checkRenderedAWS(b.firstMode())),
			Expect:      b.text("steps.iam.check.expect"),
		}, {
			Description: b.text("steps.iam.check.description.2"),
			Command:     ptr(script(KindAWS, atAWS, "", simulate)),
			Expect:      b.text("steps.iam.check.expect.2"),
		}},
		Rollback: Rollback{
			Description: b.text("steps.iam.rollback.description"),
			Commands: []Command{script(KindAWS, atAWS, "",
				`aws iam delete-role-policy --role-name "${CP_ROLE##*/}" --policy-name aws-cloud-controller-manager`)},
		},
	}
}

// clusterTags checks the kubernetes.io/cluster/<id> tags the CCM needs.
func (b *builder) clusterTags(previously string) Step {
	return Step{
		ID:    "cluster-tags",
		Title: b.text("steps.cluster-tags.title"),
		Why:   b.textWith("steps.cluster-tags.why", map[string]any{"previously": previously}),
		Notes: []string{
			b.text("steps.cluster-tags.notes"),
		},
		Commands: []Command{
			script(KindAWS, atAWS, b.text("steps.cluster-tags.command"), `
aws ec2 describe-instances --filters "Name=tag-key,Values=kubernetes.io/cluster/$CLUSTER_ID" \
  --query 'Reservations[].Instances[].[InstanceId,PrivateDnsName]' --output text`),
			script(KindAWS, atAWS, b.text("steps.cluster-tags.command.2"), `
aws ec2 describe-subnets --filters "Name=tag-key,Values=kubernetes.io/cluster/$CLUSTER_ID" \
  --query 'Subnets[].[SubnetId,AvailabilityZone]' --output text`),
			script(KindAWS, atAWS, b.text("steps.cluster-tags.command.3"), `
aws ec2 describe-security-groups --filters "Name=tag-key,Values=kubernetes.io/cluster/$CLUSTER_ID" \
  --query 'SecurityGroups[].[GroupId,GroupName]' --output text`),
		},
		Checks: []Check{{
			Description: b.text("steps.cluster-tags.check.description"),
			Command:     mainCheck(b.checkRenderedAWS(b.firstMode())),
			Expect:      b.clusterTagsExpect(),
		}, {
			Description: b.text("steps.cluster-tags.check.description.2"),
			Expect:      b.text("steps.cluster-tags.check.expect.2"),
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
	why := b.textWith("steps.cloudConfig.why", map[string]any{"sDKv2Releases": upstream.SDKv2Releases(), "source": source, "v1": strings.Join(v1, ", "), "v2": strings.Join(v2, ", ")})
	step := Step{
		ID:    "cloud-config",
		Title: b.text("steps.cloud-config.title"),
		Why:   why,
		Rollback: Rollback{
			Description: b.text("steps.cloud-config.rollback.description"),
			Commands:    []Command{run(KindKubectl, atWorkstation, "", "kubectl", "-n", ns, "delete", "configmap", "aws-cloud-config")},
		},
	}
	if !b.r.CloudConfig {
		read.Main = true
		step.Commands = []Command{*read}
		step.Checks = []Check{{
			Description: b.text("steps.cloudConfig.check.description"),
			Expect:      b.text("steps.cloudConfig.check.expect"),
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
			Note: b.text("steps.cloudConfig.snippet.note"),
		},
		{
			File: cloudConfigValues, Language: "yaml",
			Content: yamlOf(cloudConfigChartValues{
				ExtraVolumes:      []configMapVolume{{Name: "aws-cloud-config", ConfigMap: objectMeta{Name: "aws-cloud-config"}}},
				ExtraVolumeMounts: []volumeMount{{Name: "aws-cloud-config", MountPath: cloudConfigMount, ReadOnly: true}},
			}),
			Note: b.text("steps.cloudConfig.snippet.note.2"),
		},
	}
	step.Commands = []Command{mainCmd(run(KindKubectl, atWorkstation, b.text("steps.cloudConfig.command"), "kubectl", "apply", "-f", "aws-cloud-config.yaml"))}
	if read != nil {
		step.Commands = append([]Command{*read}, step.Commands...)
	}
	step.Checks = []Check{{
		Description: "The ConfigMap",
		Command:     ptr(run(KindKubectl, atWorkstation, "", "kubectl", "-n", ns, "get", "configmap", "aws-cloud-config", "-o", "jsonpath={.data.cloud\\.conf}")),
		Expect:      b.text("steps.cloudConfig.check.expect.2"),
	}}
	return step
}

// routes finds out whether the in-tree route controller manages VPC routes.
func (b *builder) routes(kcmFlags Command, defaults string) Step {
	kcmFlags.Main = true
	s := Step{
		ID:    "routes",
		Title: b.text("steps.routes.title"),
		Why:   b.textWith("steps.routes.why", map[string]any{"defaults": defaults}),
		Commands: []Command{
			kcmFlags,
			script(KindAWS, atAWS, b.text("steps.routes.command"), `
aws ec2 describe-route-tables --filters "Name=tag-key,Values=kubernetes.io/cluster/$CLUSTER_ID" \
  --query 'RouteTables[].[RouteTableId,Routes[?InstanceId].[DestinationCidrBlock,InstanceId]]' --output text`),
		},
		Rollback: readOnly(),
	}
	if b.r.ClusterCIDR != "" {
		s.Checks = []Check{{Description: "Routes", Expect: b.text("steps.routes.check.expect")}}
	} else {
		s.Checks = []Check{{Description: "Routes", Expect: b.text("steps.routes.check.expect.2")}}
	}
	return s
}

// ebsWhy says what happens to in-tree EBS volumes at the switch, for a minor.
func ebsWhy(minor int) string {
	switch {
	case csiMigrationLocked(minor):
		return prose("steps.ebsWhy", textData{Args: map[string]any{"minor": minor}})
	case csiMigrationDefaultOn(minor):
		return prose("steps.ebsWhy.2", textData{Args: map[string]any{"minor": minor}})
	}
	return prose("steps.ebsWhy.3", textData{Args: map[string]any{"minor": minor}})
}

// ebsCSI checks that EBS volumes do not depend on the in-tree plugin.
func (b *builder) ebsCSI(why string) Step {
	return Step{
		ID:    "ebs-csi",
		Title: b.text("steps.ebs-csi.title"),
		Why:   why,
		Commands: []Command{
			mainCmd(run(KindKubectl, atWorkstation, b.text("steps.ebs-csi.command"), "kubectl", "get", "pv",
				"-o", "custom-columns=NAME:.metadata.name,IN-TREE-EBS:.spec.awsElasticBlockStore.volumeID,CSI:.spec.csi.driver")),
			run(KindKubectl, atWorkstation, b.text("steps.ebs-csi.command.2"), "kubectl", "get", "storageclass",
				"-o", "custom-columns=NAME:.metadata.name,PROVISIONER:.provisioner"),
			run(KindKubectl, atWorkstation, b.text("steps.ebs-csi.command.3"), "kubectl", "get", "csidriver", "ebs.csi.aws.com", "--ignore-not-found"),
		},
		Checks: []Check{{
			Description: "EBS",
			Expect:      b.text("steps.ebs-csi.check.expect"),
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
	if minor <= lastInTree {
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
		b.textWith("steps.ecr.notes", map[string]any{"pluginAPI": ecrPluginAPI(b.r.minor)}),
	}
	if g := b.ecrFeatureGate(); g != "" {
		notes = append(notes, b.textWith("steps.ecr.notes.2", map[string]any{"g": g}))
	}
	if len(apply) > 0 {
		apply[0].Main = true
	}
	return Step{
		ID:       "ecr-credentials",
		Title:    b.text("steps.ecr-credentials.title"),
		Why:      why,
		Notes:    notes,
		Snippets: snippets,
		Commands: append([]Command{
			script(KindKubectl, atWorkstation, b.text("steps.ecr-credentials.command"),
				`kubectl get pods --all-namespaces -o jsonpath='{..image}' | tr ' ' '\n' | grep '\.dkr\.ecr\.' | sort -u`),
		}, apply...),
		Checks: []Check{{
			Description: b.text("steps.ecr-credentials.check.description"),
			Command: ptr(script(KindNode, atEveryNode, "", fmt.Sprintf(`
printf '{"apiVersion":"%s","kind":"CredentialProviderRequest","image":"%%s"}' "$ECR_IMAGE" \
  | sudo %s/ecr-credential-provider`, ecrPluginAPI(b.r.minor), binDir))),
			Expect: b.text("steps.ecr-credentials.check.expect"),
		}},
		Rollback: Rollback{Description: b.text("steps.ecr-credentials.rollback.description")},
	}
}

// ecrInTree says why the plugin must be in place before 1.27.
func ecrInTree(minor int) string {
	return prose("steps.ecrInTree", textData{Args: map[string]any{"minor": minor}})
}

func ecrUpgradeNote(minor int) string {
	if minor <= lastInTree {
		return prose("steps.ecrUpgradeNote", textData{Args: map[string]any{"pluginAPI": ecrPluginAPI(lastInTree + 1)}})
	}
	return prose("steps.ecrUpgradeNote.2", nil)
}

// grantLease lets the in-tree controller manager take the migration lease.
func (b *builder) grantLease() Step {
	r := b.r
	return Step{
		ID:    "grant-kcm-lease",
		Title: b.text("steps.grant-kcm-lease.title"),
		Why:   b.text("steps.grant-kcm-lease.why"),
		Commands: []Command{
			mainCmd(run(KindKubectl, atWorkstation, b.text("steps.grant-kcm-lease.command"), "kubectl", "-n", leaseNS, "create", "role", kcmRole,
				"--verb=get,update", "--resource=leases.coordination.k8s.io", "--resource-name="+r.LeaderName)),
			run(KindKubectl, atWorkstation, b.text("steps.grant-kcm-lease.command.2"), "kubectl", "-n", leaseNS, "create", "rolebinding", kcmRole,
				"--role="+kcmRole, "--user="+r.KCMUser),
		},
		Checks: []Check{
			{Description: b.text("steps.grant-kcm-lease.check.description"), Command: b.canI("update"), Expect: "yes"},
			{Description: "... and read it", Command: b.canI("get"), Expect: "yes"},
		},
		Notes: []string{
			b.textWith("steps.grant-kcm-lease.notes", map[string]any{"distros": distros.Alternatives(distros.DisplayNames(distros.WithMigrate(distros.Named(distros.Records()), true)), "and")}),
		},
		Rollback: Rollback{
			Description: b.text("steps.grant-kcm-lease.rollback.description"),
			Commands: []Command{
				run(KindKubectl, atWorkstation, "", "kubectl", "-n", leaseNS, "delete", "rolebinding,role", kcmRole),
			},
		},
	}
}

// etcdSnapshot takes a snapshot before a step that changes the control
// plane; what restores it is the distribution's own command.
func (b *builder) etcdSnapshot(before string, take Command, restore string) Step {
	take.Main = true
	return Step{
		ID:       "etcd-snapshot",
		Title:    b.textWith("steps.etcd-snapshot.title", map[string]any{"before": before}),
		Why:      b.text("steps.etcd-snapshot.why"),
		Commands: []Command{take},
		Checks:   []Check{{Description: "The snapshot", Expect: b.text("steps.etcd-snapshot.check.expect")}},
		Rollback: Rollback{Description: "Nothing to undo. " + restore},
	}
}

// kcmLeaderMigration is the distribution's step that turns leader migration
// on in the in-tree controller manager.
func (b *builder) kcmLeaderMigration(s Step) Step {
	s.ID = "kcm-leader-migration"
	s.Title = b.text("steps.kcmLeaderMigration.title")
	s.Why = b.text("steps.kcmLeaderMigration.why") + " " + s.Why
	s.Checks = append(s.Checks, Check{
		Description: b.text("steps.kcmLeaderMigration.check.description"),
		Command:     b.checkRenderedHolding(renderer.ModeMigrate, holderKCM),
		Expect:      b.text("steps.kcmLeaderMigration.check.expect"),
	})
	return s
}

// installMigrate installs the CCM beside the in-tree controller manager.
func (b *builder) installMigrate() Step {
	rd := render{mode: renderer.ModeMigrate}
	return Step{
		ID:       "install-ccm",
		Title:    b.text("steps.install-ccm.title"),
		Why:      b.text("steps.install-ccm.why"),
		Commands: []Command{b.diff(rd), b.ccmUpgrade(b.text("steps.install-ccm.command.ccmUpgrade"), rd)},
		Checks: []Check{{
			Description: b.text("steps.install-ccm.check.description"),
			Command:     b.checkReleaseHolding(holderKCM),
			Expect:      b.text("steps.install-ccm.check.expect"),
		}},
		Rollback: Rollback{
			Description: b.text("steps.install-ccm.rollback.description"),
			Commands:    []Command{b.uninstall()},
		},
	}
}

// handoverExpect is what check shows while the control plane is switched.
func (b *builder) handoverExpect() string {
	return b.text("steps.handoverExpect")
}

// verifyHandover checks that the CCM runs the cloud controllers.
func (b *builder) verifyHandover(extra ...Check) Step {
	return Step{
		ID:    "verify",
		Title: b.text("steps.verify.title"),
		Why:   b.text("steps.verify.why"),
		Checks: append([]Check{
			{
				Description: b.text("steps.verify.check.description"),
				Command:     mainCheck(b.checkReleaseHolding(holderCCM)),
				Expect:      b.text("steps.verify.check.expect"),
			},
			{Description: b.text("steps.verify.check.description.2"), Command: b.nodesUnchanged(), Expect: b.text("steps.verify.check.expect.2")},
			{Description: "Load balancers", Command: b.lbServices(), Expect: b.text("steps.verify.check.expect.3")},
		}, extra...),
		Rollback: Rollback{Description: b.text("steps.verify.rollback.description")},
	}
}

// installMode renders the CCM without leader migration.
func (b *builder) installMode() Step {
	rd := render{mode: renderer.ModeInstall}
	return Step{
		ID:       "ccm-install-mode",
		Title:    b.text("steps.ccm-install-mode.title"),
		Why:      b.text("steps.ccm-install-mode.why"),
		Commands: []Command{b.diff(rd), b.ccmUpgrade("The CCM alone", rd)},
		Checks: []Check{{
			Description: b.text("steps.ccm-install-mode.check.description"),
			Command:     b.checkRelease(),
			Expect:      b.text("steps.ccm-install-mode.check.expect"),
		}},
		Rollback: Rollback{
			Description: b.text("steps.ccm-install-mode.rollback.description"),
		},
	}
}

// cleanup removes what only the migration needed.
func (b *builder) cleanup(extra ...Command) Step {
	r := b.r
	cmds := []Command{
		mainCmd(run(KindKubectl, atWorkstation, b.text("steps.cleanup.cmds"), "kubectl", "-n", leaseNS, "delete", "rolebinding,role", kcmRole)),
		run(KindKubectl, atWorkstation, b.text("steps.cleanup.cmds.2"), "kubectl", "-n", leaseNS, "delete", "lease", r.LeaderName),
	}
	return Step{
		ID:       "cleanup",
		Title:    b.text("steps.cleanup.title"),
		Why:      b.text("steps.cleanup.why"),
		Commands: append(cmds, extra...),
		Checks:   []Check{{Description: "The grant is gone", Command: b.canI("update"), Expect: "no"}},
		Rollback: Rollback{Description: b.text("steps.cleanup.rollback.description")},
	}
}

// clusterTagsExpect is what the cluster-tags check must show. On the
// distribution's own cloud controller every node's provider ID is the
// distribution's (rke2://NODE), which the CCM cannot read: check's
// instance area says so for each node until during.reregister-nodes
// registers them anew.
func (b *builder) clusterTagsExpect() string {
	if b.r.From == FromBuiltin {
		return b.textWith("steps.cluster-tags.check.expect.builtin", map[string]any{"scheme": string(b.r.Distro) + "://"})
	}
	return b.text("steps.cluster-tags.check.expect")
}

// upgradeNotes are what every distribution's upgrade shares, for the
// next minors.
func (b *builder) upgradeNotes() []string {
	r := b.r
	notes := []string{
		b.text("steps.upgradeNotes.notes"),
		b.textWith("steps.upgradeNotes.notes.2", map[string]any{"next": r.minor + 1, "hint": b.iamHint(r.minor + 1)}),
		ecrUpgradeNote(r.minor),
	}
	if v2, _ := upstream.UsesSDKv2(r.tag); r.CloudConfig && !v2 {
		notes = append(notes, b.textWith("steps.upgradeNotes.notes.3", map[string]any{"sDKv2Releases": upstream.SDKv2Releases()}))
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
	case from == FromInTree && minor > lastInTree:
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
			notes = append(notes, b.text("steps.upgrade.notes"))
		}
	} else {
		notes = append(notes, b.textWith("steps.upgrade.notes.2", map[string]any{"next": next}))
	}
	gate := b.checkRelease()
	if len(cmds) == 0 {
		gate = mainCheck(gate)
	}
	return Step{
		ID:       "upgrade",
		Title:    b.text("steps.upgrade.title"),
		Why:      how,
		Notes:    notes,
		Commands: cmds,
		Checks: append([]Check{{
			Description: b.text("steps.upgrade.check.description"),
			Command:     gate,
			Expect:      b.text("steps.upgrade.check.expect"),
		}}, checks...),
		Rollback: Rollback{
			Description: b.text("steps.upgrade.rollback.description"),
			Commands:    []Command{run(KindRenderer, atWorkstation, "", "helm", "rollback", r.Release, "--namespace", r.Namespace, "--wait")},
		},
	}
}

// upgrade1 is the CCM command of the next minor.
func (b *builder) upgrade1(next int, tag string) Command {
	// The new version is the cluster's by then: the chart wrapper asks the
	// API server for it; with plain Helm only the operator knows it.
	rd := render{mode: renderer.ModeInstall, tag: tag, noKubeVersion: true}
	return b.ccmUpgrade(b.textWith("steps.upgrade1.ccmUpgrade", map[string]any{"next": next}), rd)
}
