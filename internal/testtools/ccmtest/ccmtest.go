// Package ccmtest writes the tests' minimal AWS CCM manifest: a DaemonSet
// ccm in kube-system running the CCM's upstream image, and, when asked,
// the service account it runs as with the ClusterRole bound to it. One
// fixture for every package's tests, the renderer's own included: it
// imports nothing of the project (internal/testtools imports the renderer).
package ccmtest

import "strings"

// Image is the CCM image the fixture runs unless told otherwise.
const Image = "registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0"

// ImageTag is the upstream CCM image at another tag (v1.26.14).
func ImageTag(tag string) string {
	name, _, _ := strings.Cut(Image, ":v")
	return name + ":" + tag
}

// Options are the variants of the fixture; the zero value is the smallest
// manifest the renderer takes: the DaemonSet and nothing else.
type Options struct {
	// Image is the container's image; "" is Image.
	Image string
	// Args are the container's arguments, written as a flow list; none
	// when empty.
	Args []string
	// ControlPlane places the pods on control-plane nodes, by a
	// nodeSelector as a plain chart does.
	ControlPlane bool
	// Account runs the pods as the ServiceAccount ccm and puts it, the
	// ClusterRole ccm (the service account token rules the renderer
	// extends) and their ClusterRoleBinding before the DaemonSet.
	Account bool
	// PodSpec, when set, is the pod spec's lines (indented six spaces) in
	// place of the fixture's, for the tests of a patch on a pod of their
	// own; the other options then do not apply to the DaemonSet.
	PodSpec string
}

// The account's documents: what Options.Account adds.
const (
	ServiceAccount = "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ccm\n  namespace: kube-system\n"
	ClusterRole    = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: ccm\nrules:\n" +
		"- apiGroups: [\"\"]\n  resources: [serviceaccounts]\n  verbs: [create]\n" +
		"- apiGroups: [\"\"]\n  resources: [serviceaccounts/token]\n  verbs: [create]\n"
	ClusterRoleBinding = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: ccm\n" +
		"roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: ccm\n" +
		"subjects:\n- kind: ServiceAccount\n  name: ccm\n  namespace: kube-system\n"
)

// Docs are the manifest's documents, each ending in a newline, the
// DaemonSet last.
func Docs(o Options) []string {
	var docs []string
	if o.Account {
		docs = append(docs, ServiceAccount, ClusterRole, ClusterRoleBinding)
	}
	return append(docs, DaemonSet(o))
}

// Manifest is the documents of Docs joined by --- lines.
func Manifest(o Options) string {
	return strings.Join(Docs(o), "---\n")
}

// DaemonSet is the CCM's DaemonSet alone.
func DaemonSet(o Options) string {
	var b strings.Builder
	b.WriteString("apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: ccm\n  namespace: kube-system\nspec:\n  template:\n    spec:\n")
	if o.PodSpec != "" {
		b.WriteString(o.PodSpec)
		return b.String()
	}
	if o.Account {
		b.WriteString("      serviceAccountName: ccm\n")
	}
	if o.ControlPlane {
		b.WriteString("      nodeSelector:\n        node-role.kubernetes.io/control-plane: \"\"\n")
	}
	image := o.Image
	if image == "" {
		image = Image
	}
	b.WriteString("      containers:\n      - name: ccm\n        image: " + image + "\n")
	if len(o.Args) > 0 {
		b.WriteString("        args: [" + strings.Join(o.Args, ", ") + "]\n")
	}
	return b.String()
}
