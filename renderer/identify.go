package renderer

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Target identification: which objects of the input the renderer may change.
// It is the one place that decides what is the CCM, what is its RBAC and what
// an earlier render generated; it parses only the documents that may be
// those (a byte test first), and fails rather than guess.

// targets is what identification found.
type targets struct {
	workload   *object
	containers []string // the CCM's containers in the workload
	image      string   // the first CCM container's image
	flags      []string // the first CCM container's command line (flags of command and args)
	account    serviceAccount
	access     access    // the RBAC decision
	generated  []*object // objects an earlier render generated
	warnings   []error   // spelled by the front end
}

// serviceAccount is a workload's identity: the subject its bindings name.
type serviceAccount struct{ namespace, name string }

func (sa serviceAccount) String() string { return "ServiceAccount " + sa.namespace + "/" + sa.name }

// markCCM is in every document that runs the CCM: in its image or its
// executable's name.
const markCCM = "cloud-controller-manager"

// identify finds the targets among the objects Kubernetes' clients apply
// (see classify). It returns nil, nil when there is no CCM workload and the
// options allow that.
func identify(objs []*object, o Options) (*targets, error) {
	w, err := findWorkload(objs, o)
	if err != nil || w == nil {
		return nil, err
	}
	t := &targets{workload: w}
	if err := t.readWorkload(o); err != nil {
		return nil, err
	}
	var warnings []error
	if t.generated, warnings, err = findGenerated(objs); err != nil {
		return nil, err
	}
	t.warnings = append(t.warnings, warnings...)
	if t.access, err = decideAccess(objs, t.account, t.generated, o.narrow()); err != nil {
		return nil, err
	}
	if len(t.access.missing) > 0 && t.account.namespace == "" {
		// A binding's ServiceAccount subject always names a namespace: without
		// the workload's, any of them could be the CCM's account, or none.
		return nil, w.errorf("the CCM's %s has no metadata.namespace, so the renderer cannot tell which service account the bindings "+
			"name is its own, and it lacks %s: give the workload its namespace (helm template --namespace, or kustomize's namespace)",
			w.kind, permissionList(t.access.missing))
	}
	t.warnings = append(t.warnings, t.access.warnings...)
	return t, nil
}

// findWorkload returns the one CCM workload: the DaemonSet or Deployment
// named by the target option, or else the one whose containers run the AWS
// CCM (IsCCMContainer).
func findWorkload(objs []*object, o Options) (*object, error) {
	tgt, err := parseTarget(o.Target)
	if err != nil {
		return nil, err
	}
	var found []*object
	workloads := 0
	mark := markCCM
	if tgt != nil {
		mark = tgt.name
	}
	for _, obj := range objs {
		if !workloadKinds[obj.kind] {
			continue
		}
		workloads++
		if tgt != nil && obj.kind != tgt.kind {
			continue
		}
		if !obj.mentions(mark) {
			continue
		}
		rn, err := obj.parse()
		if err != nil {
			return nil, err
		}
		if tgt != nil {
			if tgt.matches(obj.ref()) {
				found = append(found, obj)
			} else {
				obj.forget()
			}
			continue
		}
		if err := obj.expand(); err != nil {
			return nil, err
		}
		spec, err := podSpec(rn)
		if err != nil {
			return nil, obj.errorf("%w", err)
		}
		cs, err := containers(spec)
		if err != nil {
			return nil, obj.errorf("%w", err)
		}
		if slices.ContainsFunc(cs, isCCM) {
			found = append(found, obj)
		} else {
			obj.forget()
		}
	}
	switch {
	case len(found) == 1 && found[0].in != nil:
		return nil, found[0].errorf("the CCM's %s is an item of the %s: the renderer patches objects, not the items of a list; "+
			"give it as a document of its own", found[0].kind, found[0].in.kind)
	case len(found) == 1:
		if found[0].id.name == "" {
			return nil, found[0].errorf("the CCM's %s has no metadata.name", found[0].kind)
		}
		return found[0], found[0].expand()
	case len(found) > 1:
		names := make([]string, len(found))
		for i, f := range found {
			names[i] = f.ref().String() + " (" + f.loc().String() + ")"
		}
		how := "render one release at a time or name the one to patch with %s"
		if tgt != nil {
			how = "give %s with the namespace, KIND/NAMESPACE/NAME"
		}
		return nil, &InputError{Err: errorf("%d workloads could be the CCM: %s; "+how, len(found), strings.Join(names, ", "), OptTarget)}
	case tgt != nil:
		return nil, &InputError{Err: errorf("no %s matches %s among the %d workloads of the input", tgt, OptValue{OptTarget, tgt.String()}, workloads)}
	case o.AllowMissingWorkload:
		return nil, nil
	}
	return nil, &InputError{Err: errorf("no AWS cloud-controller-manager DaemonSet or Deployment among the %d objects of the input "+
		"(the CCM is recognised by its executable %s or its image .../provider-aws/cloud-controller-manager); "+
		"name an unusual build with %s, or pass %s to let such input through unchanged",
		countObjects(objs), CCMBinary, OptValue{OptTarget, "KIND/NAMESPACE/NAME"}, OptValue{OptAllowMissingWorkload, "true"})}
}

func countObjects(objs []*object) int {
	n := 0
	for _, o := range objs {
		if o.kind != "" {
			n++
		}
	}
	return n
}

// target is a parsed Options.Target.
type target struct {
	kind, namespace, name string
	anyNamespace          bool // KIND/NAME: the workload of that name in whatever namespace
}

func parseTarget(s string) (*target, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, "/")
	bad := func() error {
		return usageErrorf(OptTarget, "%q: want KIND/NAMESPACE/NAME (or KIND/NAME) of a DaemonSet or Deployment, e.g. %s",
			s, OptValue{OptTarget, "DaemonSet/kube-system/aws-cloud-controller-manager"})
	}
	if len(parts) < 2 || len(parts) > 3 || slices.Contains(parts, "") {
		return nil, bad()
	}
	t := &target{name: parts[len(parts)-1], anyNamespace: len(parts) == 2}
	if len(parts) == 3 {
		t.namespace = parts[1]
	}
	for k := range workloadKinds {
		if strings.EqualFold(parts[0], k) {
			t.kind = k
		}
	}
	if t.kind == "" {
		return nil, bad()
	}
	return t, nil
}

func (t *target) String() string {
	if t.anyNamespace {
		return t.kind + "/" + t.name
	}
	return t.kind + "/" + t.namespace + "/" + t.name
}

func (t *target) matches(r *ObjectRef) bool {
	return r.Kind == t.kind && r.Name == t.name && (t.anyNamespace || r.Namespace == t.namespace)
}

// readWorkload learns the CCM's containers, image, flags and service
// account from its workload.
func (t *targets) readWorkload(o Options) error {
	w := t.workload
	spec, err := podSpec(w.node)
	if err != nil {
		return w.errorf("%w", err)
	}
	cs, err := containers(spec)
	if err != nil {
		return w.errorf("%w", err)
	}
	ccm := slices.DeleteFunc(slices.Clone(cs), func(c *yaml.RNode) bool { return !isCCM(c) })
	if len(ccm) == 0 && o.Target != "" {
		if len(cs) != 1 {
			names := make([]string, len(cs))
			for i, c := range cs {
				names[i] = fmt.Sprintf("%q", containerName(c))
			}
			return w.errorf("none of its containers (%s) runs %s or its image, and the renderer cannot tell which is the CCM", strings.Join(names, ", "), CCMBinary)
		}
		ccm = cs
	}
	for _, c := range ccm {
		name := containerName(c)
		if name == "" {
			return w.errorf("a CCM container has no name")
		}
		if slices.Contains(t.containers, name) {
			return w.errorf("two containers are named %q", name)
		}
		t.containers = append(t.containers, name)
	}
	t.image = containerImage(ccm[0])
	if t.flags, err = commandLine(ccm[0]); err != nil {
		return w.errorf("container %q: %w", containerName(ccm[0]), err)
	}
	t.account = serviceAccount{namespace: w.id.namespace, name: "default"}
	for _, field := range []string{"serviceAccountName", "serviceAccount"} {
		if v := scalar(spec.YNode(), field); v != "" {
			t.account.name = v
			break
		}
	}
	return nil
}

// generatedKinds are the kinds of the objects the renderer generates.
var generatedKinds = map[string]bool{"ConfigMap": true, "Role": true, "RoleBinding": true, "ClusterRole": true, "ClusterRoleBinding": true}

// findGenerated returns the objects an earlier render generated: documents
// or items of a ResourceList (never items of a list, which the renderer
// cannot replace) that carry GeneratedAnnotation and are exactly what one of
// its generators makes (see generatedBy). Any other object with the
// annotation is the user's, with a warning: it counts as theirs everywhere,
// in who holds a role as in collisions.
func findGenerated(objs []*object) (out []*object, warnings []error, err error) {
	for _, obj := range objs {
		if !generatedKinds[obj.kind] || (obj.id != nil && !obj.id.marked) || !obj.mentions(GeneratedAnnotation) {
			continue // (classify read the identity of any object it parsed)
		}
		rn, err := obj.parse()
		if err != nil {
			return nil, nil, err
		}
		mark := generatedMark(rn)
		switch {
		case mark == "":
			obj.forget()
		case obj.in == nil && generatedBy(rn):
			out = append(out, obj)
		default:
			warnings = append(warnings, errorf("%s (%s) carries %s: %s but is not an object the renderer generates: taken as yours",
				obj.ref(), obj.loc(), GeneratedAnnotation, mark))
			obj.forget()
		}
	}
	return out, warnings, nil
}
