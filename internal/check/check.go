package check

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/nodefit"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// Sources of the workload's spec.
const (
	SourceManifests = "manifests"
	SourceRelease   = "release"
	SourceCluster   = "cluster"
)

// Input says what to check.
type Input struct {
	// Context and Server name the cluster in the report.
	Context, Server string
	// Source is manifests, release or cluster. With manifests or release,
	// Objects hold them (DecodeManifests); with cluster the workload is
	// found among the DaemonSets and Deployments in the cluster.
	Source  string
	Objects []runtime.Object
	// Release names the Helm release, "NAME revision N", and ReleaseChart
	// its chart, "NAME-VERSION".
	Release, ReleaseChart string
	// Namespace is the namespace of manifests that name none; for the
	// cluster, where to look ("" is every namespace).
	Namespace string
	// Target picks one workload, KIND/NAMESPACE/NAME, when there are
	// several.
	Target string
	// KCMUser is the in-tree controller manager's identity, whose access
	// to the migration lease is checked in migrate mode.
	KCMUser string
	// Now is the time leases are judged at; zero means time.Now.
	Now time.Time
}

// checker holds one run.
type checker struct {
	client kubernetes.Interface
	in     Input
	now    time.Time
	rep    *Report

	nodes  []corev1.Node
	w      *candidate
	live   metav1.Object // the installed workload, nil when not installed
	flags  map[string]string
	lmc    *leaderMigrationConfig
	pods   map[string]*corev1.Pod // by node
	leases map[string]*coordinationv1.Lease
}

// Run checks one cluster. It returns a *ClusterError when the cluster
// cannot be read, a renderer.UsageError when the workload is ambiguous, a
// renderer.InputError when the manifests hold no CCM.
func Run(ctx context.Context, client kubernetes.Interface, in Input) (*Report, error) {
	start := time.Now()
	c := &checker{client: client, in: in, now: in.Now, rep: &Report{Context: in.Context, Server: in.Server, Nodes: []NodeReport{}, Leases: []LeaseReport{}, Permissions: []Permission{}, Findings: []Finding{}}}
	if c.now.IsZero() {
		c.now = start
	}
	if c.in.KCMUser == "" {
		c.in.KCMUser = DefaultKCMUser
	}
	if err := c.run(ctx); err != nil {
		return nil, err
	}
	c.rep.finish()
	c.rep.DurationMS = time.Since(start).Milliseconds()
	return c.rep, nil
}

func (c *checker) run(ctx context.Context) error {
	v, err := c.client.Discovery().ServerVersion()
	if err != nil {
		return clusterError("get", "/version", "", err)
	}
	c.rep.KubernetesVersion = v.GitVersion
	nodes, err := c.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return clusterError("list", "nodes", "", err)
	}
	c.nodes = nodes.Items
	sort.Slice(c.nodes, func(i, j int) bool { return c.nodes[i].Name < c.nodes[j].Name })
	c.rep.Distribution = Detect(c.nodes)
	if err := c.findWorkload(ctx); err != nil {
		return err
	}
	if err := c.readWorkload(ctx); err != nil {
		return err
	}
	if err := c.readPods(ctx); err != nil {
		return err
	}
	c.checkDistribution()
	c.checkNodes()
	if err := c.checkRBAC(ctx); err != nil {
		return err
	}
	if err := c.checkLeases(ctx); err != nil {
		return err
	}
	c.checkVersions()
	return nil
}

// findWorkload picks the CCM workload from the manifests or the cluster,
// and reads whether (and as what) it is installed.
func (c *checker) findWorkload(ctx context.Context) error {
	ns := c.in.Namespace
	var cands []candidate
	where := "the cluster"
	switch c.in.Source {
	case SourceManifests, SourceRelease:
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
		cands = candidates(c.in.Objects, ns)
		where = "the manifests"
		if c.in.Source == SourceRelease {
			where = "release " + c.in.Release
		}
	default:
		dss, err := c.client.AppsV1().DaemonSets(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return clusterError("list", "daemonsets.apps", ns, err)
		}
		deps, err := c.client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return clusterError("list", "deployments.apps", ns, err)
		}
		var objs []runtime.Object
		for i := range dss.Items {
			objs = append(objs, &dss.Items[i])
		}
		for i := range deps.Items {
			objs = append(objs, &deps.Items[i])
		}
		cands = candidates(objs, "")
	}
	w, err := pick(cands, c.in.Target, where)
	if err != nil {
		return err
	}
	if w == nil {
		if c.in.Source != SourceCluster {
			return &renderer.InputError{Err: fmt.Errorf("no AWS CCM DaemonSet or Deployment in %s (a container whose command is aws-cloud-controller-manager, or whose image is .../provider-aws/cloud-controller-manager)", where)}
		}
		fix := "install it, e.g. aws-ccm-renderer install --distro=" + suggestDistro(c.rep.Distribution.Detected)
		if ns != "" {
			fix += " (only namespace " + ns + " was searched)"
		}
		c.rep.add(Finding{Area: AreaWorkload, Severity: Error, Message: "no AWS CCM DaemonSet or Deployment in the cluster: nothing initialises the nodes", Fix: fix})
		return nil
	}
	c.w = w
	if c.in.Source == SourceCluster {
		if w.ds != nil {
			c.live = w.ds
		} else {
			c.live = w.deploy
		}
		return nil
	}
	// Is what the manifests describe installed?
	var err2 error
	if w.kind == "DaemonSet" {
		var ds *appsv1.DaemonSet
		if ds, err2 = c.client.AppsV1().DaemonSets(w.namespace).Get(ctx, w.name, metav1.GetOptions{}); err2 == nil {
			c.live = ds
		}
	} else {
		var d *appsv1.Deployment
		if d, err2 = c.client.AppsV1().Deployments(w.namespace).Get(ctx, w.name, metav1.GetOptions{}); err2 == nil {
			c.live = d
		}
	}
	if err2 != nil && !apierrors.IsNotFound(err2) {
		return clusterError("get", strings.ToLower(w.kind)+"s.apps", w.namespace, err2)
	}
	return nil
}

func suggestDistro(detected string) string {
	if _, ok := renderer.ProfileFor(renderer.Distro(detected)); ok {
		return detected
	}
	return string(renderer.DistroAuto)
}

// readWorkload fills in the workload's report: container, mode, leases,
// the leader migration configuration.
func (c *checker) readWorkload(ctx context.Context) error {
	w := c.w
	if w == nil {
		return nil
	}
	spec := w.spec.Spec
	ctr := spec.Containers[w.container]
	c.flags = flags(ctr)
	wr := &Workload{
		Kind: w.kind, Namespace: w.namespace, Name: w.name, Source: c.in.Source, Release: c.in.Release,
		Installed: c.live != nil, Container: ctr.Name, Image: ctr.Image, ServiceAccount: spec.ServiceAccountName,
		Mode: string(renderer.ModeInstall), Chart: chartOf(w.meta), LeaderElect: true,
	}
	if wr.ServiceAccount == "" {
		wr.ServiceAccount = "default"
	}
	if c.in.ReleaseChart != "" {
		wr.Chart = c.in.ReleaseChart
	}
	if v, ok := c.flags["enable-leader-migration"]; ok && isTrue(v) {
		wr.Mode = string(renderer.ModeMigrate)
	}
	if v, ok := c.flags["leader-elect"]; ok && !isTrue(v) {
		wr.LeaderElect = false
	}
	leaseNS := DefaultLeaseNS
	if v := c.flags["leader-elect-resource-namespace"]; v != "" {
		leaseNS = v
	}
	if wr.LeaderElect {
		name := DefaultCCMLease
		if v := c.flags["leader-elect-resource-name"]; v != "" {
			name = v
		}
		wr.Lease = leaseNS + "/" + name
	}
	c.rep.Workload = wr

	state := "installed"
	if !wr.Installed {
		state = "not installed in the cluster"
	}
	src := map[string]string{SourceManifests: "from the manifests", SourceRelease: "from release " + c.in.Release, SourceCluster: "found in the cluster"}[c.in.Source]
	c.rep.add(Finding{Area: AreaWorkload, Severity: OK, Subject: w.kind + " " + w.namespace + "/" + w.name,
		Message: fmt.Sprintf("%s, %s: image %s, service account %s, %s mode", src, state, ctr.Image, wr.ServiceAccount, wr.Mode)})

	if opts, ok := readOptionsAnnotation(w.meta); ok && opts.Mode != "" && string(opts.Mode) != wr.Mode {
		c.rep.add(Finding{Area: AreaWorkload, Severity: Warning, Subject: w.kind + " " + w.namespace + "/" + w.name,
			Message: fmt.Sprintf("the %s annotation says mode %s, but the CCM's flags run it in %s mode", OptionsAnnotation, opts.Mode, wr.Mode),
			Fix:     "render again with aws-ccm-renderer instead of editing the flags"})
	}
	if v := c.flags["cloud-provider"]; v != "aws" {
		c.rep.add(Finding{Area: AreaWorkload, Severity: Error, Subject: "container " + ctr.Name,
			Message: fmt.Sprintf("--cloud-provider is %q, not aws", v), Fix: "run the CCM with --cloud-provider=aws (aws-ccm-renderer sets it)"})
	}
	if !spec.HostNetwork {
		c.rep.add(Finding{Area: AreaWorkload, Severity: Warning, Subject: "pod template",
			Message: "the CCM runs in the pod network, which may not be up before the nodes are initialised",
			Fix:     "run it in the host network (hostNetwork: true; aws-ccm-renderer's default)"})
	}
	if wr.Mode == string(renderer.ModeMigrate) {
		return c.readMigrationConfig(ctx, spec, ctr, leaseNS)
	}
	return nil
}

func (c *checker) readMigrationConfig(ctx context.Context, spec corev1.PodSpec, ctr corev1.Container, leaseNS string) error {
	wr := c.rep.Workload
	subject := "leader migration"
	file := c.flags["leader-migration-config"]
	if file == "" {
		wr.MigrationConfig = "built-in default"
		wr.MigrationLease = leaseNS + "/" + defaultMigrationName
		c.rep.add(Finding{Area: AreaWorkload, Severity: Warning, Subject: subject,
			Message: "--enable-leader-migration without --leader-migration-config: the CCM's built-in configuration names controllers (route, service, cloud-node-lifecycle) that CCMs built on Kubernetes 1.28+ libraries no longer register, so their service controller starts outside the migration lock",
			Fix:     "render with aws-ccm-renderer --mode=migrate (an explicit LeaderMigrationConfiguration naming both sets of controller names)"})
		return nil
	}
	name, key, ok := configMapSource(spec, ctr, file)
	if !ok {
		c.rep.add(Finding{Area: AreaWorkload, Severity: Error, Subject: subject,
			Message: fmt.Sprintf("--leader-migration-config=%s is not a file mounted from a ConfigMap", file),
			Fix:     "mount the ConfigMap holding the LeaderMigrationConfiguration there (aws-ccm-renderer --mode=migrate does)"})
		return nil
	}
	wr.MigrationConfig = fmt.Sprintf("ConfigMap %s/%s (key %s)", c.w.namespace, name, key)
	var cm *corev1.ConfigMap
	for _, o := range c.in.Objects {
		if m, ok := o.(*corev1.ConfigMap); ok && m.Name == name && (m.Namespace == c.w.namespace || m.Namespace == "") {
			cm = m
		}
	}
	if cm == nil && c.live != nil {
		got, err := c.client.CoreV1().ConfigMaps(c.w.namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case err == nil:
			cm = got
		case !apierrors.IsNotFound(err):
			return clusterError("get", "configmaps", c.w.namespace, err)
		}
	}
	if cm == nil {
		c.rep.add(Finding{Area: AreaWorkload, Severity: Error, Subject: subject,
			Message: fmt.Sprintf("ConfigMap %s/%s, which holds the LeaderMigrationConfiguration, does not exist: the CCM pods cannot start", c.w.namespace, name),
			Fix:     "install it with the workload (aws-ccm-renderer --mode=migrate renders it)"})
		return nil
	}
	lmc, err := parseLeaderMigrationConfig(cm.Data[key])
	if err != nil {
		c.rep.add(Finding{Area: AreaWorkload, Severity: Error, Subject: subject,
			Message: fmt.Sprintf("key %s of ConfigMap %s/%s is no LeaderMigrationConfiguration: %v", key, c.w.namespace, name, err),
			Fix:     "render it again with aws-ccm-renderer --mode=migrate"})
		return nil
	}
	c.lmc = &lmc
	leader := lmc.LeaderName
	if leader == "" {
		leader = defaultMigrationName
	}
	wr.MigrationLease = leaseNS + "/" + leader
	var names []string
	for _, l := range lmc.ControllerLeaders {
		names = append(names, l.Name)
	}
	if !slices.Contains(names, "service-lb-controller") && !slices.Contains(names, "*") {
		c.rep.add(Finding{Area: AreaWorkload, Severity: Warning, Subject: subject,
			Message: fmt.Sprintf("the LeaderMigrationConfiguration names %s but not service-lb-controller: a CCM built on Kubernetes 1.28+ libraries starts its service controller outside the migration lock", joinAnd(names)),
			Fix:     "render with aws-ccm-renderer --mode=migrate, whose configuration names the current and the pre-1.28 controller names"})
	}
	return nil
}

// readPods lists the installed workload's pods, once, and files them by
// node.
func (c *checker) readPods(ctx context.Context) error {
	c.pods = map[string]*corev1.Pod{}
	if c.w == nil || c.live == nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(c.w.selector)
	if err != nil || c.w.selector == nil {
		return nil
	}
	pods, err := c.client.CoreV1().Pods(c.w.namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String(), ResourceVersion: "0"})
	if err != nil {
		return clusterError("list", "pods", c.w.namespace, err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		if c.w.kind == "DaemonSet" && !ownedBy(p, c.live.GetUID()) {
			continue
		}
		if node := podNode(p); node != "" {
			c.pods[node] = p
		}
	}
	return nil
}

func ownedBy(p *corev1.Pod, uid types.UID) bool {
	for _, o := range p.OwnerReferences {
		if o.UID == uid {
			return true
		}
	}
	return false
}

// podNode is the node a pod is bound to, or, before the scheduler binds
// it, the node the DaemonSet controller pinned it to (a required node
// affinity on metadata.name).
func podNode(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range t.MatchFields {
			if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}

func podReport(p *corev1.Pod) *PodReport {
	pr := &PodReport{Name: p.Name, Phase: string(p.Status.Phase)}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
			pr.Ready = true
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		pr.Restarts += cs.RestartCount
		if cs.State.Waiting != nil && pr.Waiting == "" {
			pr.Waiting = cs.State.Waiting.Reason
		}
	}
	return pr
}

func (c *checker) checkDistribution() {
	d := &c.rep.Distribution
	evidence := strings.Join(d.Evidence, "; ")
	switch d.Detected {
	case DistroUnknown:
		c.rep.add(Finding{Area: AreaDistribution, Severity: Warning,
			Message: fmt.Sprintf("none of the %d nodes shows its distribution (no +rke2/+k3s kubelet, no rke2.io/, k3s.io/, rke.cattle.io/ or kubeadm annotation)", len(c.nodes)),
			Fix:     "render with --distro=auto, which places the CCM on the control-plane label of every distribution"})
	case DistroMixed:
		c.rep.add(Finding{Area: AreaDistribution, Severity: Warning, Message: "the nodes disagree: " + evidence,
			Fix: "render with --distro=auto"})
	default:
		c.rep.add(Finding{Area: AreaDistribution, Severity: OK, Message: d.Detected + " (" + evidence + ")"})
	}
	if c.w == nil {
		return
	}
	if opts, ok := readOptionsAnnotation(c.w.meta); ok && opts.Distro != "" {
		d.Rendered, d.RenderedFrom = string(opts.Distro), "annotation"
	} else if r := renderedFor(c.w.spec.Spec); r != "" {
		d.Rendered, d.RenderedFrom = r, "placement"
	}
	subject := c.w.kind + " " + c.w.namespace + "/" + c.w.name
	switch {
	case d.Rendered == "":
		c.rep.add(Finding{Area: AreaDistribution, Severity: Warning, Subject: subject,
			Message: "not rendered by aws-ccm-renderer (no " + OptionsAnnotation + " annotation, and its tolerations lack the renderer's): its placement is checked as it is",
			Fix:     "render the chart through aws-ccm-renderer --distro=" + suggestDistro(d.Detected)})
	case d.Detected == DistroUnknown || d.Detected == DistroMixed:
		c.rep.add(Finding{Area: AreaDistribution, Severity: Info, Subject: subject, Message: "rendered for " + d.Rendered})
	case samePlacement(d.Rendered, d.Detected):
		c.rep.add(Finding{Area: AreaDistribution, Severity: OK, Subject: subject, Message: "rendered for " + d.Rendered + ", which fits " + d.Detected})
	default:
		c.rep.add(Finding{Area: AreaDistribution, Severity: Error, Subject: subject,
			Message: "rendered for " + d.Rendered + ", but the cluster is " + d.Detected,
			Fix:     "render again with --distro=" + d.Detected + " (or --distro=detect, or --distro=auto)"})
	}
}

// checkNodes judges placement and initialisation, node by node.
func (c *checker) checkNodes() {
	distro := c.rep.Distribution.Detected
	var spec *corev1.PodSpec
	daemon := false
	if c.w != nil {
		spec = &c.w.spec.Spec
		daemon = c.w.kind == "DaemonSet"
	}
	var workersWithout, initialised, cpWith, cpTotal int
	var noCP []string
	for i := range c.nodes {
		n := &c.nodes[i]
		nr := NodeReport{Name: n.Name, KubeletVersion: n.Status.NodeInfo.KubeletVersion, ProviderID: n.Spec.ProviderID,
			Uninitialized: hasTaint(n, renderer.TaintUninitialized), ExternalProvider: externalEvidence(n)}
		nr.Distribution, _ = nodeDistro(n)
		_, _, nr.EC2Name = ec2NameOf(n.Name)
		var labelled bool
		nr.ControlPlane, nr.ControlPlaneBy, labelled = controlPlane(n)
		if nr.ControlPlane {
			cpTotal++
		}
		if spec != nil {
			ex := nodefit.Exclude(spec, n, daemon)
			nr.CCM = ex == nil
			if ex != nil {
				nr.ExcludedBy = ex.String()
			}
			if p := c.pods[n.Name]; p != nil {
				nr.Pod = podReport(p)
			}
			switch {
			case nr.ControlPlane && nr.CCM:
				cpWith++
				c.placedFinding(n, &nr)
			case nr.ControlPlane:
				noCP = append(noCP, n.Name)
				c.excludedFinding(n, &nr, ex, labelled, daemon)
			case nr.CCM && daemon:
				c.rep.add(Finding{Area: AreaPlacement, Severity: Warning, Subject: n.Name,
					Message: "a CCM pod would run on this node, which has no control-plane role",
					Fix:     "place the CCM on control-plane nodes only: render with --distro=" + suggestDistro(distro)})
			default:
				workersWithout++
			}
		}
		if c.nodeFindings(n, &nr, distro) {
			initialised++
		}
		c.rep.Nodes = append(c.rep.Nodes, nr)
	}
	c.rep.Summary.Nodes = len(c.nodes)
	c.rep.Summary.ControlPlaneNodes = cpTotal
	c.rep.Summary.CCMOnControlPlane = cpWith
	if spec != nil {
		if cpTotal == 0 {
			c.rep.add(Finding{Area: AreaPlacement, Severity: Error,
				Message: "no node has the control-plane role (no control-plane label or taint, no server node-args): the CCM has nowhere to run",
				Fix:     "label the control-plane nodes, e.g. kubectl label node NAME " + renderer.LabelControlPlane + "=true"})
		}
		if !daemon && cpTotal > 0 && cpWith == 0 {
			c.rep.add(Finding{Area: AreaPlacement, Severity: Error, Subject: c.w.kind + " " + c.w.namespace + "/" + c.w.name,
				Message: "its pods fit no control-plane node (" + strings.Join(noCP, ", ") + ")", Fix: "render with --distro=" + suggestDistro(distro)})
		}
		if workersWithout > 0 {
			c.rep.add(Finding{Area: AreaPlacement, Severity: OK,
				Message: fmt.Sprintf("no CCM pod on the %d %s without the control-plane role, as intended", workersWithout, plural(workersWithout, "node", "nodes"))})
		}
	}
	for _, nr := range c.rep.Nodes {
		if nr.Uninitialized {
			c.rep.Summary.Uninitialized++
		}
	}
	if initialised > 0 {
		c.rep.add(Finding{Area: AreaNode, Severity: OK,
			Message: fmt.Sprintf("%d of %d %s initialised by the AWS CCM (aws:// providerID, no uninitialized taint)", initialised, len(c.nodes), plural(len(c.nodes), "node", "nodes"))})
	}
}

// placedFinding reports a control-plane node the CCM runs on, with its pod.
func (c *checker) placedFinding(n *corev1.Node, nr *NodeReport) {
	f := Finding{Area: AreaPlacement, Subject: n.Name}
	verb := "would run"
	if c.w.kind == "Deployment" {
		verb = "may run"
	}
	switch p := nr.Pod; {
	case c.live == nil:
		f.Severity, f.Message = OK, "control plane ("+nr.ControlPlaneBy+"): a CCM pod "+verb+" here"
	case p == nil && c.w.kind == "Deployment":
		f.Severity, f.Message = OK, "control plane ("+nr.ControlPlaneBy+"): a CCM pod may run here"
	case p == nil:
		f.Severity, f.Message = Warning, "control plane ("+nr.ControlPlaneBy+"): the DaemonSet admits this node, but it has no CCM pod yet"
		f.Fix = "see kubectl describe daemonset -n " + c.w.namespace + " " + c.w.name
	case p.Waiting == "CrashLoopBackOff" || p.Waiting == "ImagePullBackOff" || p.Waiting == "ErrImagePull" || p.Waiting == "CreateContainerConfigError":
		f.Severity, f.Message = Error, fmt.Sprintf("control plane: CCM pod %s is %s (%d restarts)", p.Name, p.Waiting, p.Restarts)
		f.Fix = "read its log: kubectl logs -n " + c.w.namespace + " " + p.Name
	case p.Ready:
		f.Severity, f.Message = OK, fmt.Sprintf("control plane (%s): CCM pod %s running and ready", nr.ControlPlaneBy, p.Name)
	default:
		f.Severity, f.Message = Warning, fmt.Sprintf("control plane: CCM pod %s is %s, not ready", p.Name, p.Phase)
		f.Fix = "see kubectl describe pod -n " + c.w.namespace + " " + p.Name
	}
	c.rep.add(f)
}

// excludedFinding reports a control-plane node the CCM does not run on,
// with the rule that keeps it off and the fix.
func (c *checker) excludedFinding(n *corev1.Node, nr *NodeReport, ex *nodefit.Exclusion, labelled, daemon bool) {
	distro := suggestDistro(c.rep.Distribution.Detected)
	sev := Error
	if !daemon {
		sev = Warning // a Deployment needs one node, not each
	}
	f := Finding{Area: AreaPlacement, Severity: sev, Subject: n.Name,
		Message: "control plane (" + nr.ControlPlaneBy + "), but no CCM pod: " + ex.String()}
	if !daemon {
		f.Message = "control plane (" + nr.ControlPlaneBy + "), but the CCM's pods do not fit: " + ex.String()
	}
	switch ex.Rule {
	case "nodeSelector", "affinity":
		if !labelled {
			want := renderer.LabelControlPlane + "=true"
			if p, ok := renderer.ProfileFor(renderer.Distro(distro)); ok {
				for k, v := range p.NodeSelector {
					want = k + "=" + v
				}
			}
			f.Message = "control-plane node without a control-plane label (only its " + nr.ControlPlaneBy + " shows the role): " + ex.String()
			f.Fix = "label it as the distribution does: kubectl label node " + n.Name + " " + want
		} else {
			f.Fix = "render with --distro=" + distro + " (the distribution's control-plane label) or --distro=auto"
		}
	case "taint":
		t := ex.Taint
		if slices.Contains(controlPlaneTaints, t.Key) || t.Key == renderer.TaintEtcd || t.Key == renderer.TaintUninitialized || t.Key == renderer.TaintCriticalAddon {
			f.Fix = "render with aws-ccm-renderer --distro=" + distro + ", which tolerates " + t.Key + " with operator Exists"
		} else {
			f.Fix = fmt.Sprintf("tolerate it (the chart's tolerations value: key %s, operator Exists, effect %s) or remove it: kubectl taint node %s %s:%s-", t.Key, t.Effect, n.Name, t.Key, t.Effect)
		}
	default:
		f.Fix = "remove nodeName from the pod template"
	}
	c.rep.add(f)
}

// nodeFindings reports a node's initialisation; it returns true when the
// AWS CCM has initialised it.
func (c *checker) nodeFindings(n *corev1.Node, nr *NodeReport, distro string) bool {
	scheme := providerScheme(n.Spec.ProviderID)
	installed := c.rep.Workload != nil && c.rep.Workload.Installed
	ip := internalIP(n)
	if scheme == "aws" && !nr.Uninitialized {
		if nameIP, _, ok := ec2NameOf(n.Name); ok && ip != "" && nameIP != ip {
			c.rep.add(Finding{Area: AreaNode, Severity: Warning, Subject: n.Name,
				Message: fmt.Sprintf("the name says %s, the node's internal IP is %s", nameIP, ip)})
		}
		return true
	}
	if scheme != "" && scheme != "aws" {
		f := Finding{Area: AreaNode, Severity: Error, Subject: n.Name,
			Message: fmt.Sprintf("providerID %s: initialised by another cloud controller, not the AWS CCM", n.Spec.ProviderID),
			Fix:     "a providerID never changes: " + externalFix(distro)}
		if scheme == "k3s" || scheme == "rke2" {
			f.Message = fmt.Sprintf("providerID %s: initialised by %s's embedded cloud controller, not the AWS CCM", n.Spec.ProviderID, DisplayName(scheme))
		}
		c.rep.add(f)
		return false
	}
	switch {
	case nr.Uninitialized && scheme == "aws":
		// The kubelet set --provider-id; the CCM has not finished.
		sev := Warning
		if installed {
			sev = Error
		}
		c.rep.add(Finding{Area: AreaNode, Severity: sev, Subject: n.Name,
			Message: "providerID " + n.Spec.ProviderID + " set, but still tainted " + renderer.TaintUninitialized,
			Fix:     "the CCM removes the taint once it has initialised the node: check that a CCM pod runs and read its log"})
		return false
	case nr.Uninitialized:
		f := Finding{Area: AreaNode, Severity: Warning, Subject: n.Name,
			Message: "not initialised yet: tainted " + renderer.TaintUninitialized + ", no providerID",
			Fix:     "the CCM initialises it once it runs"}
		if installed {
			f.Severity = Error
			f.Message = "uninitialised: tainted " + renderer.TaintUninitialized + ", no providerID"
			f.Fix = "the CCM has not initialised it: see the placement findings, and the CCM's log for this node"
		}
		if _, _, ok := ec2NameOf(n.Name); !ok {
			f.Severity = Error
			f.Message += "; the name is not an EC2 private DNS name (ip-A-B-C-D.REGION.compute.internal), so the CCM cannot find the instance"
			f.Fix = nameFix(distro, expectedEC2Name(ip, regionOf(n)))
		}
		c.rep.add(f)
		return false
	}
	// No providerID and no taint: registered without the external provider.
	msg := "no providerID and no " + renderer.TaintUninitialized + " taint: the kubelet registered without --cloud-provider=external, and the CCM only initialises nodes that carry the taint"
	if len(nr.ExternalProvider) > 0 {
		msg = "no providerID and no " + renderer.TaintUninitialized + " taint, although " + strings.Join(nr.ExternalProvider, ", ") + " show(s) the external provider: the taint was removed before the CCM initialised the node, and the CCM only initialises nodes that carry it"
	}
	c.rep.add(Finding{Area: AreaNode, Severity: Error, Subject: n.Name, Message: msg, Fix: externalFix(distro)})
	if _, _, ok := ec2NameOf(n.Name); !ok {
		c.rep.add(Finding{Area: AreaNode, Severity: Error, Subject: n.Name,
			Message: "the name is not an EC2 private DNS name (ip-A-B-C-D.REGION.compute.internal), so the CCM cannot find the instance",
			Fix:     nameFix(distro, expectedEC2Name(ip, regionOf(n)))})
	}
	return false
}

// workloadBindsUser tells whether the manifests bind a (Cluster)Role to a
// user: how a migration lease grant not yet installed shows.
func workloadBindsUser(objs []runtime.Object, user string) string {
	for _, o := range objs {
		var subjects []rbacv1.Subject
		var id string
		switch b := o.(type) {
		case *rbacv1.RoleBinding:
			subjects, id = b.Subjects, "RoleBinding "+b.Namespace+"/"+b.Name
		case *rbacv1.ClusterRoleBinding:
			subjects, id = b.Subjects, "ClusterRoleBinding "+b.Name
		default:
			continue
		}
		for _, s := range subjects {
			if s.Kind == rbacv1.UserKind && s.Name == user {
				return id
			}
		}
	}
	return ""
}

func age(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return d.Round(time.Second).String()
}
