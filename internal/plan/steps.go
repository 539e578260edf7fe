package plan

import (
	"fmt"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// The steps every distribution shares, with the distribution's part passed
// in. A step's ID is its name here; Build prefixes the phase.

func readOnly() Rollback {
	return Rollback{Description: "Nothing to undo: this step only reads."}
}

// preflight takes stock of versions, node names and provider IDs.
func (b *builder) preflight(expectNodes string) Step {
	r := b.r
	return Step{
		ID:    "preflight",
		Title: "Take stock: the Kubernetes version, the CCM release, node names and provider IDs",
		Why: fmt.Sprintf("The AWS CCM is released per Kubernetes minor, and a release is only meant to run against "+
			"its own minor (kubernetes/cloud-provider-aws, docs/README.md, \"Compatibility with Kubernetes\"). Chart %s "+
			"deploys %s by default, so every Helm command of this plan pins image.tag=%s: %s. "+
			"The nodes' names and provider IDs are what the CCM knows them by, and nodes-before.txt is what the "+
			"checks of the switch compare with.", r.ChartVersion, defaultChartImage(r.ChartVersion), r.tag, r.tagSource),
		Commands: []Command{
			run(KindKubectl, atWorkstation, "The API server's version", "kubectl", "version"),
			script(KindKubectl, atWorkstation, "Every node's name, provider ID and kubelet version, kept for later checks",
				shellLine(b.nodesArgv())+" | tee nodes-before.txt"),
		},
		Checks: []Check{
			{Description: "The server version", Expect: fmt.Sprintf("Server Version is v1.%d.x; if it is another minor, run this plan again with --kube-version set to it.", r.minor)},
			{Description: "The nodes", Expect: expectNodes},
		},
		Rollback: readOnly(),
	}
}

// defaultChartImage is the CCM image tag a chart version deploys by default.
func defaultChartImage(chartVersion string) string {
	if tag, ok := upstream.DefaultImageTag(chartVersion); ok {
		return tag
	}
	return "the image of its values.yaml"
}

// clusterTags checks the kubernetes.io/cluster/<id> tags the CCM needs.
func (b *builder) clusterTags(previously string) Step {
	return Step{
		ID:    "cluster-tags",
		Title: "Check the kubernetes.io/cluster/<id> tags on instances, subnets and security groups",
		Why: "The CCM takes its cluster ID from the kubernetes.io/cluster/<id> tag (or the legacy KubernetesCluster tag) " +
			"of the EC2 instance it runs on, unless its cloud config sets KubernetesClusterID; with neither, a v1.26 CCM " +
			"exits at start with \"AWS cloud failed to find ClusterID\" (kubernetes/cloud-provider-aws, " +
			"pkg/providers/v1/tags.go). It finds the subnets for load balancers and the one security group per node it " +
			"opens for them by the same tag. " + previously,
		Notes: []string{
			"CLUSTER_ID is the <id> of the tag: the instances of the cluster carry kubernetes.io/cluster/<id> with the value owned or shared.",
		},
		Commands: []Command{
			script(KindAWS, atAWS, "The instances tagged for the cluster", `
aws ec2 describe-instances --filters "Name=tag-key,Values=kubernetes.io/cluster/$CLUSTER_ID" \
  --query 'Reservations[].Instances[].[InstanceId,PrivateDnsName]' --output text`),
			script(KindAWS, atAWS, "The subnets tagged for the cluster", `
aws ec2 describe-subnets --filters "Name=tag-key,Values=kubernetes.io/cluster/$CLUSTER_ID" \
  --query 'Subnets[].[SubnetId,AvailabilityZone]' --output text`),
			script(KindAWS, atAWS, "The security groups tagged for the cluster", `
aws ec2 describe-security-groups --filters "Name=tag-key,Values=kubernetes.io/cluster/$CLUSTER_ID" \
  --query 'SecurityGroups[].[GroupId,GroupName]' --output text`),
		},
		Checks: []Check{{
			Description: "Tags",
			Expect: "Every instance of nodes-before.txt is listed (at least every control-plane instance: the CCM runs there), " +
				"the subnets of the cluster's load balancers are listed, and each node has exactly one tagged security group. " +
				"Tag what is missing before going on.",
		}},
		Rollback: readOnly(),
	}
}

// cloudConfig carries the in-tree provider's --cloud-config to the CCM.
func (b *builder) cloudConfig(source string, read Command) Step {
	ns := b.r.Namespace
	return Step{
		ID:    "cloud-config",
		Title: "Carry the cloud config over to the CCM",
		Why: "The in-tree provider read its settings from the file named by --cloud-config (a [Global] section: " +
			"KubernetesClusterID, RoleARN, SubnetID, ElbSecurityGroup, DisableSecurityGroupIngress, ... and " +
			"[ServiceOverride] sections). The CCM reads the same format from its own --cloud-config, and from nothing else: " +
			"once the cluster runs the external provider the controllers no longer see the file. " + source,
		Notes: []string{
			"Skip this step when the cluster has no cloud config or its [Global] section is empty.",
			"When you use it, add `-f ccm-cloud-config-values.yaml --post-renderer-args=--set-arg=cloud-config=/etc/aws-ccm/cloud.conf` to every helm command of this plan, in every phase.",
		},
		Snippets: []Snippet{
			{
				File: "aws-cloud-config.yaml", Language: "yaml",
				Content: fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: aws-cloud-config
  namespace: %s
data:
  cloud.conf: |
    [Global]
    # the settings of the in-tree provider's file, unchanged, e.g.
    KubernetesClusterID = my-cluster
`, ns),
				Note: "Replace the example line with the content of the in-tree provider's file.",
			},
			{
				File: "ccm-cloud-config-values.yaml", Language: "yaml",
				Content: `extraVolumes:
  - name: aws-cloud-config
    configMap:
      name: aws-cloud-config
extraVolumeMounts:
  - name: aws-cloud-config
    mountPath: /etc/aws-ccm
    readOnly: true
`,
				Note: "Chart values (extraVolumes and extraVolumeMounts exist in chart 0.0.11); the renderer keeps them and adds its own volume in migrate mode.",
			},
		},
		Commands: []Command{
			read,
			run(KindKubectl, atWorkstation, "Store it for the CCM", "kubectl", "apply", "-f", "aws-cloud-config.yaml"),
		},
		Checks: []Check{{
			Description: "The ConfigMap",
			Command:     ptr(run(KindKubectl, atWorkstation, "", "kubectl", "-n", ns, "get", "configmap", "aws-cloud-config", "-o", "jsonpath={.data.cloud\\.conf}")),
			Expect:      "The same settings as the in-tree provider's file.",
		}},
		Rollback: Rollback{
			Description: "Delete the ConfigMap (nothing uses it yet).",
			Commands:    []Command{run(KindKubectl, atWorkstation, "", "kubectl", "-n", ns, "delete", "configmap", "aws-cloud-config")},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// ebsCSI checks that EBS volumes do not depend on the in-tree plugin.
func (b *builder) ebsCSI(why string) Step {
	return Step{
		ID:    "ebs-csi",
		Title: "Check that EBS volumes are served by the EBS CSI driver",
		Why:   why,
		Commands: []Command{
			run(KindKubectl, atWorkstation, "The EBS CSI driver", "kubectl", "get", "csidriver", "ebs.csi.aws.com"),
			run(KindKubectl, atWorkstation, "StorageClasses and their provisioners", "kubectl", "get", "storageclass",
				"-o", "custom-columns=NAME:.metadata.name,PROVISIONER:.provisioner"),
			run(KindKubectl, atWorkstation, "PersistentVolumes: in-tree EBS or CSI", "kubectl", "get", "pv",
				"-o", "custom-columns=NAME:.metadata.name,IN-TREE-EBS:.spec.awsElasticBlockStore.volumeID,CSI:.spec.csi.driver"),
		},
		Checks: []Check{{
			Description: "EBS",
			Expect: "If any PersistentVolume shows an IN-TREE-EBS volume or any StorageClass the provisioner kubernetes.io/aws-ebs, " +
				"the CSIDriver ebs.csi.aws.com exists and the driver's controller and node pods run. Otherwise install the " +
				"driver (kubernetes-sigs/aws-ebs-csi-driver) before going on. New StorageClasses use provisioner ebs.csi.aws.com.",
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
	return fmt.Sprintf(`apiVersion: %s
kind: CredentialProviderConfig
providers:
  - name: ecr-credential-provider
    matchImages:
      - "*.dkr.ecr.*.amazonaws.com"
      - "*.dkr.ecr.*.amazonaws.com.cn"
    defaultCacheDuration: "12h"
    apiVersion: %s
`, cfgVersion, ecrPluginAPI(m))
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
func (b *builder) ecr(why string, snippets []Snippet, apply []Command) Step {
	notes := []string{
		fmt.Sprintf("The binary is ecr-credential-provider of kubernetes/cloud-provider-aws at the release of the cluster's minor (%s: `make ecr-credential-provider` at that tag builds it), installed on every node under the name the config gives it.", b.r.tag),
		fmt.Sprintf("The kubelet rejects a plugin answer whose apiVersion is not the one configured (kubernetes pkg/credentialprovider/plugin); ecr-credential-provider up to v1.26 answers in credentialprovider.kubelet.k8s.io/v1alpha1, from v1.27 in v1, so the config above is for the %s release. Change binary and apiVersion together when the cluster moves to another minor.", b.r.tag),
	}
	if g := b.ecrFeatureGate(); g != "" {
		notes = append(notes, "Before Kubernetes 1.24 the kubelet needs --feature-gates="+g+" for the plugin.")
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
			Description: "A pull from ECR through the plugin",
			Command: ptr(script(KindKubectl, atWorkstation, "", `
kubectl run ecr-pull-test --image="$ECR_IMAGE" --image-pull-policy=Always --restart=Never --command -- true
kubectl get pod ecr-pull-test -o jsonpath='{.status.containerStatuses[0].state}{"\n"}'; kubectl delete pod ecr-pull-test`)),
			Expect: "With ECR_IMAGE one of the images listed above: the state is running or terminated, not waiting " +
				"with ErrImagePull or ImagePullBackOff. No ECR images listed: nothing to do in this step.",
		}},
		Rollback: Rollback{Description: "Remove the kubelet flags or files again; the in-tree ECR provider keeps working until Kubernetes 1.27."},
	}
}

func ecrUpgradeNote(minor int) string {
	if minor <= lastInTree {
		return fmt.Sprintf("ECR pulls: before the kubelets reach 1.27, install the 1.27 release of ecr-credential-provider and set the provider's apiVersion to %s (before.ecr-credentials).", ecrPluginAPI(lastInTree+1))
	}
	return "ECR pulls: with the kubelets, move ecr-credential-provider to the release of the new minor (before.ecr-credentials)."
}

// grantLease lets the in-tree controller manager take the migration lease.
func (b *builder) grantLease() Step {
	r := b.r
	return Step{
		ID:    "grant-kcm-lease",
		Title: "Let the in-tree controller manager take the migration lease",
		Why: fmt.Sprintf("The Kubernetes 1.26 bootstrap RBAC policy lets %s create Leases but get and update only the "+
			"Lease kube-controller-manager (plugin/pkg/auth/authorizer/rbac/bootstrappolicy at v1.26.15); later "+
			"releases grant every Lease in kube-system. Leader election starts with a get: refused, the in-tree "+
			"controller manager keeps running but never starts its cloud controllers under leader migration, so no "+
			"controller manager runs them, and when the CCM comes it takes the free lease at once while the in-tree "+
			"provider is still configured. The renderer's --mode=migrate output carries a Role for this, but it "+
			"arrives with the CCM, one step too late: grant the lease now, before the controller manager starts "+
			"leader migration. Only get and update on the one lease are granted: creating Leases is already allowed.",
			r.KCMUser),
		Commands: []Command{
			run(KindKubectl, atWorkstation, "A Role for the one lease", "kubectl", "-n", leaseNS, "create", "role", kcmRole,
				"--verb=get,update", "--resource=leases.coordination.k8s.io", "--resource-name="+r.LeaderName),
			run(KindKubectl, atWorkstation, "Bound to the controller manager's user", "kubectl", "-n", leaseNS, "create", "rolebinding", kcmRole,
				"--role="+kcmRole, "--user="+r.KCMUser),
		},
		Checks: []Check{
			{Description: "The controller manager may update the lease", Command: b.canI("update"), Expect: "yes"},
			{Description: "... and read it", Command: b.canI("get"), Expect: "yes"},
		},
		Notes: []string{
			fmt.Sprintf("%s is the user in the in-tree controller manager's kubeconfig (its client certificate's CN): RKE1, RKE2 and kubeadm all use system:kube-controller-manager. If yours differs, run this plan with --kcm-user.", r.KCMUser),
		},
		Rollback: Rollback{
			Description: "Delete both, as long as the controller manager does not run with leader migration.",
			Commands: []Command{
				run(KindKubectl, atWorkstation, "", "kubectl", "-n", leaseNS, "delete", "rolebinding,role", kcmRole),
			},
		},
	}
}

// kcmLeaderMigration is the distribution's step that turns leader migration
// on in the in-tree controller manager.
func (b *builder) kcmLeaderMigration(s Step) Step {
	s.ID = "kcm-leader-migration"
	s.Title = "Turn on leader migration in the in-tree controller manager"
	s.Why = fmt.Sprintf("With --enable-leader-migration the in-tree controller manager runs its cloud controllers "+
		"(cloud-node-lifecycle, service and route, as a 1.26 controller manager names them) only while it holds the "+
		"Lease %s; its other controllers stay under its own lease. From now on that lease decides which controller "+
		"manager runs the cloud controllers, and the CCM, installed next, waits for it. ", b.r.LeaderName) + s.Why
	s.Checks = append(s.Checks, Check{
		Description: "Who holds the migration lease",
		Command:     b.leases(b.r.LeaderName, kcmLease),
		Expect: fmt.Sprintf("The lease %s exists and its HOLDER is the HOLDER of %s: the in-tree controller manager's "+
			"leader runs the cloud controllers under the migration lease. RENEWED moves on every few seconds.", b.r.LeaderName, kcmLease),
	})
	return s
}

// installMigrate installs the CCM beside the in-tree controller manager.
func (b *builder) installMigrate() Step {
	r := b.r
	return Step{
		ID:    "install-ccm",
		Title: "Install the CCM with leader migration (--mode=migrate)",
		Why: fmt.Sprintf("The CCM starts on every control-plane node, leads its own controllers (Lease %s) and runs the "+
			"cloud controllers only once it holds the Lease %s, which the in-tree controller manager keeps renewing. "+
			"The renderer writes the CCM's LeaderMigrationConfiguration (naming the CCM's controllers by their current "+
			"and pre-1.28 names), the Role that lets the in-tree controller manager at the lease, and this "+
			"distribution's placement and tolerations. Cordoning is no part of this: the DaemonSet controller gives a "+
			"cordoned node its pod all the same (it adds the node.kubernetes.io/unschedulable toleration to every "+
			"daemon pod), so the CCM's pods start now; the lease is what holds their cloud controllers back.",
			ccmLease, r.LeaderName),
		Notes: []string{
			"The renderer sees only what Helm renders now, not what runs in the cluster: on a plain helm upgrade it cannot tell that --mode=migrate was forgotten. Pass the same --post-renderer-args on every upgrade until the after phase, and preview each upgrade with aws-ccm-renderer diff --deployed; the DaemonSet records the options it was rendered with (checked below).",
		},
		Commands: []Command{
			b.diff(renderer.ModeMigrate),
			b.helmUpgrade("Install the CCM in migrate mode, pinned to the cluster's minor", renderer.ModeMigrate),
		},
		Checks: []Check{
			{Description: "The DaemonSet rolled out", Command: b.rollout(), Expect: "successfully rolled out"},
			{Description: "Where the pods run", Command: b.pods(), Expect: "One Running pod on each control-plane node, cordoned ones included."},
			{
				Description: "Who holds the migration lease (wait a minute after the rollout)",
				Command:     b.leases(r.LeaderName, kcmLease, ccmLease),
				Expect: fmt.Sprintf("The HOLDER of %s is still the HOLDER of %s; %s has another holder, a CCM pod "+
					"(named after its node). If the CCM holds %s, the in-tree controller manager is not using leader "+
					"migration: uninstall the CCM and check the previous steps.", r.LeaderName, kcmLease, ccmLease, r.LeaderName),
			},
			{
				Description: "The options the renderer recorded on the DaemonSet",
				Command: ptr(run(KindKubectl, atWorkstation, "", "kubectl", "-n", r.Namespace, "get", "daemonset", daemonSet,
					"-o", `jsonpath={.metadata.annotations.aws-ccm-renderer\.io/options}{"\n"}`)),
				Expect: "mode migrate and distro " + string(r.Distro),
			},
		},
		Rollback: Rollback{
			Description: "Uninstall the CCM: the in-tree controller manager holds the lease and goes on alone.",
			Commands:    []Command{b.uninstall()},
		},
	}
}

// verifyHandover checks that the CCM runs the cloud controllers.
func (b *builder) verifyHandover(providerCheck Check) Step {
	r := b.r
	return Step{
		ID:    "verify",
		Title: "Check that the CCM runs the cloud controllers and every node kept its identity",
		Why: "When the last controller manager with the in-tree provider has restarted with --cloud-provider=external, " +
			"the migration lease is no longer renewed by it and the CCM takes it once the record has expired " +
			"(a lease duration after the last renewal). Nodes keep their names and provider IDs: the in-tree provider " +
			"set them, and the CCM recognises them.",
		Commands: []Command{},
		Checks: []Check{
			{
				Description: "Who holds the migration lease",
				Command:     b.leases(r.LeaderName, kcmLease, ccmLease),
				Expect:      fmt.Sprintf("The HOLDER of %s is the HOLDER of %s.", r.LeaderName, ccmLease),
			},
			{Description: "The same nodes, with the same provider IDs", Command: b.nodesUnchanged(), Expect: "No output: no node was renamed, added or lost its provider ID."},
			{Description: "Nodes waiting for a cloud controller", Command: b.uninitialized(), Expect: "No output (a node added during the switch is initialised within seconds)."},
			{Description: "Provider IDs", Command: b.foreignProviderIDs(), Expect: "No output: every node has an aws:/// provider ID."},
			{Description: "Load balancers", Command: b.lbServices(), Expect: "Every Service of type LoadBalancer has its ELB hostname, as before."},
			providerCheck,
		},
		Rollback: Rollback{Description: "See the rollback of the switch."},
	}
}

// installMode renders the CCM without leader migration.
func (b *builder) installMode() Step {
	r := b.r
	return Step{
		ID:    "ccm-install-mode",
		Title: "Render the CCM without leader migration (--mode=install)",
		Why: "Leader migration has done its work once no controller manager with the in-tree provider is left to start. " +
			"--mode=install removes --enable-leader-migration, --leader-migration-config, the config's ConfigMap, " +
			"its volume and the Role for the in-tree controller manager; the CCM then runs the cloud controllers " +
			"under its own lease. Only do this when the switch will not be rolled back: an in-tree controller manager " +
			"started later would run the cloud controllers beside the CCM, since neither would look at the " +
			"migration lease. A plain helm upgrade without --mode=migrate has the same effect at any time, and the " +
			"renderer, which sees only the new render, cannot stop it.",
		Commands: []Command{
			b.diff(renderer.ModeInstall),
			b.helmUpgrade("The CCM alone", renderer.ModeInstall),
		},
		Checks: []Check{
			{Description: "The DaemonSet rolled out", Command: b.rollout(), Expect: "successfully rolled out"},
			{
				Description: "No leader migration in the CCM's arguments",
				Command: ptr(run(KindKubectl, atWorkstation, "", "kubectl", "-n", r.Namespace, "get", "daemonset", daemonSet,
					"-o", `jsonpath={.spec.template.spec.containers[0].args}{"\n"}`)),
				Expect: "No --enable-leader-migration and no --leader-migration-config.",
			},
			{
				Description: "The leases",
				Command:     b.leases(r.LeaderName, ccmLease),
				Expect:      fmt.Sprintf("%s is renewed by a CCM pod; %s is no longer renewed (RENEWED stays put).", ccmLease, r.LeaderName),
			},
			{Description: "Load balancers", Command: b.lbServices(), Expect: "Every Service of type LoadBalancer keeps its ELB hostname."},
		},
		Rollback: Rollback{
			Description: "Render with --mode=migrate again (the command of before.install-ccm) before any in-tree controller manager starts.",
		},
	}
}

// cleanup removes what only the migration needed.
func (b *builder) cleanup(extra []Command, extraNotes []string) Step {
	r := b.r
	cmds := []Command{
		run(KindKubectl, atWorkstation, "The Role of before.grant-kcm-lease", "kubectl", "-n", leaseNS, "delete", "rolebinding,role", kcmRole),
		run(KindKubectl, atWorkstation, "The migration lease, no longer renewed", "kubectl", "-n", leaseNS, "delete", "lease", r.LeaderName),
	}
	return Step{
		ID:    "cleanup",
		Title: "Remove what only the migration needed",
		Why: fmt.Sprintf("The in-tree controller manager needed get and update on the Lease %s only while it took part "+
			"in leader migration; least privilege says take them back, and drop the stale lease.", r.LeaderName),
		Notes:    extraNotes,
		Commands: append(cmds, extra...),
		Checks: []Check{{
			Description: "The grant is gone",
			Command:     b.canI("update"),
			Expect:      "no",
		}},
		Rollback: Rollback{Description: "Nothing to restore: the cluster does not use these any more."},
	}
}

// upgrade moves the cluster past the in-tree provider, with the CCM
// following every minor.
func (b *builder) upgrade(how string, extraChecks []Check) Step {
	r := b.r
	next := r.minor + 1
	tag, ok := CCMReleases[next]
	var cmds []Command
	notes := []string{
		"A CCM must not be newer than the API server (the Kubernetes version skew policy), and the AWS CCM is meant for its own minor: upgrade the control plane first, then the CCM; one minor at a time.",
		ecrUpgradeNote(r.minor),
		"This command leaves out --kube-version, which only you know by then: add --post-renderer-args=--kube-version=<the cluster's new version> so the renderer can warn about skew.",
	}
	if ok {
		cmds = append(cmds, b.helmUpgradeTo(fmt.Sprintf("After the control plane runs 1.%d: the CCM of 1.%d", next, next), renderer.ModeInstall, tag, false))
	} else {
		notes = append(notes, fmt.Sprintf("No CCM release of 1.%d is known to this version of aws-ccm-renderer: pick the latest v1.%d.x tag of registry.k8s.io/provider-aws/cloud-controller-manager.", next, next))
	}
	if r.Distro != renderer.DistroK3s && r.minor < lastInTree {
		notes = append(notes, fmt.Sprintf("The cluster is at 1.%d: it keeps the external provider on the way to 1.27.", r.minor))
	}
	return Step{
		ID:       "upgrade",
		Title:    "Upgrade Kubernetes, and the CCM with every minor",
		Why:      how,
		Notes:    notes,
		Commands: cmds,
		Checks: append([]Check{
			{Description: "The DaemonSet rolled out", Command: b.rollout(), Expect: "successfully rolled out"},
			{Description: "Nodes waiting for a cloud controller", Command: b.uninitialized(), Expect: "No output."},
		}, extraChecks...),
		Rollback: Rollback{
			Description: "Roll the CCM back to the previous release with the control plane.",
			Commands:    []Command{run(KindRenderer, atWorkstation, "", "helm", "rollback", r.Release, "--namespace", r.Namespace, "--wait")},
		},
	}
}
