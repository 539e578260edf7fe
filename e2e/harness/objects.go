package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/ptr"
)

// Decode reads the objects of a manifest stream (YAML or JSON documents).
func Decode(stream []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(string(stream)), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if u.Object != nil {
			out = append(out, u)
		}
	}
}

// ID names an object as Kind namespace/name.
func ID(u *unstructured.Unstructured) string {
	if u.GetNamespace() != "" {
		return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
	}
	return u.GetKind() + " " + u.GetName()
}

// defaultNamespace is where Apply places namespaced objects without a
// namespace: kube-system, as a chart rendered with --namespace kube-system
// places them.
const defaultNamespace = "kube-system"

// resource maps an object to its resource in the cluster; namespaced
// objects without a namespace go to defaultNamespace.
func (cp *ControlPlane) resource(u *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cp.Client.Discovery()))
	gvk := u.GroupVersionKind()
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ID(u), err)
	}
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := u.GetNamespace()
		if ns == "" {
			ns = defaultNamespace
		}
		return dyn.Resource(m.Resource).Namespace(ns), nil
	}
	return dyn.Resource(m.Resource), nil
}

// Apply creates or replaces objects by server-side apply, as
// `kubectl apply --server-side --force-conflicts` does.
func (cp *ControlPlane) Apply(ctx context.Context, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		data, err := o.MarshalJSON()
		if err != nil {
			return err
		}
		r, err := cp.resource(o)
		if err != nil {
			return err
		}
		if _, err := r.Patch(ctx, o.GetName(), types.ApplyPatchType, data,
			metav1.PatchOptions{FieldManager: "aws-ccm-e2e", Force: ptr.To(true)}); err != nil {
			return fmt.Errorf("applying %s: %w", ID(o), err)
		}
	}
	return nil
}

// Get reads an object back from the cluster, by its kind, namespace
// (defaultNamespace when it has none) and name.
func (cp *ControlPlane) Get(ctx context.Context, o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	r, err := cp.resource(o)
	if err != nil {
		return nil, err
	}
	got, err := r.Get(ctx, o.GetName(), metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", ID(o), err)
	}
	return got, nil
}

// Remove deletes objects; those already gone are fine.
func (cp *ControlPlane) Remove(ctx context.Context, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		r, err := cp.resource(o)
		if err != nil {
			return err
		}
		if err := r.Delete(ctx, o.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s: %w", ID(o), err)
		}
	}
	return nil
}

// ServiceAccountKubeconfig writes a kubeconfig with a token of a service
// account, as a pod of that account gets it, and returns its path.
func (cp *ControlPlane) ServiceAccountKubeconfig(ctx context.Context, ns, name string) (string, error) {
	tr, err := cp.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}},
		metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token for service account %s/%s: %w", ns, name, err)
	}
	return cp.TokenKubeconfig("sa-"+ns+"-"+name, tr.Status.Token)
}

// FreePort asks the kernel for a free loopback port.
func FreePort() (int, error) {
	p, err := freePorts(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

// WaitServed waits until the API server serves resource (a plural name) of
// groupVersion, as it does a while after the CustomResourceDefinition is
// applied: the CRD must be Established and its handler listed in discovery
// before a create of such an object can succeed.
func (cp *ControlPlane) WaitServed(ctx context.Context, groupVersion, resource string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		list, err := cp.Client.Discovery().ServerResourcesForGroupVersion(groupVersion)
		state := fmt.Sprint(err)
		if err == nil {
			for _, r := range list.APIResources {
				if r.Name == resource {
					return nil
				}
			}
			state = fmt.Sprintf("%s lists no %s", groupVersion, resource)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the API server does not serve %s %s %s after its CRD was applied: %s", groupVersion, resource, timeout, state)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
