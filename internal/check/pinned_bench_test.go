package check

import (
	"bytes"
	"context"
	"fmt"
	"os"
	goruntime "runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// BenchmarkCheckPinned is check's collect and evaluate of a cluster of
// 2,000 nodes and 20,000 pods, and of 5,000 nodes and 50,000 pods, where
// one node's kubernetes.io/hostname label is not its name, so that the
// hostname rule needs the pods of every namespace (two of them pinned to
// that label, by nodeSelector and by required node affinity; one in 100
// pinned to some node's label).
//
// What it measures: check's own work and allocations for such a cluster
// (reading the lists, what it keeps of them, the rules), and, as
// peak-heap-MiB, the most heap in use (live and not yet collected) seen
// while it runs: the pods are made anew for each list, as decoding a
// response makes them, so the heap holds a page of them or all of them
// at once as check reads them.
//
// What it does not measure: the cluster is client-go's fake clientset
// (the nodes in its tracker, the pods of every namespace served by
// pagedPods, which pages as the API server does), so neither the API
// server's cost (its reads from etcd or its cache, the encoding), nor the
// network, nor the decoding of JSON or protobuf, which allocates more than
// making a pod does. On a real API server with 2,000 nodes and 20,000
// pods, check -o json took 0.46 s and 87 MiB with every label the node's
// name, 1.61 s and 306 MiB with one differing, before it read the pods in
// pages.
func BenchmarkCheckPinned(b *testing.B) {
	for _, size := range []struct{ nodes, pods int }{{2000, 20000}, {5000, 50000}} {
		b.Run(fmt.Sprintf("nodes=%d/pods=%d", size.nodes, size.pods), func(b *testing.B) {
			cs, in := benchCluster(b, size.nodes, size.pods)
			ctx := context.Background()
			check := func() *Report {
				s, err := Collect(ctx, cs, in)
				if err != nil {
					b.Fatal(err)
				}
				return Evaluate(s)
			}
			// Every run does the same work: the relabelled node's finding
			// names what is pinned to its label.
			if fs := findings(check(), AreaHostname, benchNodeName(7)); len(fs) != 1 || !strings.Contains(fs[0].Message, "StatefulSet ns-") {
				b.Fatalf("the relabelled node's findings: %+v", fs)
			}
			goruntime.GC()
			stop := peakHeap()
			b.ReportAllocs()
			for b.Loop() {
				check()
			}
			b.ReportMetric(float64(stop())/(1<<20), "peak-heap-MiB")
		})
	}
}

// peakHeap samples the heap in use (its objects, live and not yet swept)
// every millisecond until the function it returns is called, which returns
// the most seen.
func peakHeap() func() uint64 {
	done, result := make(chan struct{}), make(chan uint64)
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		var peak uint64
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				result <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(done); return <-result }
}

func benchNodeName(i int) string {
	return fmt.Sprintf("ip-10-0-%d-%d.us-west-2.compute.internal", i/250, i%250+4)
}

// benchHostname is node i's kubernetes.io/hostname label: its name, but
// node 7's, which is the short host name the in-tree provider's nodes
// often have.
func benchHostname(i int) string {
	if i == 7 {
		return strings.TrimSuffix(benchNodeName(i), ".us-west-2.compute.internal")
	}
	return benchNodeName(i)
}

// benchCluster is a fake cluster of RKE2 agents, the CCM not installed,
// whose pods of every namespace pagedPods serves, and the input that
// checks it against the rendered RKE2 manifests.
func benchCluster(tb testing.TB, nodes, pods int) (*fake.Clientset, Input) {
	tb.Helper()
	objs := renderTB(tb, distros.RKE2, renderer.ModeInstall)
	var in []runtime.Object
	for i := range nodes {
		n := rke2Agent(benchNodeName(i), label(corev1.LabelHostname, benchHostname(i)), internal(fmt.Sprintf("10.0.%d.%d", i/250, i%250+4)),
			label(corev1.LabelArchStable, "amd64"), label(corev1.LabelOSStable, "linux"), label(corev1.LabelInstanceTypeStable, "m6i.xlarge"),
			label(corev1.LabelTopologyZone, "us-west-2a"), label(corev1.LabelTopologyRegion, "us-west-2"))
		n.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")}
		n.Status.Allocatable = n.Status.Capacity.DeepCopy()
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status"},
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}, {Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse}, {Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse}}
		in = append(in, &n)
	}
	cs := fake.NewSimpleClientset(in...)
	cs.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.34.2"}
	answerReviews(cs)
	p := &pagedPods{n: pods, pod: func(i int) corev1.Pod { return benchPod(i, nodes) }}
	cs.PrependReactor("list", "pods", p.react)
	return cs, Input{Source: SourceManifests, Objects: objs, ManifestNamespace: "kube-system"}
}

// benchPod is pod i of a cluster of that many nodes: a Deployment's
// running pod, as the API server has it; one in 100 a StatefulSet's,
// pinned to a node's hostname label by its nodeSelector or by required
// node affinity.
func benchPod(i, nodes int) corev1.Pod {
	ns := fmt.Sprintf("ns-%d", i/200)
	app := fmt.Sprintf("app-%d", i/10)
	const hash = "5d4f8c7b9"
	node := benchNodeName(i % nodes)
	created := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s-%05x", app, hash, i), Namespace: ns, UID: types.UID(fmt.Sprintf("8e2f0c1a-0000-4000-8000-%012d", i)),
			ResourceVersion: fmt.Sprint(100000 + i), CreationTimestamp: created,
			Labels:      map[string]string{"app.kubernetes.io/name": app, "app.kubernetes.io/version": "1.2.3", "pod-template-hash": hash},
			Annotations: map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-01-02T03:04:05Z"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app + "-" + hash, UID: types.UID(fmt.Sprintf("rs-%d", i/10)),
				Controller: new(true), BlockOwnerDeletion: new(true)}}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/" + app + ":1.2.3", ImagePullPolicy: corev1.PullIfNotPresent,
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Env: []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "PORT", Value: "8080"}, {Name: "REGION", Value: "us-west-2"},
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}},
				VolumeMounts:           []corev1.VolumeMount{{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
				ReadinessProbe:         &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 10},
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile}},
			Volumes: []corev1.Volume{{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: new(int64(3607))}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}}}}}}},
			NodeName: node, ServiceAccountName: "default", RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst, SchedulerName: "default-scheduler",
			Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.0.0.4", PodIP: fmt.Sprintf("10.42.%d.%d", i/250%256, i%250+2), StartTime: &created, QOSClass: corev1.PodQOSBurstable,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: created}, {Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: created},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: created}, {Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: created}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, Started: new(true), Image: "registry.example/" + app + ":1.2.3", ImageID: "registry.example/" + app + "@sha256:0123456789abcdef",
				ContainerID: fmt.Sprintf("containerd://%064x", i), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: created}}}}},
	}
	if i%100 == 0 || i%100 == 50 {
		// A StatefulSet's pod on local storage, pinned to a node's label.
		target := (i/100 + i%100/50) % nodes
		p.Name, p.Labels, p.Spec.NodeName = fmt.Sprintf("local-%d-0", i), map[string]string{"app.kubernetes.io/name": "local"}, benchNodeName(target)
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: fmt.Sprintf("local-%d", i), Controller: new(true)}}
		host := benchHostname(target)
		if i%100 == 0 {
			p.Spec.NodeSelector = map[string]string{corev1.LabelHostname: host}
		} else {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{host}}}}}}}}
		}
	}
	return p
}

// renderTB renders testdata/chart.yaml for a distribution and mode, as
// render does for a test.
func renderTB(tb testing.TB, distro distros.Distro, mode renderer.Mode) []runtime.Object {
	tb.Helper()
	o := renderer.DefaultOptions()
	o.Distro, o.Mode = distro, mode
	chart, err := os.ReadFile("testdata/chart.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	pr, err := renderer.NewPostRenderer(o)
	if err != nil {
		tb.Fatal(err)
	}
	out, err := pr.Run(bytes.NewBuffer(chart))
	if err != nil {
		tb.Fatal(err)
	}
	objs, err := DecodeManifests(out.Bytes())
	if err != nil {
		tb.Fatal(err)
	}
	return objs
}
