package scale

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// The cluster seed makes: EC2-named nodes of a distribution (kubeadm,
// RKE2 or K3s, with the labels, annotations, taints and kubelet version
// each leaves), three of them the control plane, initialised by the CCM
// (aws:// provider IDs, no uninitialized taint), each node's hostname label
// its name but one worker's (pinnedHost), to which a Deployment of
// pinnedPods pods, a local PersistentVolume and nothing else is pinned by
// nodeSelector; the other pods are Deployments' pods of podsPerApp,
// podsPerNamespace a namespace, spread over the workers. No scheduler and
// no kubelet run: the pods stay Pending, bound to their nodes
// (spec.nodeName) as a scheduler leaves them; the CCM's pods alone are
// marked running, as check's e2e tests do. The kubelets and the CCM are of
// the API server's minor.
const (
	controlPlaneNodes = 3
	podsPerNamespace  = 1000
	podsPerApp        = 10
	pinnedPods        = 3
	pinnedNamespace   = "pinned-data"
	pinnedApp         = "local-cache"
	pinnedHost        = "k8s-w-pinned"
	// imagesPerNode is how many images a node's status lists (a kubelet
	// reports at most 50).
	imagesPerNode = 25
	// seedWorkers is how many create requests the seeding has in flight.
	seedWorkers = 16
)

// cluster is what seed makes: how many nodes and pods, and the
// distribution, which the nodes show and the CCM is rendered for.
type cluster struct {
	nodes, pods int
	distro      string // kubeadm, rke2 or k3s
}

// seeded is a seeded cluster: its control plane, what it holds, the API
// server's version, and the node the hostname label of which is not its
// name.
type seeded struct {
	cp         *harness.ControlPlane
	cluster    cluster
	version    string // the API server's, v1.37.2
	pinnedNode string
	took       string // how long each part of the seeding took
}

// seed starts a control plane and fills it (fill); the benchmark's cleanup
// stops it.
func seed(b *testing.B, c cluster) *seeded {
	b.Helper()
	bin := binaries(b)
	cp, err := harness.Start(context.Background(), bin, nil)
	if err != nil {
		b.Fatal("starting the control plane: ", err)
	}
	b.Cleanup(cp.Stop)
	return fill(b, bin, cp, c)
}

// binaries are the control plane's, built when missing.
func binaries(b *testing.B) harness.Binaries {
	b.Helper()
	bin, err := harness.Locate(testtools.Root())
	if err != nil {
		b.Fatal(err)
	}
	return bin
}

// fill fills a running control plane with the cluster's nodes and pods, and
// the CCM rendered for the cluster by aws-ccm-renderer template, made into
// pods by the DaemonSet controller, which runs only until then.
func fill(b *testing.B, bin harness.Binaries, cp *harness.ControlPlane, c cluster) *seeded {
	b.Helper()
	ctx := context.Background()
	// The seeding's own client, unthrottled: the harness's keeps 100 QPS.
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS, cfg.Burst = -1, 0
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		b.Fatal(err)
	}
	s := &seeded{cp: cp, cluster: c, version: v.GitVersion}

	start := time.Now()
	names := make([]string, c.nodes)
	for i := range names {
		names[i] = nodeName(i)
	}
	pinnedIdx := controlPlaneNodes // the first worker
	s.pinnedNode = names[pinnedIdx]
	parallel(b, "nodes", c.nodes, seedWorkers, func(i int) error {
		host := names[i]
		if i == pinnedIdx {
			host = pinnedHost
		}
		return createNode(ctx, client, s.nodeObject(i, names[i], host, i < controlPlaneNodes))
	})
	nodesTook := time.Since(start)

	step := time.Now()
	s.installCCM(b, bin)
	ccmTook := time.Since(step)

	step = time.Now()
	namespaces := (c.pods-pinnedPods+podsPerNamespace-1)/podsPerNamespace + 1
	parallel(b, "namespaces", namespaces, seedWorkers, func(i int) error {
		ns := pinnedNamespace
		if i > 0 {
			ns = appNamespace(i - 1)
		}
		if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return err
		}
		// No service account controller runs, and admission wants the
		// pods' account to exist.
		_, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
		return err
	})
	workers := names[controlPlaneNodes:]
	parallel(b, "pods", c.pods, seedWorkers, func(i int) error {
		var p *corev1.Pod
		if i < pinnedPods {
			p = podObject(pinnedNamespace, pinnedApp, i, s.pinnedNode)
			p.Spec.NodeSelector = map[string]string{corev1.LabelHostname: pinnedHost}
		} else {
			j := i - pinnedPods
			ns, app := appNamespace(j/podsPerNamespace), "app-"+strconv.Itoa(j%podsPerNamespace/podsPerApp)
			p = podObject(ns, app, j%podsPerApp, workers[j%len(workers)])
		}
		_, err := client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		return err
	})
	podsTook := time.Since(step)

	// A local PersistentVolume on the pinned node, bound as a claim of the
	// pinned Deployment would leave it.
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "local-pv-pinned"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("100Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              "local-storage",
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/disks/ssd0"}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{pinnedHost}}},
			}}}},
		},
	}
	if _, err := client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	s.took = fmt.Sprintf("seeded in %s: %d nodes %s, the CCM %s, %d pods in %d namespaces %s", time.Since(start).Round(time.Second),
		c.nodes, nodesTook.Round(time.Second), ccmTook.Round(time.Second), c.pods, namespaces, podsTook.Round(time.Second))
	return s
}

// parallel runs do(0) ... do(n-1), workers at a time, and fails the
// benchmark on the first error.
func parallel(b *testing.B, what string, n, workers int, do func(i int) error) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range min(workers, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := do(i); err != nil {
					once.Do(func() { first = err })
					next.Store(int64(n)) // stop handing out work
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		b.Fatalf("seeding %s: %v", what, first)
	}
}

// nodeName is the i-th node's name, an EC2 private DNS name.
func nodeName(i int) string {
	return fmt.Sprintf("ip-10-%d-%d-%d.us-west-2.compute.internal", 1+i/62500, i/250%250, 1+i%250)
}

func appNamespace(i int) string { return fmt.Sprintf("team-%03d", i) }

// hexOf is a stable, made-up hex string of n characters for a seed.
func hexOf(n int, seed ...any) string {
	sum := sha256.Sum256(fmt.Append(nil, seed...))
	return hex.EncodeToString(sum[:])[:n]
}

// nodeObject is a node as its distribution's agents and kubelet and the
// CCM leave it: the labels, annotations and taints they set, an aws://
// provider ID, a status with capacity, conditions, addresses, node info and
// the images the node holds.
func (s *seeded) nodeObject(i int, name, hostname string, controlPlane bool) *corev1.Node {
	zone := "us-west-2" + string(rune('a'+i%3))
	instance := "i-0" + hexOf(16, "instance", i)
	ip := fmt.Sprintf("10.%d.%d.%d", 1+i/62500, i/250%250, 1+i%250)
	labels := map[string]string{
		corev1.LabelArchStable:                     "amd64",
		corev1.LabelOSStable:                       "linux",
		"beta.kubernetes.io/arch":                  "amd64",
		"beta.kubernetes.io/os":                    "linux",
		corev1.LabelHostname:                       hostname,
		corev1.LabelInstanceTypeStable:             "m6i.2xlarge",
		"beta.kubernetes.io/instance-type":         "m6i.2xlarge",
		corev1.LabelTopologyRegion:                 "us-west-2",
		corev1.LabelTopologyZone:                   zone,
		"failure-domain.beta.kubernetes.io/region": "us-west-2",
		"failure-domain.beta.kubernetes.io/zone":   zone,
		"topology.k8s.aws/zone-id":                 "usw2-az" + strconv.Itoa(1+i%3),
	}
	annotations := map[string]string{
		"node.alpha.kubernetes.io/ttl":                           "0",
		"volumes.kubernetes.io/controller-managed-attach-detach": "true",
		"csi.volume.kubernetes.io/nodeid":                        `{"ebs.csi.aws.com":"` + instance + `"}`,
	}
	controlPlaneTaint := corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}
	var taints []corev1.Taint
	kubelet, runtime := s.version, "containerd://1.7.24"
	switch d := s.cluster.distro; d {
	case "kubeadm":
		annotations["kubeadm.alpha.kubernetes.io/cri-socket"] = "unix:///var/run/containerd/containerd.sock"
		if controlPlane {
			labels["node-role.kubernetes.io/control-plane"] = ""
			labels["node.kubernetes.io/exclude-from-external-load-balancers"] = ""
			taints = []corev1.Taint{controlPlaneTaint}
		} else {
			labels["node-pool"] = "workers-" + zone
		}
	case "rke2", "k3s":
		// What their agent records (k3s-io/k3s pkg/nodeconfig, under the
		// program's name), as in testdata/check/rke2 and k3s: the
		// servers' roles as labels, the node's arguments, its host name
		// and address; the kubelet's build, the runtime they ship.
		args := map[string][2]string{
			"rke2": {`["server", "--cloud-provider-name", "aws", "--kubelet-arg", "cloud-provider=external", "--disable-cloud-controller"]`,
				`["agent", "--cloud-provider-name", "aws", "--kubelet-arg", "cloud-provider=external"]`},
			"k3s": {`["server", "--disable-cloud-controller", "--kubelet-arg", "cloud-provider=external"]`,
				`["agent", "--kubelet-arg", "cloud-provider=external"]`},
		}[d]
		kubelet, runtime = kubelet+map[string]string{"rke2": "+rke2r1", "k3s": "+k3s1"}[d], "containerd://2.0.5-k3s1"
		annotations[d+".io/hostname"], annotations[d+".io/internal-ip"] = hostname, ip
		if controlPlane {
			labels["node-role.kubernetes.io/control-plane"] = "true"
			labels["node-role.kubernetes.io/etcd"] = "true"
			labels["node-role.kubernetes.io/master"] = "true"
			annotations[d+".io/node-args"] = args[0]
			taints = []corev1.Taint{controlPlaneTaint}
			if d == "rke2" {
				taints = append(taints, corev1.Taint{Key: "node-role.kubernetes.io/etcd", Effect: corev1.TaintEffectNoExecute})
			}
		} else {
			labels["node-role.kubernetes.io/worker"] = "true"
			annotations[d+".io/node-args"] = args[1]
		}
	default:
		panic("seed: no distribution " + d)
	}
	quantities := func(cpu, mem, pods string) corev1.ResourceList {
		return corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem),
			corev1.ResourcePods: resource.MustParse(pods), corev1.ResourceEphemeralStorage: resource.MustParse("104845292Ki"),
			"hugepages-1Gi": resource.MustParse("0"), "hugepages-2Mi": resource.MustParse("0"),
			"attachable-volumes-aws-ebs": resource.MustParse("25"),
		}
	}
	now := metav1.Now()
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	images := make([]corev1.ContainerImage, imagesPerNode)
	for j := range images {
		repo := fmt.Sprintf("registry.example.com/platform/component-%02d", j)
		images[j] = corev1.ContainerImage{
			Names:     []string{repo + "@sha256:" + hexOf(64, "image", j), repo + ":v1." + strconv.Itoa(j) + ".0"},
			SizeBytes: int64(20_000_000 + j*3_000_000),
		}
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations},
		Spec: corev1.NodeSpec{
			ProviderID: "aws:///" + zone + "/" + instance,
			PodCIDR:    fmt.Sprintf("10.%d.%d.0/24", 128+i/256, i%256),
			PodCIDRs:   []string{fmt.Sprintf("10.%d.%d.0/24", 128+i/256, i%256)},
			Taints:     taints,
		},
		Status: corev1.NodeStatus{
			Capacity:    quantities("8", "32386544Ki", "110"),
			Allocatable: quantities("7910m", "31235568Ki", "110"),
			Conditions: []corev1.NodeCondition{
				cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
				cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
				cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
				cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
			},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: ip},
				{Type: corev1.NodeHostName, Address: hostname},
				{Type: corev1.NodeInternalDNS, Address: name},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{
				MachineID: hexOf(32, "machine", i), SystemUUID: "ec2" + hexOf(29, "uuid", i), BootID: hexOf(32, "boot", i),
				KernelVersion: "6.8.0-1021-aws", OSImage: "Ubuntu 24.04.1 LTS", ContainerRuntimeVersion: runtime,
				KubeletVersion: kubelet, KubeProxyVersion: kubelet, OperatingSystem: "linux", Architecture: "amd64",
			},
			Images: images,
		},
	}
}

// createNode creates a node with its status (the API server keeps a new
// node's status), then takes off the not-ready taint the API server's
// admission adds to every new node, as the node lifecycle controller does
// for a Ready node.
func createNode(ctx context.Context, client kubernetes.Interface, n *corev1.Node) error {
	created, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("node %s: %w", n.Name, err)
	}
	if len(created.Spec.Taints) != len(n.Spec.Taints) {
		created.Spec.Taints = n.Spec.Taints
		if _, err := client.CoreV1().Nodes().Update(ctx, created, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("node %s taints: %w", n.Name, err)
		}
	}
	return nil
}

// podObject is the i-th pod (i < podsPerApp) of a Deployment's ReplicaSet,
// bound to a node:
// a container with ports, environment, resources, probes and a mounted
// ConfigMap; admission adds the service account token's volume and the
// default tolerations.
func podObject(ns, app string, i int, node string) *corev1.Pod {
	hash := hexOf(10, ns, app)
	rs := app + "-" + hash
	probe := func(path string, delay int32) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http")}},
			InitialDelaySeconds: delay, PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: rs + "-" + hexOf(4, ns, "/", app, "/", i) + string(rune('a'+i)), Namespace: ns,
			Labels: map[string]string{"app.kubernetes.io/name": app, "app.kubernetes.io/part-of": ns, "pod-template-hash": hash},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/restartedAt": "2025-01-01T00:00:00Z",
				"prometheus.io/scrape":              "true", "prometheus.io/port": "9090",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs,
				UID: types.UID(hexOf(8, "uid", rs) + "-0000-4000-8000-" + hexOf(12, rs)), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{
				Name: "app", Image: "registry.example.com/" + ns + "/" + app + ":v2.7." + strconv.Itoa(i%3),
				Args:  []string{"--config=/etc/app/config.yaml", "--listen=:8080", "--metrics=:9090"},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}, {Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}},
				Env: []corev1.EnvVar{
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
					{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}},
					{Name: "LOG_LEVEL", Value: "info"}, {Name: "GOMAXPROCS", Value: "2"},
				},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
				},
				ReadinessProbe: probe("/readyz", 5), LivenessProbe: probe("/healthz", 15),
				VolumeMounts:             []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app", ReadOnly: true}},
				TerminationMessagePath:   corev1.TerminationMessagePathDefault,
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy:          corev1.PullIfNotPresent,
			}},
			Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"}}}}},
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532)},
		},
	}
}

// ccmTag is the CCM image of the control plane's minor (the chart's
// default is older).
var ccmTag = "v" + harness.Current.String() + ".0"

// renderArgs are aws-ccm-renderer's arguments for the render the cluster
// needs: the latest upstream chart for its distribution and version, with
// the CCM of its minor.
func (s *seeded) renderArgs(b *testing.B) []string {
	b.Helper()
	return []string{"template", "aws-ccm", testtools.UpstreamChart(b, testtools.LatestChartVersion), "--namespace", "kube-system",
		"--distro=" + s.cluster.distro, "--kube-version=" + s.version, "--set", "image.tag=" + ccmTag}
}

// installCCM applies the CCM as renderArgs render it, waits until the
// DaemonSet controller, started for this alone, has made its pods, one per
// control-plane node, stops it, marks the pods running and ready on their
// nodes, and makes the CCM leader's lease.
func (s *seeded) installCCM(b *testing.B, bin harness.Binaries) {
	b.Helper()
	ctx := context.Background()
	cp := s.cp
	manifests := testtools.MustRun(b, testtools.HelmEnv(b), testtools.Renderer(b), s.renderArgs(b)...)
	objs, err := harness.Decode(manifests)
	if err != nil {
		b.Fatal(err)
	}
	kcm, err := cp.StartControllerManager(bin, []string{"daemonset"})
	if err != nil {
		b.Fatal(err)
	}
	if err := cp.Apply(ctx, objs); err != nil {
		b.Fatal(err)
	}
	pods := cp.Client.CoreV1().Pods("kube-system")
	var ccm []corev1.Pod
	harness.WaitFor(b, 2*time.Minute, "the CCM's pods", func() bool {
		l, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=aws-cloud-controller-manager"})
		if err != nil {
			b.Fatal(err)
		}
		ccm = l.Items
		return len(ccm) == controlPlaneNodes
	})
	kcm.Stop()
	for _, p := range ccm {
		// The DaemonSet controller pins each pod to its node by a
		// metadata.name field of its required node affinity.
		node := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Values[0]
		if err := pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name},
			Target: corev1.ObjectReference{Kind: "Node", Name: node}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		got, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			b.Fatal(err)
		}
		now := metav1.Now()
		got.Status.Phase = corev1.PodRunning
		got.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
		got.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: got.Spec.Containers[0].Name, Ready: true, Image: got.Spec.Containers[0].Image,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}
		if _, err := pods.UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	// The leader: a CCM pod names itself after its node's host name and a
	// UUID. The lease outlasts the benchmark.
	now := metav1.NewMicroTime(time.Now())
	if _, err := cp.Client.CoordinationV1().Leases("kube-system").Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "cloud-controller-manager", Namespace: "kube-system"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(nodeName(0) + "_" + hexOf(8, "leader") + "-1a4b-4f7e-9b3d-6e5a4c3b2a10"),
			LeaseDurationSeconds: ptr.To[int32](3600), AcquireTime: &now, RenewTime: &now},
	}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
}
