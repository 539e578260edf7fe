package check

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// Rule is one check: a pure function of a snapshot's view that says what
// it found. It reads the view only, never the cluster: what it needs of
// the cluster, Collect reads into the snapshot.
type Rule struct {
	Name string
	// Area is the area of every finding the rule gives.
	Area string
	Kind Kind
	// Symptom is what an operator sees without check when the rule finds
	// an error (one of the Symptom constants), and Fix what to do, in
	// short; docs/troubleshooting.md is generated from them.
	Symptom string
	Fix     string
	Check   func(v *View) []Finding
}

// Kind tells the rules that judge the cluster from those that judge the
// AWS account (check --aws), which return nothing without it.
type Kind string

const (
	ClusterRule Kind = "cluster"
	AWSRule     Kind = "aws"
)

// The symptoms a rule's error shows as, to an operator without check: the
// headings of docs/troubleshooting.md.
const (
	SymptomNoCCM         = "The CCM pod never starts, or never gets ready"
	SymptomUninitialized = "Nodes stay tainted node.cloudprovider.kubernetes.io/uninitialized (their pods stay Pending)"
	SymptomLoadBalancer  = "LoadBalancer Services stay <pending>, or their load balancer has no healthy targets"
	SymptomMigration     = "During the switch to the external provider, both or neither of the controller managers run the cloud controllers"
	SymptomVolumes       = "After the switch, pods with local or EBS volumes stay Pending (volume node affinity conflict)"
	SymptomUpgrade       = "A component does not start after a Kubernetes or CCM upgrade"
	SymptomSecurity      = "A security review flags the CCM's service account, or a second cloud controller acts on the nodes"
	SymptomAWSUnread     = "check --aws reports what it could not read of the account"
	SymptomNewAddress    = "LoadBalancer Services get a new load balancer and address once the CCM runs"
	SymptomWhatNext      = "It is unclear which steps move this cluster to the AWS CCM"
)

// Fixes a rule's table entry and its findings share.
const (
	fixDistroAuto     = "render with --distro=auto"
	fixMigrateAgain   = "render it again with aws-ccm-renderer --mode=migrate"
	fixUnreadKey      = "remove it, or run a release that reads it"
	FixClusterTags    = "tag every node's instance (and the cluster's subnets and node security group) kubernetes.io/cluster/<ID>=owned, and set KubernetesClusterID = <ID> in the cloud config"
	FixInstanceRegion = "check the account and region (--aws-region), and that the node runs on EC2"
	fixHoldServices   = "to hold them back until their clients and DNS records can follow, render the CCM with --set-arg=controllers=*,-service (it then runs no service controller); let it run once they can"
)

// Rules are the checks Evaluate runs, in this order, and the one list of
// the areas: the report lists the areas in the order of their first rule
// here (Areas) and sorts the findings by area, keeping this order within
// one. A new check is a function of *View added here with its area, the
// symptom its error shows as and the fix (and, when it needs more of the
// cluster than the snapshot holds, a field of Snapshot that Collect
// fills); its tests are literal snapshots (rules_test.go).
var Rules = []Rule{
	{Name: "distribution", Area: AreaDistribution, Kind: ClusterRule, Symptom: SymptomNoCCM,
		Fix: "render again with --distro=DISTRO of the nodes (or --distro=detect), or " + fixDistroAuto, Check: distributionRule},
	{Name: "workload", Area: AreaWorkload, Kind: ClusterRule, Symptom: SymptomUninitialized,
		Fix: "install the CCM: aws-ccm-renderer install --distro=DISTRO; keep --cloud-provider=aws and hostNetwork: true", Check: workloadRule},
	{Name: "leader migration config", Area: AreaWorkload, Kind: ClusterRule, Symptom: SymptomNoCCM,
		Fix: "the LeaderMigrationConfiguration: " + fixMigrateAgain, Check: migrationConfigRule},
	{Name: "cloud config", Area: AreaWorkload, Kind: ClusterRule, Symptom: SymptomLoadBalancer,
		Fix: "add a [ServiceOverride] section naming the service the release's way (the finding gives it)", Check: cloudConfigRule},
	{Name: "cloud config keys", Area: AreaWorkload, Kind: ClusterRule, Symptom: SymptomNoCCM,
		Fix: "the [Global] key it names: " + fixUnreadKey + "; a value it names: one the key accepts", Check: cloudConfigKeysRule},
	{Name: "placement", Area: AreaPlacement, Kind: ClusterRule, Symptom: SymptomNoCCM,
		Fix: "render with --distro=DISTRO, which tolerates its taints, or label the control-plane nodes as the distribution does; a crashing pod: kubectl logs -n NAMESPACE POD", Check: placementRule},
	{Name: "node", Area: AreaNode, Kind: ClusterRule, Symptom: SymptomUninitialized,
		Fix: "start every kubelet with --cloud-provider=external, then drain the node, delete the Node object and restart its kubelet; see the placement and iam findings", Check: nodeRule},
	{Name: "hostname", Area: AreaHostname, Kind: ClusterRule, Symptom: SymptomVolumes,
		Fix: "before the switch, keep the node's name (kubelet --hostname-override=NAME), or recreate the PVs with the new label value", Check: hostnameRule},
	{Name: "in-tree", Area: AreaInTree, Kind: ClusterRule, Symptom: SymptomMigration,
		Fix: "turn on leader migration in the controller manager (plan step before.kcm-leader-migration) and render the CCM with --mode=migrate until every controller manager runs with --cloud-provider=external", Check: inTreeRule},
	{Name: "options", Area: AreaOptions, Kind: ClusterRule, Symptom: SymptomUpgrade,
		Fix: "remove the option the finding names before the upgrade to the release that drops it", Check: optionsRule},
	{Name: "controllers", Area: AreaControllers, Kind: ClusterRule, Symptom: SymptomSecurity,
		Fix: "turn the distribution's cloud controller off (the finding gives the setting); keep one AWS CCM", Check: controllersRule},
	{Name: "aws account", Area: AreaAWS, Kind: AWSRule, Symptom: SymptomAWSUnread,
		Fix: "give the identity check runs as the read-only policy in docs/check.md; choose it with --aws-profile and --aws-region"},
	{Name: "instance", Area: AreaInstance, Kind: AWSRule, Symptom: SymptomUninitialized,
		Fix: FixInstanceRegion},
	{Name: "cluster id", Area: AreaClusterID, Kind: AWSRule, Symptom: SymptomUninitialized,
		Fix: FixClusterTags},
	{Name: "security group", Area: AreaSecurityGroup, Kind: AWSRule, Symptom: SymptomLoadBalancer,
		Fix: "tag one security group of each node's instance kubernetes.io/cluster/<ID>=owned"},
	{Name: "subnet", Area: AreaSubnet, Kind: AWSRule, Symptom: SymptomLoadBalancer,
		Fix: "give each zone of the nodes a subnet tagged kubernetes.io/cluster/<ID>=shared and kubernetes.io/role/elb=1 (internal: kubernetes.io/role/internal-elb=1)"},
	{Name: "iam", Area: AreaIAM, Kind: ClusterRule, Symptom: SymptomUninitialized,
		Fix: "add the refused action to the IAM policy of the control-plane instances' role", Check: iamRule},
	{Name: "iam simulation", Area: AreaIAM, Kind: AWSRule, Symptom: SymptomUninitialized,
		Fix: "add the denied actions to the policy of the principal the CCM calls AWS as (--aws-ccm-principal names another)"},
	{Name: "metadata", Area: AreaMetadata, Kind: AWSRule, Symptom: SymptomNoCCM,
		Fix: "run the CCM with hostNetwork: true, or aws ec2 modify-instance-metadata-options --http-put-response-hop-limit 2"},
	{Name: "load balancer", Area: AreaLoadBalancer, Kind: AWSRule, Symptom: SymptomLoadBalancer,
		Fix: "kubectl describe service shows the CCM's events; turn another controller's Service webhook off to have the CCM serve them"},
	{Name: "service", Area: AreaService, Kind: ClusterRule, Symptom: SymptomLoadBalancer,
		Fix: "on K3s, disable servicelb on the servers and delete ServiceLB's DaemonSets (plan step during.load-balancers)", Check: serviceRule},
	{Name: "load balancer takeover", Area: AreaService, Kind: ClusterRule, Symptom: SymptomNewAddress,
		Fix: fixHoldServices, Check: takeoverRule},
	{Name: "rbac", Area: AreaRBAC, Kind: ClusterRule, Symptom: SymptomNoCCM,
		Fix: "grant what the finding names in the ClusterRole bound to the CCM's service account (the chart's clusterRoleRules value)", Check: rbacRule},
	{Name: "token scope", Area: AreaRBAC, Kind: ClusterRule, Symptom: SymptomSecurity,
		Fix: "render the CCM with --token-scope=controllers", Check: tokenScopeRule},
	{Name: "lease", Area: AreaLease, Kind: ClusterRule, Symptom: SymptomMigration,
		Fix: "keep one CCM per lease; start the in-tree controller manager with --enable-leader-migration before the CCM, or render the CCM with --mode=install once it runs without", Check: leaseRule},
	{Name: "version", Area: AreaVersion, Kind: ClusterRule, Symptom: SymptomUpgrade,
		Fix: "use an AWS CCM release of the API server's minor (the chart's image.tag value)", Check: versionRule},
	{Name: "plan", Area: AreaPlan, Kind: ClusterRule, Symptom: SymptomWhatNext,
		Fix: "run the command the finding gives: aws-ccm-renderer plan --from=... --distro=... --kube-version=...", Check: planRule},
}

// Areas are the areas of Rules, each once, in the order reports list them.
func Areas() []string {
	var out []string
	for _, r := range Rules {
		if !slices.Contains(out, r.Area) {
			out = append(out, r.Area)
		}
	}
	return out
}

// areaOrder is Areas, worked out once.
var areaOrder = Areas()

// AWSArea tells the areas of AWS findings: those whose rules are all AWS
// rules (iam's findings from AWS are those about principals, the events'
// denials are the cluster's, so iam is not one).
func AWSArea(area string) bool {
	found := false
	for _, r := range Rules {
		if r.Area == area {
			if r.Kind != AWSRule {
				return false
			}
			found = true
		}
	}
	return found
}

// workloadRule reports the CCM's workload: none in the cluster, or what it
// is and what of its spec keeps it from working.
func workloadRule(v *View) []Finding {
	w := v.Workload
	if w == nil {
		if v.Source != SourceCluster {
			return nil
		}
		fix := "install it, e.g. aws-ccm-renderer install --distro=" + suggestDistro(v.Distribution.Detected)
		if ns := v.SearchNamespace; ns != "" {
			fix += " (only namespace " + ns + " was searched)"
		}
		return []Finding{{Area: AreaWorkload, Severity: Error, Message: "no AWS CCM DaemonSet or Deployment in the cluster: nothing initialises the nodes", Fix: fix}}
	}
	state := "installed"
	if !w.Installed {
		state = "not installed in the cluster"
	} else if w.AppliedBy != "" {
		state += " by " + w.AppliedBy
	}
	src := map[string]string{SourceManifests: "from the manifests", SourceRelease: "from release " + v.Release, SourceCluster: "found in the cluster"}[v.Source]
	out := []Finding{{Area: AreaWorkload, Severity: OK, Subject: w.subject(),
		Message: fmt.Sprintf("%s, %s: image %s, service account %s, %s mode", src, state, w.ctr.Image, w.ServiceAccount, w.Mode)}}
	if f, ok := v.releaseFinding(); ok {
		out = append(out, f)
	}
	if opts, ok := readOptionsAnnotation(w.c.meta); ok && opts.Mode != "" && string(opts.Mode) != w.Mode {
		out = append(out, Finding{Area: AreaWorkload, Severity: Warning, Subject: w.subject(),
			Message: fmt.Sprintf("the %s annotation says mode %s, but the CCM's flags run it in %s mode", renderer.OptionsAnnotation, opts.Mode, w.Mode),
			Fix:     "render again with aws-ccm-renderer instead of editing the flags"})
	}
	if p := w.flags["cloud-provider"]; p != "aws" {
		out = append(out, Finding{Area: AreaWorkload, Severity: Error, Subject: "container " + w.ctr.Name,
			Message: fmt.Sprintf("--cloud-provider is %q, not aws", p), Fix: "run the CCM with --cloud-provider=aws (aws-ccm-renderer sets it)"})
	}
	if !w.spec.HostNetwork {
		out = append(out, Finding{Area: AreaWorkload, Severity: Warning, Subject: "pod template",
			Message: "the CCM runs in the pod network, which may not be up before the nodes are initialised",
			Fix:     "run it in the host network (hostNetwork: true; aws-ccm-renderer's default)"})
	}
	return out
}

// migrationConfigRule reports the LeaderMigrationConfiguration of a
// workload in migrate mode: the built-in default, a file not mounted from
// a ConfigMap, a ConfigMap that is not there or holds none, or one that
// misses the current controller names.
func migrationConfigRule(v *View) []Finding {
	w := v.Workload
	if w == nil || w.Mode != string(renderer.ModeMigrate) {
		return nil
	}
	f := Finding{Area: AreaWorkload, Subject: "leader migration"}
	switch {
	case w.configFile == "":
		f.Severity = Warning
		f.Message = "--enable-leader-migration without --leader-migration-config: the CCM's built-in configuration names controllers (route, service, cloud-node-lifecycle) that CCMs built on Kubernetes 1.28+ libraries no longer register, so their service controller starts outside the migration lock"
		f.Fix = "render with aws-ccm-renderer --mode=migrate (an explicit LeaderMigrationConfiguration naming both sets of controller names)"
	case w.configMap == "":
		f.Severity = Error
		f.Message = fmt.Sprintf("--leader-migration-config=%s is not a file mounted from a ConfigMap", w.configFile)
		f.Fix = "mount the ConfigMap holding the LeaderMigrationConfiguration there (aws-ccm-renderer --mode=migrate does)"
	case v.MigrationConfigMap == nil:
		f.Severity = Error
		f.Message = fmt.Sprintf("ConfigMap %s/%s, which holds the LeaderMigrationConfiguration, does not exist: the CCM pods cannot start", w.Namespace, w.configMap)
		f.Fix = "install it with the workload (aws-ccm-renderer --mode=migrate renders it)"
	case w.lmc == nil:
		f.Severity = Error
		f.Message = fmt.Sprintf("key %s of ConfigMap %s/%s is no LeaderMigrationConfiguration: %v", w.configKey, w.Namespace, w.configMap, w.lmcErr)
		f.Fix = fixMigrateAgain
	case lockMissing(w.lmc) != "":
		f.Severity = Error
		f.Message = lockMissing(w.lmc)
		f.Fix = "render it again with aws-ccm-renderer --mode=migrate, which writes resourceLock: leases where the API version needs it (or add that line)"
	default:
		var names []string
		for _, l := range w.lmc.ControllerLeaders {
			names = append(names, l.Name)
		}
		if slices.Contains(names, "service-lb-controller") || slices.Contains(names, "*") {
			return nil
		}
		f.Severity = Warning
		f.Message = fmt.Sprintf("the LeaderMigrationConfiguration names %s but not service-lb-controller: a CCM built on Kubernetes 1.28+ libraries starts its service controller outside the migration lock", JoinAnd(names))
		f.Fix = "render with aws-ccm-renderer --mode=migrate, whose configuration names the current and the pre-1.28 controller names"
	}
	return []Finding{f}
}

// distributionRule reports the distribution the nodes show, and whether
// the workload was rendered for it.
func distributionRule(v *View) []Finding {
	d := v.Distribution
	var out []Finding
	evidence := strings.Join(d.Evidence, "; ")
	switch d.Detected {
	case DistroUnknown:
		out = append(out, Finding{Area: AreaDistribution, Severity: Warning,
			Message: fmt.Sprintf("none of the %d nodes shows its distribution (%s)", len(v.Nodes), distros.SignsHint(distros.Records())),
			Fix:     "render with --distro=auto, which places the CCM on the control-plane label of every distribution"})
	case DistroMixed:
		out = append(out, Finding{Area: AreaDistribution, Severity: Warning, Message: "the nodes disagree: " + evidence,
			Fix: fixDistroAuto})
	default:
		out = append(out, Finding{Area: AreaDistribution, Severity: OK, Message: d.Detected + " (" + evidence + ")"})
	}
	w := v.Workload
	if w == nil {
		return out
	}
	f := Finding{Area: AreaDistribution, Subject: w.subject()}
	switch {
	case d.Rendered == "":
		f.Severity = Warning
		f.Message = "not rendered by aws-ccm-renderer (no " + renderer.OptionsAnnotation + " annotation, and its tolerations lack the renderer's): its placement is checked as it is"
		f.Fix = "render the chart through aws-ccm-renderer --distro=" + suggestDistro(d.Detected)
	case d.Detected == DistroUnknown || d.Detected == DistroMixed:
		f.Severity, f.Message = Info, "rendered for "+d.Rendered
	case samePlacement(d.Rendered, d.Detected):
		f.Severity, f.Message = OK, "rendered for "+d.Rendered+", which fits "+d.Detected
	default:
		f.Severity = Error
		f.Message = "rendered for " + d.Rendered + ", but the cluster is " + d.Detected
		f.Fix = "render again with --distro=" + d.Detected + " (or --distro=detect, or --distro=auto)"
	}
	return append(out, f)
}

// placementRule judges placement node by node: whether a CCM pod runs (or
// would run) on each control-plane node and not on the others, and if not
// which rule keeps it off, with the fix.
func placementRule(v *View) []Finding {
	w := v.Workload
	if w == nil {
		return nil
	}
	distro := v.Distribution.Detected
	daemon := w.Kind == "DaemonSet"
	var out []Finding
	var workersWithout, cpWith, cpTotal int
	var noCP []string
	for i := range v.Nodes {
		n := &v.Nodes[i]
		if n.ControlPlane {
			cpTotal++
		}
		switch {
		case n.ControlPlane && n.CCM:
			cpWith++
			out = append(out, v.placedFinding(n))
		case n.ControlPlane:
			noCP = append(noCP, n.Name)
			out = append(out, v.excludedFinding(n, daemon))
		case n.CCM && daemon:
			out = append(out, Finding{Area: AreaPlacement, Severity: Warning, Subject: n.Name,
				Message: "a CCM pod would run on this node, which has no control-plane role",
				Fix:     "place the CCM on control-plane nodes only: render with --distro=" + suggestDistro(distro)})
		default:
			workersWithout++
		}
	}
	if cpTotal == 0 {
		out = append(out, Finding{Area: AreaPlacement, Severity: Error,
			Message: "no node has the control-plane role (no control-plane label or taint, no server node-args): the CCM has nowhere to run",
			Fix:     "label the control-plane nodes, e.g. kubectl label node NAME " + distros.LabelControlPlane + "=true"})
	}
	if !daemon && cpTotal > 0 && cpWith == 0 {
		out = append(out, Finding{Area: AreaPlacement, Severity: Error, Subject: w.subject(),
			Message: "its pods fit no control-plane node (" + strings.Join(noCP, ", ") + ")", Fix: "render with --distro=" + suggestDistro(distro)})
	}
	if workersWithout > 0 {
		out = append(out, Finding{Area: AreaPlacement, Severity: OK,
			Message: fmt.Sprintf("no CCM pod on the %d %s without the control-plane role, as intended", workersWithout, Plural(workersWithout, "node", "nodes"))})
	}
	return out
}

// placedFinding reports a control-plane node the CCM runs on, with its pod.
func (v *View) placedFinding(n *nodeView) Finding {
	w := v.Workload
	f := Finding{Area: AreaPlacement, Subject: n.Name}
	verb := "would run"
	if w.Kind == "Deployment" {
		verb = "may run"
	}
	switch p := n.Pod; {
	case !w.Installed:
		f.Severity, f.Message = OK, "control plane ("+n.ControlPlaneBy+"): a CCM pod "+verb+" here"
	case p == nil && w.Kind == "Deployment":
		f.Severity, f.Message = OK, "control plane ("+n.ControlPlaneBy+"): a CCM pod may run here"
	case p == nil:
		f.Severity, f.Message = Warning, "control plane ("+n.ControlPlaneBy+"): the DaemonSet admits this node, but it has no CCM pod yet"
		f.Fix = "see kubectl describe daemonset -n " + w.Namespace + " " + w.Name
	case p.Waiting == "ImagePullBackOff" || p.Waiting == "ErrImagePull":
		f.Severity, f.Message = Error, fmt.Sprintf("control plane: CCM pod %s is %s: image %s", p.Name, p.Waiting, w.Image)
		f.Fix = pullFix(w.Image, w.Namespace, p.Name)
	case p.Waiting == "CrashLoopBackOff" || p.Waiting == "CreateContainerConfigError":
		f.Severity, f.Message = Error, fmt.Sprintf("control plane: CCM pod %s is %s (%d restarts)", p.Name, p.Waiting, p.Restarts)
		f.Fix = "read its log: kubectl logs -n " + w.Namespace + " " + p.Name
	case p.Ready:
		f.Severity, f.Message = OK, fmt.Sprintf("control plane (%s): CCM pod %s running and ready", n.ControlPlaneBy, p.Name)
	default:
		f.Severity, f.Message = Warning, fmt.Sprintf("control plane: CCM pod %s is %s, not ready", p.Name, p.Phase)
		f.Fix = "see kubectl describe pod -n " + w.Namespace + " " + p.Name
	}
	return f
}

// pullFix says how to get a CCM image that cannot be pulled: a tag of
// registry.k8s.io's CCM that its promotion list lacks was never promoted,
// and the minor's promoted release is the one to pin; any other image, the
// pod's events say why.
func pullFix(image, namespace, pod string) string {
	describe := "kubectl describe pod -n " + namespace + " " + pod + " shows the registry's answer"
	tag, ok := upstreamTag(image)
	if !ok {
		return describe
	}
	if _, promoted := releases.Digest(tag); promoted {
		return describe + " (" + tag + " is promoted: is registry.k8s.io, or your mirror, reachable from the node?)"
	}
	minor, ok := minorOf(tag)
	if latest, known := releases.Latest(minor); ok && known && latest != tag {
		if _, promoted := releases.Digest(latest); promoted {
			return tag + " is not in registry.k8s.io's promotion list as this program read it (" + releases.PromotedSource + "): pin " +
				releases.Pin(latest) + ", the newest promoted release of 1." + strconv.Itoa(minor) + " (--set image.tag=" + releases.Pin(latest) + "); " + describe
		}
	}
	return tag + " is not in registry.k8s.io's promotion list as this program read it (" + releases.PromotedSource + "): pin a release of the minor " +
		"that the list has, or an image of your own registry; " + describe
}

// excludedFinding reports a control-plane node the CCM does not run on,
// with the rule that keeps it off and the fix.
func (v *View) excludedFinding(n *nodeView, daemon bool) Finding {
	distro := suggestDistro(v.Distribution.Detected)
	ex := n.exclusion
	sev := Error
	if !daemon {
		sev = Warning // a Deployment needs one node, not each
	}
	f := Finding{Area: AreaPlacement, Severity: sev, Subject: n.Name,
		Message: "control plane (" + n.ControlPlaneBy + "), but no CCM pod: " + ex.String()}
	if !daemon {
		f.Message = "control plane (" + n.ControlPlaneBy + "), but the CCM's pods do not fit: " + ex.String()
	}
	switch ex.Rule {
	case "nodeSelector", "affinity":
		if !n.labelled {
			want := distros.LabelControlPlane + "=true"
			if p, ok := distros.RecordOf(distros.Distro(distro)); ok {
				for k, v := range p.NodeSelector {
					want = k + "=" + v
				}
			}
			f.Message = "control-plane node without a control-plane label (only its " + n.ControlPlaneBy + " shows the role): " + ex.String()
			f.Fix = "label it as the distribution does: kubectl label node " + n.Name + " " + want
		} else {
			f.Fix = "render with --distro=" + distro + " (the distribution's control-plane label) or --distro=auto"
		}
	case "taint":
		t := ex.Taint
		if slices.Contains(controlPlaneTaints, t.Key) || t.Key == distros.TaintEtcd || t.Key == distros.TaintUninitialized || t.Key == distros.TaintCriticalAddon {
			f.Fix = "render with aws-ccm-renderer --distro=" + distro + ", which tolerates " + t.Key + " with operator Exists"
		} else {
			f.Fix = fmt.Sprintf("tolerate it (the chart's tolerations value: key %s, operator Exists, effect %s) or remove it: kubectl taint node %s %s:%s-", t.Key, t.Effect, n.Name, t.Key, t.Effect)
		}
	default:
		f.Fix = "remove nodeName from the pod template"
	}
	return f
}

// lockMissing says why a LeaderMigrationConfiguration of v1alpha1 or
// v1beta1 keeps the CCM from starting: those versions have no default for
// resourceLock, and ValidateLeaderMigrationConfiguration
// (k8s.io/controller-manager v0.21–v0.23) refuses a value other than leases
// or endpoints, so the CCM exits (renderer.MigrationAPIs); "" when it
// does not.
func lockMissing(lmc *leaderMigrationConfig) string {
	api, ok := renderer.MigrationAPIOf(lmc.APIVersion)
	if !ok || !api.ResourceLock || lmc.ResourceLock == "leases" || lmc.ResourceLock == "endpoints" {
		return ""
	}
	got := "no resourceLock"
	if lmc.ResourceLock != "" {
		got = fmt.Sprintf("resourceLock %q", lmc.ResourceLock)
	}
	return fmt.Sprintf("the LeaderMigrationConfiguration (%s) has %s: the CCM's reader (Kubernetes %s–1.23 libraries) refuses it (\"resource Lock must be one of 'leases' or 'endpoints'\") and the CCM exits", lmc.APIVersion, got, api.Since)
}

// releaseFinding names a release's last revision that is not deployed: a
// failed one (the cluster runs what of it was applied, with the previous
// revision's objects where it stopped), or one still pending (another
// upgrade runs, or one was killed).
func (v *View) releaseFinding() (Finding, bool) {
	if v.Source != SourceRelease || v.ReleaseStatus == "" || v.ReleaseStatus == "deployed" {
		return Finding{}, false
	}
	name, _, _ := strings.Cut(v.Release, " ")
	ns := v.ManifestNamespace
	f := Finding{Area: AreaWorkload, Subject: "release " + v.Release}
	switch {
	case v.ReleaseStatus == "failed":
		f.Severity = Error
		f.Message = "failed"
		if v.ReleaseDescription != "" {
			f.Message += ": " + v.ReleaseDescription
		}
		f.Message += "; the cluster runs what of it was applied, and check reads this revision's manifest"
		f.Fix = fmt.Sprintf("helm history %s -n %s shows the revisions; fix the cause and upgrade again, or roll back: helm rollback %s -n %s", name, ns, name, ns)
	case strings.HasPrefix(v.ReleaseStatus, "pending-"):
		f.Severity = Warning
		f.Message = v.ReleaseStatus + ": an install, upgrade or rollback runs, or was stopped before it ended"
		f.Fix = fmt.Sprintf("wait for it; if none runs, helm rollback %s -n %s", name, ns)
	default:
		f.Severity = Warning
		f.Message = "its last revision is " + v.ReleaseStatus
		f.Fix = fmt.Sprintf("helm history %s -n %s", name, ns)
	}
	return f, true
}
