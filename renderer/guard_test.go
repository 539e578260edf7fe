package renderer

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// guardImage is an image pinned by digest, as --guard-image wants.
var guardImage = "registry.example/aws-ccm-renderer-argocd-cmp@sha256:" + strings.Repeat("ab", 32)

// TestGuard: --guard-image puts the guard first among the CCM pod's init
// containers, with the CCM's mode and version, non-root and read-only, and
// a Role for what it reads in kube-system bound to the CCM's account; a
// render again is the same; a render without the option takes both out
// and gives the output of a render that never had them.
func TestGuard(t *testing.T) {
	in := readFile(t, "testdata/render/rke2-install/input.yaml")
	o := DefaultOptions()
	o.Distro = distros.RKE2
	plain, err := render(o, in)
	if err != nil {
		t.Fatal(err)
	}
	o.GuardImage = guardImage
	guarded, err := render(o, in)
	if err != nil {
		t.Fatal(err)
	}
	again, err := render(o, guarded)
	if err != nil || !bytes.Equal(again, guarded) {
		t.Fatalf("a second render with the guard changed the output (%v)", err)
	}
	var init, role *yaml.RNode
	for _, doc := range strings.Split(string(guarded), "\n---\n") {
		rn, err := yaml.Parse(doc)
		if err != nil {
			t.Fatal(err)
		}
		switch rn.GetKind() {
		case "DaemonSet":
			init, err = rn.Pipe(yaml.Lookup("spec", "template", "spec", "initContainers", "0"))
			if err != nil || init == nil {
				t.Fatalf("no init container: %v", err)
			}
		case "Role":
			if strings.HasSuffix(rn.GetName(), guardSuffix) {
				role = rn
			}
		}
	}
	s := init.MustString()
	for _, want := range []string{"name: " + GuardContainer, "image: " + guardImage, "- guard", "- --mode=install", "- --ccm-version=v1.",
		"fieldPath: metadata.name", "runAsNonRoot: true", "readOnlyRootFilesystem: true", "allowPrivilegeEscalation: false", "- ALL"} {
		if !strings.Contains(s, want) {
			t.Errorf("the guard's container lacks %q:\n%s", want, s)
		}
	}
	if role == nil {
		t.Fatal("no guard Role")
	}
	rules := role.MustString()
	for _, want := range []string{"- pods", "- leases", "- coordination.k8s.io", "- list"} {
		if !strings.Contains(rules, want) {
			t.Errorf("the guard's Role lacks %q:\n%s", want, rules)
		}
	}
	for _, not := range []string{"- get", "- watch", "- secrets", "- '*'"} {
		if strings.Contains(rules, not) {
			t.Errorf("the guard's Role grants %q:\n%s", not, rules)
		}
	}
	o.GuardImage = ""
	back, err := render(o, guarded)
	if err != nil || !bytes.Equal(back, plain) {
		t.Fatalf("a render without the guard over a guarded output is not the plain output (%v)", err)
	}
}

// TestGuardRefusals: an image not pinned by digest, and a CCM whose
// version the renderer cannot tell, are refused.
func TestGuardRefusals(t *testing.T) {
	in := readFile(t, "testdata/render/rke2-install/input.yaml")
	o := DefaultOptions()
	o.Distro = distros.RKE2
	for _, img := range []string{"registry.example/x:v1", "registry.example/x@sha256:abc", "x@sha256:" + strings.Repeat("AB", 32)} {
		o.GuardImage = img
		if _, err := render(o, in); err == nil || !strings.Contains(err.Error(), "pin the image by digest") {
			t.Errorf("--guard-image=%s: %v", img, err)
		}
	}
	o.GuardImage = guardImage
	digest := regexp.MustCompile(`(cloud-controller-manager):v[0-9.]+"`).ReplaceAllString(string(in), "${1}@sha256:"+strings.Repeat("cd", 32)+`"`)
	if _, err := render(o, []byte(digest)); err == nil || !strings.Contains(err.Error(), "pass the CCM's version with --ccm-version=") {
		t.Errorf("a digest-pinned CCM without --ccm-version: %v", err)
	}
	o.CCMVersion = "v1.34.3"
	out, err := render(o, []byte(digest))
	if err != nil || !strings.Contains(string(out), "- --ccm-version=v1.34.3") {
		t.Errorf("with --ccm-version: %v", err)
	}
}
