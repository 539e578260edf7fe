package chartops

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/kube"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// readiness is Helm's kube client, which notes, when a wait for a
// release's objects (--wait, --atomic) ends before they are ready, which
// are not: at once, before --atomic removes or rolls them back. The rest of
// the client is Helm's (embedded, so that the actions find every interface
// of it they look for).
type readiness struct {
	*kube.Client
	mu       sync.Mutex
	notReady []string
}

func (r *readiness) Wait(res kube.ResourceList, timeout time.Duration) error {
	err := r.Client.Wait(res, timeout)
	r.note(res, err)
	return err
}

func (r *readiness) WaitWithJobs(res kube.ResourceList, timeout time.Duration) error {
	err := r.Client.WaitWithJobs(res, timeout)
	r.note(res, err)
	return err
}

func (r *readiness) note(res kube.ResourceList, err error) {
	if err == nil {
		return
	}
	cs, cerr := r.Factory.KubernetesClientSet()
	if cerr != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	names := notReady(ctx, cs, res)
	r.mu.Lock()
	r.notReady = names
	r.mu.Unlock()
}

// take returns what the last failed wait found not ready, and forgets it.
func (r *readiness) take() []string {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	names := r.notReady
	r.notReady = nil
	return names
}

// notReady names the objects of a list that are not ready as Helm's wait
// judges them (kube.ReadyChecker), a DaemonSet or Deployment with how many
// of its pods are.
func notReady(ctx context.Context, cs kubernetes.Interface, res kube.ResourceList) []string {
	checker := kube.NewReadyChecker(cs, nil, kube.PausedAsReady(true), kube.CheckJobs(true))
	var out []string
	for _, info := range res {
		if ok, err := checker.IsReady(ctx, info); ok && err == nil {
			continue
		}
		kind := info.Object.GetObjectKind().GroupVersionKind().Kind
		if info.Mapping != nil {
			kind = info.Mapping.GroupVersionKind.Kind
		}
		name := kind + " " + info.Namespace + "/" + info.Name
		switch kind {
		case "DaemonSet":
			if ds, err := cs.AppsV1().DaemonSets(info.Namespace).Get(ctx, info.Name, metav1.GetOptions{}); err == nil {
				name += fmt.Sprintf(" (%d of %d pods ready)", ds.Status.NumberReady, ds.Status.DesiredNumberScheduled)
			}
		case "Deployment":
			if d, err := cs.AppsV1().Deployments(info.Namespace).Get(ctx, info.Name, metav1.GetOptions{}); err == nil {
				want := int32(1)
				if d.Spec.Replicas != nil {
					want = *d.Spec.Replicas
				}
				name += fmt.Sprintf(" (%d of %d pods ready)", d.Status.ReadyReplicas, want)
			}
		}
		out = append(out, name)
	}
	return out
}

// waitError adds to the error of an install or upgrade that waited what
// was not ready, and how to learn why: check on the release, or, when
// --atomic uninstalled it, on the manifests.
func (c *Client) waitError(err error, o Install, upgraded bool) error {
	names := c.ready.take()
	if len(names) == 0 {
		return err
	}
	why := fmt.Sprintf("aws-ccm-renderer check --release %s --namespace %s says why", o.Release, o.Namespace)
	if o.Atomic && !upgraded {
		why = fmt.Sprintf("--atomic uninstalled it: aws-ccm-renderer template %s ... | aws-ccm-renderer check -f - says why, with the same flags", o.Release)
	}
	return fmt.Errorf("%w; not ready after %s: %s; %s", err, o.Timeout, strings.Join(names, ", "), why)
}
