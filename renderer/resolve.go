package renderer

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// checkAll checks every document, on all cores for long streams, and
// returns the error of the first bad document.
func checkAll(docs []*document) error {
	workers := runtime.GOMAXPROCS(0)
	if workers > 8 {
		workers = 8
	}
	if len(docs) < 256 || workers < 2 {
		for _, d := range docs {
			if err := d.check(); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, len(docs))
	var wg sync.WaitGroup
	chunk := (len(docs) + workers - 1) / workers
	for start := 0; start < len(docs); start += chunk {
		end := min(start+chunk, len(docs))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := start; i < end; i++ {
				if errs[i] = docs[i].check(); errs[i] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Cheap byte tests pick the documents worth parsing.
var (
	markCCMImage  = []byte("cloud-controller-manager")
	markCCMFlag   = []byte("cloud-provider")
	markMigration = []byte(GeneratedAnnotation)
)

// findWorkloads returns the DaemonSets and Deployments that run the AWS CCM.
func (r *Renderer) findWorkloads(docs []*document) ([]*target, error) {
	var out []*target
	for _, d := range docs {
		if !workloadKinds[d.kind] || !(d.mentions(markCCMImage) || d.mentions(markCCMFlag)) {
			continue
		}
		t, err := r.parse(d)
		if err != nil {
			return nil, err
		}
		spec, err := podSpec(t.node)
		if err != nil {
			return nil, &InputError{Doc: d.describe(), Err: err}
		}
		containers, err := ccmContainers(spec)
		if err != nil {
			return nil, &InputError{Doc: d.describe(), Err: fmt.Errorf("%s: %w", objectName(t.node), err)}
		}
		if len(containers) > 0 {
			out = append(out, t)
		}
	}
	return out, nil
}

// serviceAccount is a workload's identity: the subject its bindings name.
type serviceAccount struct{ namespace, name string }

func workloadServiceAccount(t *target) serviceAccount {
	spec, _ := podSpec(t.node)
	name := "default"
	for _, field := range []string{"serviceAccountName", "serviceAccount"} {
		if v := mapGet(spec.YNode(), field); v != nil && v.Kind == yaml.ScalarNode && v.Value != "" {
			name = v.Value
			break
		}
	}
	return serviceAccount{namespace: t.node.GetNamespace(), name: name}
}

// roleRef is a role some binding of the CCM's service account grants.
type roleRef struct {
	kind, name, namespace string // namespace only for a Role
}

// findRoles returns the Roles and ClusterRoles in the stream that are bound
// to the service accounts of the workloads.
func (r *Renderer) findRoles(docs []*document, workloads []*target) ([]*target, []string, error) {
	var accounts []serviceAccount
	for _, w := range workloads {
		if sa := workloadServiceAccount(w); !slices.Contains(accounts, sa) {
			accounts = append(accounts, sa)
		}
	}
	var refs []roleRef
	for _, d := range docs {
		if d.kind != "RoleBinding" && d.kind != "ClusterRoleBinding" || !mentionsAny(d, accounts) {
			continue
		}
		t, err := r.parse(d)
		if err != nil {
			return nil, nil, err
		}
		ref, ok, err := bindingRef(t.node, accounts)
		if err != nil {
			return nil, nil, &InputError{Doc: d.describe(), Err: err}
		}
		if ok && !slices.Contains(refs, ref) {
			refs = append(refs, ref)
		}
	}
	var roles []*target
	for _, d := range docs {
		if d.kind != "Role" && d.kind != "ClusterRole" || !slices.ContainsFunc(refs, func(ref roleRef) bool {
			return ref.kind == d.kind && d.mentions([]byte(ref.name))
		}) {
			continue
		}
		t, err := r.parse(d)
		if err != nil {
			return nil, nil, err
		}
		name, ns := t.node.GetName(), t.node.GetNamespace()
		if slices.ContainsFunc(refs, func(ref roleRef) bool {
			return ref.kind == d.kind && ref.name == name && (d.kind == "ClusterRole" || ref.namespace == "" || ns == "" || ref.namespace == ns)
		}) {
			roles = append(roles, t)
		}
	}
	var warnings []string
	if len(roles) == 0 {
		for _, sa := range accounts {
			warnings = append(warnings, fmt.Sprintf("no Role or ClusterRole bound to ServiceAccount %s/%s in the input: "+
				"RBAC not patched; make sure it may get and create serviceaccounts and create serviceaccounts/token", sa.namespace, sa.name))
		}
	}
	return roles, warnings, nil
}

func mentionsAny(d *document, accounts []serviceAccount) bool {
	for _, sa := range accounts {
		if d.mentions([]byte(sa.name)) {
			return true
		}
	}
	return false
}

// bindingRef returns the role a binding grants when one of its subjects is
// one of the service accounts.
func bindingRef(b *yaml.RNode, accounts []serviceAccount) (roleRef, bool, error) {
	m := b.YNode()
	subjects, err := listField(m, "subjects", "subjects")
	if err != nil || subjects == nil {
		return roleRef{}, false, err
	}
	bound := false
	for _, s := range subjects.Content {
		if s.Kind != yaml.MappingNode {
			return roleRef{}, false, fmt.Errorf("%s: subjects holds a %s, not a subject", objectName(b), kindName(s))
		}
		get := func(k string) string {
			if v := mapGet(s, k); v != nil {
				return v.Value
			}
			return ""
		}
		if get("kind") != "ServiceAccount" {
			continue
		}
		ns := get("namespace")
		if ns == "" && b.GetKind() == "RoleBinding" {
			ns = b.GetNamespace()
		}
		for _, sa := range accounts {
			if get("name") == sa.name && (ns == sa.namespace || ns == "" || sa.namespace == "") {
				bound = true
			}
		}
	}
	if !bound {
		return roleRef{}, false, nil
	}
	ref := mapGet(m, "roleRef")
	if ref == nil || ref.Kind != yaml.MappingNode {
		return roleRef{}, false, fmt.Errorf("%s has no roleRef", objectName(b))
	}
	out := roleRef{}
	if v := mapGet(ref, "kind"); v != nil {
		out.kind = v.Value
	}
	if v := mapGet(ref, "name"); v != nil {
		out.name = v.Value
	}
	if out.kind == "Role" {
		out.namespace = b.GetNamespace()
	}
	return out, true, nil
}

// migrationConfigMaps keeps the stream's leader migration ConfigMaps in step
// with the options. It returns the ConfigMaps to insert before a workload's
// document, and marks stale ones removed or replaced.
func (r *Renderer) migrationConfigMaps(docs []*document, workloads []*target) (map[*document][]byte, error) {
	want := map[string][]byte{} // "namespace/name" -> document text without separator
	insert := map[*document][]byte{}
	for _, w := range workloads {
		if !r.renderMigrationConfig() {
			continue
		}
		name, ns := w.node.GetName(), w.node.GetNamespace()
		key := ns + "/" + LeaderMigrationConfigMapName(name)
		if _, dup := want[key]; dup {
			continue
		}
		want[key] = leaderMigrationConfigMap(name, ns, r.opts.LeaderName)
		insert[w.doc] = append(append(insert[w.doc], "---\n"...), want[key]...)
	}
	for _, d := range docs {
		if d.kind != "ConfigMap" || !d.mentions(markMigration) {
			continue
		}
		t, err := r.parse(d)
		if err != nil {
			return nil, err
		}
		if t.node.GetAnnotations()[GeneratedAnnotation] != leaderMigrationMark {
			continue
		}
		key := t.node.GetNamespace() + "/" + t.node.GetName()
		text, ok := want[key]
		switch {
		case !ok:
			d.removed = true
		case d.node != nil:
			d.replace = text
		case bytes.Equal(bytes.TrimRight(d.raw[d.body:], "\n"), bytes.TrimRight(text, "\n")):
			// already as wanted: written back as it is
		default:
			d.out = append(slices.Clip(d.raw[:d.body]), text...)
		}
		if ok {
			// Present already: not inserted again.
			for _, w := range workloads {
				if w.node.GetNamespace()+"/"+LeaderMigrationConfigMapName(w.node.GetName()) == key {
					delete(insert, w.doc)
				}
			}
		}
	}
	return insert, nil
}
