package check

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// Cloud configs: the in-tree provider's names (aws-sdk-go's endpoint
// IDs), aws-sdk-go-v2's, and both as the plan writes them.
const (
	override    = "[ServiceOverride \"%s\"]\nService = %s\nRegion = us-west-2\nURL = https://vpce.example\nSigningRegion = us-west-2\n"
	confOld     = "[Global]\nKubernetesClusterID = c\n\n[ServiceOverride \"1\"]\nService = ec2\nRegion = us-west-2\nURL = https://vpce.example\nSigningRegion = us-west-2\n\n[serviceoverride \"2\"]\n  service = \"elasticloadbalancing\"\n  region = us-west-2\n"
	confNew     = "[ServiceOverride \"1\"]\nService = EC2\nRegion = us-west-2\n[ServiceOverride \"2\"]\nService = Elastic Load Balancing\nRegion = us-west-2\n[ServiceOverride \"3\"]\nService = Elastic Load Balancing v2\nRegion = us-west-2\n"
	confBoth    = confOld + confNew
	confOtherRg = "[ServiceOverride \"1\"]\nService = ec2\nRegion = us-west-2\n[ServiceOverride \"2\"]\nService = EC2\nRegion = eu-west-1\n"
)

// withCloudConfig renders the chart with the CCM's image at tag and its
// --cloud-config mounted from a ConfigMap (or Secret) aws-cloud-config,
// and returns the objects with that object holding the text (none when
// text is "-").
func withCloudConfig(t *testing.T, tag, kind, text string) []runtime.Object {
	t.Helper()
	o := renderer.DefaultOptions()
	o.Distro, o.SetArgs = distros.RKE2, []string{"cloud-config=/etc/aws-ccm/cloud.conf"}
	objs := renderWith(t, o)
	ds := objs[len(objs)-1].(*appsv1.DaemonSet)
	spec := &ds.Spec.Template.Spec
	spec.Containers[0].Image = "registry.k8s.io/provider-aws/cloud-controller-manager:" + tag
	vol := corev1.Volume{Name: "cloud-config"}
	if kind == "Secret" {
		vol.Secret = &corev1.SecretVolumeSource{SecretName: "aws-cloud-config"}
	} else {
		vol.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "aws-cloud-config"}}
	}
	spec.Volumes = append(spec.Volumes, vol)
	spec.Containers[0].VolumeMounts = append(spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "cloud-config", MountPath: "/etc/aws-ccm"})
	switch {
	case text == "-":
	case kind == "Secret":
		objs = append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "aws-cloud-config", Namespace: "kube-system"}, Data: map[string][]byte{"cloud.conf": []byte(text)}})
	default:
		objs = append(objs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "aws-cloud-config", Namespace: "kube-system"}, Data: map[string]string{"cloud.conf": text}})
	}
	return objs
}

func TestServiceOverrides(t *testing.T) {
	got := ServiceOverrides(confOld + "; a comment\n[Global]\nService = not-an-override\n")
	want := []ServiceOverride{{"1", "ec2", "us-west-2", "https://vpce.example"}, {"2", "elasticloadbalancing", "us-west-2", ""}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%+v", got)
	}
}

// TestCloudConfigRule: the [ServiceOverride] names the CCM's release
// ignores, by its SDK; and where it stays silent.
func TestCloudConfigRule(t *testing.T) {
	const subject = "cloud config ConfigMap kube-system/aws-cloud-config (key cloud.conf)"
	for _, c := range []struct {
		name, tag, text string
		want            []want
	}{
		{"the in-tree names, an aws-sdk-go-v2 release", "v1.35.3", confOld, []want{
			{subject, Error, `[ServiceOverride "1"] Service = ec2 is the endpoint ID of another SDK: CCM v1.35.3 (aws-sdk-go-v2) matches service IDs and ignores it, so its EC2 calls go to the public endpoint`, "Service = EC2 (the same Region"},
			{subject, Error, `[ServiceOverride "2"] Service = elasticloadbalancing`, "Service = Elastic Load Balancing and another with Service = Elastic Load Balancing v2"}}},
		{"the in-tree names, v1.30.9 (still aws-sdk-go): silent", "v1.30.9", confOld, nil},
		{"the new names, a 1.26 release", "v1.26.14", confNew, []want{
			{subject, Error, `Service = EC2 is the service ID of another SDK: CCM v1.26.14 (aws-sdk-go) matches endpoint IDs`, "Service = ec2"},
			{subject, Error, `Service = Elastic Load Balancing is the service ID`, "Service = elasticloadbalancing"},
			{subject, Error, `Service = Elastic Load Balancing v2 is the service ID`, "Service = elasticloadbalancing"}}},
		{"both names: silent for either release", "v1.35.3", confBoth, nil},
		{"both names: silent for a 1.26 release too", "v1.26.14", confBoth, nil},
		{"the new name for another region only", "v1.35.3", confOtherRg, []want{{subject, Error, `Service = ec2`, "Service = EC2"}}},
		{"no overrides: silent", "v1.35.3", "[Global]\nZone = us-west-2a\n", nil},
		{"an untagged image: silent", "latest", confOld, nil},
		{"not there", "v1.35.3", "-", []want{{subject, Warning, "does not exist", "before.cloud-config"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := snapshotOf(t, nil, withCloudConfig(t, c.tag, "ConfigMap", c.text), false)
			cs := fake.NewSimpleClientset()
			if err := s.collectCloudConfig(context.Background(), cs); err != nil {
				t.Fatal(err)
			}
			var got []Finding
			for _, f := range Evaluate(s).Findings {
				if strings.HasPrefix(f.Subject, "cloud config ") {
					got = append(got, f)
				}
			}
			r := &Report{Findings: got}
			expectArea(t, r, AreaWorkload, c.want, false)
		})
	}
}

// TestCollectCloudConfig: the file from the cluster (a ConfigMap, a
// Secret), a Secret check may not read (a fact, not an error), an object
// that is not there, and a refusal of a ConfigMap (an error, as for the
// migration config).
func TestCollectCloudConfig(t *testing.T) {
	forbid := func(resource string) func(*fake.Clientset) {
		return func(cs *fake.Clientset) {
			cs.PrependReactor("get", resource, func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "aws-cloud-config", errors.New("no"))
			})
		}
	}
	for _, c := range []struct {
		name, kind string
		inCluster  bool
		react      func(*fake.Clientset)
		text       string
		missing    bool
		forbidden  bool
		err        bool
	}{
		{"a ConfigMap in the cluster", "ConfigMap", true, nil, confOld, false, false, false},
		{"a Secret in the cluster", "Secret", true, nil, confOld, false, false, false},
		{"a Secret check may not read", "Secret", true, forbid("secrets"), "", false, true, false},
		{"a ConfigMap check may not read", "ConfigMap", true, forbid("configmaps"), "", false, false, true},
		{"nowhere", "ConfigMap", false, nil, "", true, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			objs := withCloudConfig(t, "v1.35.3", c.kind, confOld)
			manifests, object := objs[:len(objs)-1], objs[len(objs)-1]
			var in []runtime.Object
			if c.inCluster {
				in = append(in, object)
			}
			cs := fake.NewSimpleClientset(in...)
			if c.react != nil {
				c.react(cs)
			}
			s := snapshotOf(t, nil, manifests, true)
			err := s.collectCloudConfig(context.Background(), cs)
			var ce *ClusterError
			if c.err != errors.As(err, &ce) {
				t.Fatalf("%v", err)
			}
			if c.err {
				return
			}
			cc := s.CloudConfig
			if cc == nil || cc.Text != c.text || cc.Missing != c.missing || cc.Forbidden != c.forbidden || !strings.HasPrefix(cc.From, c.kind+" kube-system/aws-cloud-config") {
				t.Errorf("%+v", cc)
			}
			if c.forbidden {
				if f := one(t, Evaluate(s), AreaWorkload, "cloud config "+cc.From); f.Severity != Info || !strings.Contains(f.Message, "may not read it") {
					t.Errorf("%+v", f)
				}
			}
		})
	}
}

// TestLockMissing: a v1alpha1 or v1beta1 LeaderMigrationConfiguration
// without resourceLock keeps the CCM from starting; v1 needs none.
func TestLockMissing(t *testing.T) {
	objs := render(t, distros.RKE2, renderer.ModeMigrate)
	for _, c := range []struct {
		name, config, says string
	}{
		{"v1beta1 without resourceLock", "apiVersion: controllermanager.config.k8s.io/v1beta1\nkind: LeaderMigrationConfiguration\nleaderName: l\ncontrollerLeaders:\n- name: '*'\n  component: '*'\n",
			"(controllermanager.config.k8s.io/v1beta1) has no resourceLock: the CCM's reader (Kubernetes 1.22–1.23 libraries) refuses it"},
		{"v1alpha1 with another lock", "apiVersion: controllermanager.config.k8s.io/v1alpha1\nkind: LeaderMigrationConfiguration\nleaderName: l\nresourceLock: configmaps\ncontrollerLeaders:\n- name: '*'\n  component: '*'\n",
			`has resourceLock "configmaps": the CCM's reader (Kubernetes 1.21–1.23 libraries)`},
		{"v1beta1 with leases", "apiVersion: controllermanager.config.k8s.io/v1beta1\nkind: LeaderMigrationConfiguration\nleaderName: l\nresourceLock: leases\ncontrollerLeaders:\n- name: '*'\n  component: '*'\n", ""},
		{"v1 without it", "apiVersion: controllermanager.config.k8s.io/v1\nkind: LeaderMigrationConfiguration\nleaderName: l\ncontrollerLeaders:\n- name: '*'\n  component: '*'\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var with []runtime.Object
			for _, o := range objs {
				if cm, ok := o.(*corev1.ConfigMap); ok {
					cm = cm.DeepCopy()
					cm.Data["leader-migration.yaml"] = c.config
					o = cm
				}
				with = append(with, o)
			}
			fs := findings(Evaluate(snapshotOf(t, nil, with, false)), AreaWorkload, "leader migration")
			switch {
			case c.says == "" && len(fs) != 0:
				t.Errorf("%+v", fs)
			case c.says != "" && (len(fs) != 1 || fs[0].Severity != Error || !strings.Contains(fs[0].Message, c.says) || !strings.Contains(fs[0].Fix, "resourceLock: leases")):
				t.Errorf("%+v, want %q", fs, c.says)
			}
		})
	}
}
