package check

import (
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/stream"
)

// Names check reads a workload by.
const (
	ServiceAccountsNS = "kube-system" // where --use-service-account-credentials gets and creates its accounts
	chartLabel        = "helm.sh/chart"
)

// isCCMContainer tells whether a container runs the AWS cloud controller
// manager: the renderer's rule (renderer.IsCCMContainer), so check and the
// renderer agree on what the CCM is.
func isCCMContainer(c corev1.Container) bool { return renderer.IsCCMContainer(c.Command, c.Image) }

// candidate is a DaemonSet or Deployment with a CCM container.
type candidate struct {
	kind, namespace, name string
	meta                  metav1.ObjectMeta
	spec                  corev1.PodTemplateSpec
	selector              *metav1.LabelSelector
	container             int // index of the CCM container
	ds                    *appsv1.DaemonSet
	deploy                *appsv1.Deployment
}

func (c candidate) id() string { return c.kind + "/" + c.namespace + "/" + c.name }

func ccmContainer(spec corev1.PodSpec) int {
	for i, c := range spec.Containers {
		if isCCMContainer(c) {
			return i
		}
	}
	return -1
}

// candidates returns the workloads among objs that run the AWS CCM,
// sorted by their KIND/NAMESPACE/NAME.
func candidates(objs []runtime.Object, defaultNS string) []candidate {
	var out []candidate
	for _, o := range objs {
		var c candidate
		switch w := o.(type) {
		case *appsv1.DaemonSet:
			c = candidate{kind: "DaemonSet", namespace: w.Namespace, name: w.Name, meta: w.ObjectMeta, spec: w.Spec.Template, selector: w.Spec.Selector, ds: w}
		case *appsv1.Deployment:
			c = candidate{kind: "Deployment", namespace: w.Namespace, name: w.Name, meta: w.ObjectMeta, spec: w.Spec.Template, selector: w.Spec.Selector, deploy: w}
		default:
			continue
		}
		if c.namespace == "" {
			c.namespace = defaultNS
		}
		if c.container = ccmContainer(c.spec.Spec); c.container >= 0 {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id() < out[j].id() })
	return out
}

// pick chooses the one candidate, or the one --target names.
func pick(cands []candidate, target, where string) (*candidate, error) {
	if target != "" {
		kind, rest, _ := strings.Cut(target, "/")
		ns, name, ok := strings.Cut(rest, "/")
		if !ok || kind == "" || ns == "" || name == "" {
			return nil, &renderer.UsageError{Err: fmt.Errorf("--target %q: want KIND/NAMESPACE/NAME, e.g. DaemonSet/kube-system/aws-cloud-controller-manager", target)}
		}
		for i := range cands {
			c := &cands[i]
			if strings.EqualFold(c.kind, kind) && c.namespace == ns && c.name == name {
				return c, nil
			}
		}
		return nil, &renderer.UsageError{Err: fmt.Errorf("--target %s: no such AWS CCM workload in %s (found: %s)", target, where, candidateList(cands))}
	}
	switch len(cands) {
	case 0:
		return nil, nil
	case 1:
		return &cands[0], nil
	}
	return nil, &renderer.UsageError{Err: fmt.Errorf("%d AWS CCM workloads in %s: %s; pick one with --target=KIND/NAMESPACE/NAME", len(cands), where, candidateList(cands))}
}

func candidateList(cands []candidate) string {
	if len(cands) == 0 {
		return "none"
	}
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.id()
	}
	return strings.Join(ids, ", ")
}

// DecodeManifests reads a stream of YAML documents (what `helm template`
// or `aws-ccm-renderer template` print), cut into documents by the
// renderer's byte layer, into typed objects. Documents of kinds the
// Kubernetes client does not know (custom resources) are left out; empty
// documents are skipped.
func DecodeManifests(data []byte) ([]runtime.Object, error) {
	dec := scheme.Codecs.UniversalDeserializer()
	var objs []runtime.Object
	for _, d := range stream.Split([][]byte{data}) {
		doc := d.Body()
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return nil, &renderer.InputError{Location: renderer.Location{Index: d.Index}, Err: err}
		}
		if head.Kind == "" && head.APIVersion == "" {
			continue // empty, or only comments
		}
		obj, _, err := dec.Decode(doc, nil, nil)
		if runtime.IsNotRegisteredError(err) {
			continue
		}
		if err != nil {
			return nil, &renderer.InputError{Location: renderer.Location{Index: d.Index}, Object: &renderer.ObjectRef{APIVersion: head.APIVersion, Kind: head.Kind}, Err: err}
		}
		objs = append(objs, obj)
	}
	return objs, nil
}

// readOptionsAnnotation reads the options the renderer recorded on a
// workload; ok is false without them, or when they cannot be read.
func readOptionsAnnotation(meta metav1.ObjectMeta) (renderer.Options, bool) {
	v, ok := meta.Annotations[renderer.OptionsAnnotation]
	if !ok {
		return renderer.Options{}, false
	}
	o, err := renderer.ParseRecordedOptions(v)
	return o, err == nil
}

// flags reads a container's command line with the renderer's parser: the
// last occurrence of a flag wins, a bare flag is a boolean set to true.
func flags(c corev1.Container) map[string]string {
	return renderer.ParseCommandLine(c.Command, c.Args).Flags()
}

// IsTrue reads a boolean flag value as the Go flag package does.
func IsTrue(v string) bool {
	switch strings.ToLower(v) {
	case "1", "t", "true":
		return true
	}
	return false
}

// leaderMigrationConfig is the part of a LeaderMigrationConfiguration
// check reads.
type leaderMigrationConfig struct {
	APIVersion        string `json:"apiVersion"`
	Kind              string `json:"kind"`
	LeaderName        string `json:"leaderName"`
	ResourceLock      string `json:"resourceLock"`
	ControllerLeaders []struct {
		Name      string `json:"name"`
		Component string `json:"component"`
	} `json:"controllerLeaders"`
}

func parseLeaderMigrationConfig(text string) (leaderMigrationConfig, error) {
	var lmc leaderMigrationConfig
	if err := yaml.Unmarshal([]byte(text), &lmc); err != nil {
		return lmc, err
	}
	if lmc.Kind != "LeaderMigrationConfiguration" {
		return lmc, fmt.Errorf("kind %q, want LeaderMigrationConfiguration", lmc.Kind)
	}
	return lmc, nil
}

// chartOf reads the helm.sh/chart label: aws-cloud-controller-manager-0.0.11.
func chartOf(meta metav1.ObjectMeta) string { return meta.Labels[chartLabel] }

// The marks a GitOps engine or Helm leaves on the objects it applies:
// Argo CD's tracking annotation (its annotation tracking,
// APPLICATION:GROUP/KIND:NAMESPACE/NAME) or label (its default label key,
// or argocd.argoproj.io/instance, a key its docs suggest), Fleet's agent's
// object set annotation, Helm's release annotations.
const (
	argoTrackingAnnotation = "argocd.argoproj.io/tracking-id"
	argoInstanceLabel      = "argocd.argoproj.io/instance"
	// argoDefaultLabel is the label key of Argo CD 2's default tracking
	// method (label; common.LabelKeyAppInstance). The upstream chart sets
	// no app.kubernetes.io/* label, and Helm's marks rank first.
	argoDefaultLabel     = "app.kubernetes.io/instance"
	fleetObjectSetID     = "objectset.rio.cattle.io/id"
	helmReleaseName      = "meta.helm.sh/release-name"
	helmReleaseNamespace = "meta.helm.sh/release-namespace"
)

// appliedBy names the tool that applied an object by the marks it left
// (Workload.AppliedBy); "" when there are none. Fleet's agent deploys
// through Helm, so an object of Fleet's bears Helm's marks too.
func appliedBy(meta metav1.ObjectMeta) string {
	a := meta.Annotations
	release := ""
	if name := a[helmReleaseName]; name != "" {
		release = a[helmReleaseNamespace] + "/" + name
	}
	switch {
	case a[argoTrackingAnnotation] != "":
		app, _, _ := strings.Cut(a[argoTrackingAnnotation], ":")
		return "Argo CD (Application " + app + ")"
	case meta.Labels[argoInstanceLabel] != "":
		return "Argo CD (Application " + meta.Labels[argoInstanceLabel] + ")"
	case a[fleetObjectSetID] != "" && release != "":
		return "Fleet (Helm release " + release + ")"
	case a[fleetObjectSetID] != "":
		return "Fleet"
	case release != "":
		return "Helm (release " + release + ")"
	case meta.Labels[argoDefaultLabel] != "":
		return "Argo CD (Application " + meta.Labels[argoDefaultLabel] + ", by its tracking label " + argoDefaultLabel + ")"
	}
	return ""
}
