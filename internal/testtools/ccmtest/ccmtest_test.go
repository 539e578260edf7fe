package ccmtest

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestManifest: each variant is YAML of the objects it says, with the
// options where they belong.
func TestManifest(t *testing.T) {
	if got := Manifest(Options{}); got != DaemonSet(Options{}) || strings.Count(got, "\n") != 11 || !strings.HasSuffix(got, "        image: "+Image+"\n") {
		t.Errorf("the minimal manifest:\n%s", got)
	}
	if got := ImageTag("v1.26.14"); got != "registry.k8s.io/provider-aws/cloud-controller-manager:v1.26.14" {
		t.Errorf("ImageTag: %s", got)
	}
	docs := Docs(Options{Image: ImageTag("v1.26.1"), Args: []string{"--v=2", "--cloud-provider=aws"}, ControlPlane: true, Account: true})
	var kinds []string
	for _, d := range docs {
		var o struct {
			Kind     string
			Metadata struct{ Name, Namespace string }
			Spec     struct {
				Template struct {
					Spec struct {
						ServiceAccountName string
						NodeSelector       map[string]string
						Containers         []struct {
							Name, Image string
							Args        []string
						}
					}
				}
			}
		}
		if err := yaml.Unmarshal([]byte(d), &o); err != nil || o.Metadata.Name != "ccm" {
			t.Fatalf("%v\n%s", err, d)
		}
		kinds = append(kinds, o.Kind)
		if o.Kind != "DaemonSet" {
			continue
		}
		pod := o.Spec.Template.Spec
		if c := pod.Containers; len(c) != 1 || c[0].Name != "ccm" || c[0].Image != ImageTag("v1.26.1") || strings.Join(c[0].Args, " ") != "--v=2 --cloud-provider=aws" ||
			pod.ServiceAccountName != "ccm" || pod.NodeSelector["node-role.kubernetes.io/control-plane"] != "" || len(pod.NodeSelector) != 1 {
			t.Errorf("the DaemonSet:\n%s", d)
		}
	}
	if strings.Join(kinds, " ") != "ServiceAccount ClusterRole ClusterRoleBinding DaemonSet" {
		t.Errorf("kinds %q", kinds)
	}
	if got := DaemonSet(Options{PodSpec: "      hostNetwork: true\n", Account: true}); !strings.HasSuffix(got, "    spec:\n      hostNetwork: true\n") || strings.Contains(got, "containers") {
		t.Errorf("a pod spec of its own:\n%s", got)
	}
}
