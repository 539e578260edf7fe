package check

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/kubeversion"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// The guard: the part of check an init container of the CCM's pod runs
// (aws-ccm-renderer guard) to hold the CCM back while starting it would do
// harm. It reads less than check (renderer.GuardReads), from inside the cluster,
// and judges with check's own readings of the control plane: a second
// set of cloud controllers is the harm it prevents.

// GuardInput is what the guard knows of the CCM it holds back: what it was
// rendered as.
type GuardInput struct {
	// Mode is the CCM's: in migrate mode it shares the migration lease with
	// a controller manager that runs leader migration.
	Mode renderer.Mode
	// CCMVersions are the release tags of the CCM's containers (never
	// renderer.GuardAutoVersion: the command reads them first), each
	// judged; none holds.
	CCMVersions []string
	// Now is the time leases are judged at; zero means time.Now.
	Now time.Time
}

// CollectGuard reads what the guard judges: the API server's version, the
// nodes (the distribution and K3s's recorded arguments), the control
// plane's pods in kube-system and the leases there.
func CollectGuard(ctx context.Context, client kubernetes.Interface, in GuardInput) (*Snapshot, error) {
	s := &Snapshot{Now: in.Now, Pods: map[string]*corev1.Pod{}, Leases: map[string]*coordinationv1.Lease{}}
	if s.Now.IsZero() {
		s.Now = time.Now()
	}
	for _, step := range []func(context.Context, kubernetes.Interface) error{s.collectVersionAndNodes, s.collectControlPlane, s.collectLeases} {
		if err := step(ctx, client); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// GuardCCMVersions reads the CCM's release tags from the guard's own pod,
// namespace/pod: the tag of each container that runs the AWS CCM
// (renderer.IsCCMImage, or a command that runs renderer.CCMBinary however
// wrapped), each once. A container that runs the CCM from an image whose
// tag is no release fails it: the guard cannot tell that CCM's version. It
// lists the pods of the namespace by name, which the guard's Role allows
// in kube-system.
func GuardCCMVersions(ctx context.Context, client kubernetes.Interface, namespace, pod string) ([]string, error) {
	pods, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + pod})
	if err != nil {
		return nil, clusterError("list", "pods", namespace, err)
	}
	i := slices.IndexFunc(pods.Items, func(p corev1.Pod) bool { return p.Name == pod })
	if i < 0 {
		return nil, fmt.Errorf("its pod %s/%s is not there", namespace, pod)
	}
	var images, tags []string
	for _, c := range pods.Items[i].Spec.Containers {
		inv := readContainer(renderer.CCMBinary, c)
		if !renderer.IsCCMImage(c.Image) && len(inv.found) == 0 && len(inv.unread) == 0 {
			images = append(images, c.Image)
			continue
		}
		tag := renderer.ImageTag(c.Image)
		if !renderer.IsCCMImage(c.Image) || !kubeversion.IsRelease(tag) {
			return nil, fmt.Errorf("container %s of pod %s/%s runs the CCM from image %s, whose tag names no CCM release: give the guard --ccm-version", c.Name, namespace, pod, c.Image)
		}
		if !slices.Contains(tags, tag) {
			tags = append(tags, tag)
		}
	}
	if len(tags) == 0 {
		return nil, fmt.Errorf("no container of pod %s/%s runs the AWS CCM's image (%s): give the guard --ccm-version", namespace, pod, strings.Join(images, ", "))
	}
	return tags, nil
}

// Hold says why the CCM must not start now, one finding per reason; none
// when it is safe to. The reasons: a controller manager that runs the
// in-tree provider's cloud controllers beside it (without leader migration,
// or with it while the CCM is in install mode and so ignores the lease); a
// CCM of a minor the version skew policy forbids beside the API server (newer,
// or more than one older); a distribution's own cloud controller still
// running.
func Hold(s *Snapshot, in GuardInput) []Finding {
	v := NewView(s)
	kcms, unread := v.readControlPlane(programKCM, "cloud-provider", "enable-leader-migration")
	var out []Finding
	for _, u := range unread {
		out = append(out, Finding{Area: AreaInTree, Severity: Error, Subject: "kube-controller-manager on " + u.node,
			Message: "pod " + u.pod + ": " + u.why + ": the guard cannot tell whether it runs the in-tree cloud controllers",
			Fix:     "give kube-controller-manager its --cloud-provider and --enable-leader-migration flags as plain words of the pod's command or args (as kubeadm's and RKE2's static pods do)"})
	}
	for _, k := range kcms {
		st := kcmState{provider: k.flags["cloud-provider"], leaderMigration: IsTrue(k.flags["enable-leader-migration"])}
		if st.provider != "aws" {
			continue
		}
		f := Finding{Area: AreaInTree, Severity: Error, Subject: "kube-controller-manager on " + k.node}
		switch {
		case !st.leaderMigration:
			f.Message = st.String() + ": it runs the in-tree cloud controllers whatever the CCM does; the CCM would run a second set"
			f.Fix = "turn on leader migration in the controller manager and render the CCM with --mode=migrate (plan step before.kcm-leader-migration), or switch the controller manager to --cloud-provider=external first"
		case in.Mode != renderer.ModeMigrate:
			f.Message = st.String() + ": it runs the cloud controllers under the migration lease, which the CCM in install mode ignores"
			f.Fix = "render the CCM with --mode=migrate until every controller manager runs with --cloud-provider=external"
		default:
			continue
		}
		out = append(out, f)
	}
	if len(in.CCMVersions) == 0 {
		out = append(out, Finding{Area: AreaVersion, Severity: Error, Subject: "the CCM's version",
			Message: "none given: the guard cannot judge it against the API server's", Fix: "give the guard --ccm-version"})
	}
	for _, ccm := range in.CCMVersions {
		if f, ok := guardSkew(s.KubernetesVersion, ccm); ok {
			out = append(out, f)
		}
	}
	for _, d := range v.distroControllers() {
		out = append(out, Finding{Area: AreaControllers, Severity: Error, Subject: distros.DisplayName(d.dc.Distro) + "'s cloud controller",
			Message: "it runs (" + strings.Join(d.evidence, "; ") + "): it initialises the nodes with " + d.dc.Scheme + ":// providerIDs the AWS CCM cannot use",
			Fix:     "turn it off: " + d.dc.Disable})
	}
	return out
}

// guardSkew judges the CCM's minor against the API server's, as the
// version skew policy does for a cloud-controller-manager: not newer than
// the API server, at most one minor older. A version it cannot read holds.
func guardSkew(kube, ccm string) (Finding, bool) {
	f := Finding{Area: AreaVersion, Severity: Error, Subject: "CCM " + ccm}
	km, err := kubeversion.Minor(kube)
	if err != nil {
		f.Subject = "the API server's version"
		f.Message = "its /version says " + err.Error() + ": the guard cannot tell whether the CCM's minor is one the version skew policy allows"
		f.Fix = "make the API server report its version (kubectl version), or, to start the CCM unchecked, render it without the guard (--guard-image=\"\")"
		return f, true
	}
	cm, err := kubeversion.Minor(ccm)
	if err != nil {
		f.Subject = "the CCM's version"
		f.Message = err.Error() + ": the guard cannot judge it against the API server's"
		f.Fix = "give the guard --ccm-version with the CCM's release tag"
		return f, true
	}
	switch {
	case cm > km:
		f.Message = fmt.Sprintf("it is newer than the API server %s: the version skew policy allows a cloud-controller-manager at the API server's minor or one older, never newer", kube)
	case cm < km-1:
		f.Message = fmt.Sprintf("it is %d minors older than the API server %s: the version skew policy allows one", km-cm, kube)
	default:
		return Finding{}, false
	}
	f.Fix = "render the CCM of the cluster's minor (--kube-version " + kube + ")"
	return f, true
}
