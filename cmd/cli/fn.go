package cli

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safefile"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/terminal"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

const fnExamples = `  # As a kustomize exec transformer (kustomization.yaml: transformers: [aws-ccm.yaml])
  cat > aws-ccm.yaml <<'EOF'
  apiVersion: aws-ccm-renderer.io/v1alpha1
  kind: RendererConfig
  metadata:
    name: aws-ccm
    annotations:
      config.kubernetes.io/function: |
        exec:
          path: /usr/local/bin/aws-ccm-renderer
          args: [fn]
  distro: rke2
  EOF
  kustomize build --enable-alpha-plugins --enable-exec .`

// fnKeys are the keys a ConfigMap functionConfig may hold: the options'
// keys.
func fnKeys() []string {
	keys := make([]string, len(renderer.OptionTable))
	for i, op := range renderer.OptionTable {
		keys[i] = renderer.KeySpelling(op.Opt)
	}
	return keys
}

func fnConfigKeys() string { return strings.Join(fnKeys(), ", ") }

// resourceListKind is what the KRM function protocol wraps items in.
const resourceListKind = "ResourceList"

// NewFnCommand builds "aws-ccm-renderer fn", the KRM function.
//
// It speaks the protocol with kyaml's kio.ByteReadWriter, the reader and
// writer under kyaml's fn/framework, rather than with the framework
// itself: the framework links kube-openapi's validation packages, whose
// init functions cost every run of the binary, the post-render path
// included, over a millisecond.
func NewFnCommand(s IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fn",
		Short: "Run as a KRM function: a ResourceList on stdin, patched on stdout",
		Long: `fn runs the renderer as a KRM function (kustomize transformers, kpt). It reads a
ResourceList on stdin and writes it back with the CCM's objects patched.

Options come from the ResourceList's functionConfig: either the renderer's own
RendererConfig (the --config file format), or a ConfigMap whose data holds
` + fnConfigKeys() + ` (lists comma- or newline-separated).
Unknown keys are errors. Problems are reported as results of severity error,
and on stderr, with a non-zero exit; notes as results of severity warning.`,
		Example: fnExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runFn(cmd)
		},
	}
	SetCommon(cmd, s)
	return cmd
}

func runFn(cmd *cobra.Command) error {
	if terminal.IsTerminal(cmd.InOrStdin()) {
		return &renderer.UsageError{Err: errors.New("stdin is a terminal: fn reads a KRM ResourceList, as kustomize or kpt send it; see --help")}
	}
	// KeepReaderAnnotations: the items go back with exactly the annotations
	// they came with (the orchestrator's config.kubernetes.io/* and
	// internal.config.kubernetes.io/* bookkeeping); the reader adds none to
	// the items of a ResourceList.
	rw := &kio.ByteReadWriter{Reader: safefile.LimitReader(cmd.InOrStdin()), Writer: cmd.OutOrStdout(), KeepReaderAnnotations: true}
	items, err := rw.Read()
	if err != nil {
		return &renderer.InputError{Err: fmt.Errorf("reading the ResourceList: %s", OneLine(err.Error()))}
	}
	if rw.WrappingKind != resourceListKind {
		// A plain manifest stream would come back with the reader's index
		// annotations in it: refuse it, and write nothing.
		return &renderer.InputError{Err: errors.New("stdin is not a KRM ResourceList: fn runs as a kustomize or kpt function; " +
			"for a manifest stream run aws-ccm-renderer without fn")}
	}
	for i, n := range items {
		// The ResourceList format has objects as items; kyaml's writer
		// fails on anything else, so refuse it here, before any output.
		if n.YNode().Kind != yaml.MappingNode {
			return &renderer.InputError{Err: fmt.Errorf("reading the ResourceList: item %d is a %s, not an object", i+1, renderer.KindName(n.YNode()))}
		}
	}
	items, results, runErr := processResourceList(items, rw.FunctionConfig)
	for _, r := range results {
		if r.Severity == severityWarning {
			fmt.Fprintln(cmd.ErrOrStderr(), Warning(r.Message))
		}
	}
	if len(results) > 0 {
		b, err := yaml.Marshal(results)
		if err != nil {
			return err
		}
		if rw.Results, err = yaml.Parse(string(b)); err != nil {
			return err
		}
	}
	// Whole or nothing: the list goes to stdout only once it is written.
	var buf bytes.Buffer
	rw.Writer = &buf
	if err := rw.Write(items); err != nil {
		return &renderer.InputError{Err: fmt.Errorf("writing the ResourceList: %s", OneLine(err.Error()))}
	}
	if _, err := buf.WriteTo(cmd.OutOrStdout()); err != nil {
		return &IOError{fmt.Errorf("writing the ResourceList: %w", err)}
	}
	return runErr
}

const (
	severityError   = "error"
	severityWarning = "warning"
)

// result is one entry of a ResourceList's results.
type result struct {
	Message     string       `yaml:"message"`
	Severity    string       `yaml:"severity"`
	ResourceRef *resourceRef `yaml:"resourceRef,omitempty"`
}

type resourceRef struct {
	APIVersion string `yaml:"apiVersion,omitempty"`
	Kind       string `yaml:"kind,omitempty"`
	Name       string `yaml:"name,omitempty"`
	Namespace  string `yaml:"namespace,omitempty"`
}

func refTo(obj *yaml.RNode) *resourceRef {
	return &resourceRef{APIVersion: obj.GetApiVersion(), Kind: obj.GetKind(), Name: obj.GetName(), Namespace: obj.GetNamespace()}
}

// processResourceList is the function: options from functionConfig, then
// the renderer over the items. On error the items come back unchanged, with
// the problem as a result of severity error that names the object (the
// functionConfig, or the item the renderer could not accept). Messages spell
// options as functionConfig keys.
func processResourceList(items []*yaml.RNode, fc *yaml.RNode) ([]*yaml.RNode, []result, error) {
	fail := func(msg string, ref *resourceRef) ([]*yaml.RNode, []result, error) {
		r := result{Message: OneLine(msg), Severity: severityError, ResourceRef: ref}
		return items, []result{r}, &renderer.InputError{Err: errors.New(r.Message)}
	}
	opts, err := fnOptions(fc)
	var r *renderer.Renderer
	if err == nil {
		r, err = renderer.New(opts)
	}
	if err != nil {
		if fc.IsNil() {
			return fail("functionConfig: "+renderer.Message(err, renderer.KeySpelling), nil)
		}
		return fail("functionConfig "+fc.GetKind()+" "+fc.GetName()+": "+renderer.Message(err, renderer.KeySpelling), refTo(fc))
	}
	// The renderer patches objects in place: give it copies, so that on
	// error the items go back exactly as they came.
	work := make([]*yaml.RNode, len(items))
	for i, n := range items {
		work[i] = n.Copy()
	}
	out, warnings, err := r.WithSpelling(renderer.KeySpelling).RenderNodes(work)
	if err != nil {
		var ref *resourceRef
		var in *renderer.InputError
		if errors.As(err, &in) && in.Item && in.Index >= 1 && in.Index <= len(items) {
			ref = refTo(items[in.Index-1])
		}
		return fail(renderer.Message(err, renderer.KeySpelling), ref)
	}
	keepIdentity(work, out)
	var results []result
	for _, w := range warnings {
		results = append(results, result{Message: w, Severity: severityWarning})
	}
	return out, results, nil
}

// keepIdentity gives an object the renderer regenerated in place of an
// item (the leader migration ConfigMap of an earlier render) the
// orchestrator's annotations that item came with, so that kustomize and kpt
// still know it (kpt writes it back to its file by them). Objects the
// renderer adds carry no comments.
func keepIdentity(in, out []*yaml.RNode) {
	sent := make(map[*yaml.RNode]bool, len(in))
	for _, n := range in {
		sent[n] = true
	}
	id := func(n *yaml.RNode) string {
		return n.GetApiVersion() + "/" + n.GetKind() + "/" + n.GetNamespace() + "/" + n.GetName()
	}
	replaced := map[string]*yaml.RNode{}
	for _, n := range in {
		replaced[id(n)] = n
	}
	for _, n := range out {
		if sent[n] {
			delete(replaced, id(n))
		}
	}
	for _, n := range out {
		if sent[n] {
			continue
		}
		clearComments(n.YNode())
		old, ok := replaced[id(n)]
		if !ok {
			continue
		}
		// In the order the item had them.
		annotations, _ := old.Pipe(yaml.Lookup(yaml.MetadataField, yaml.AnnotationsField))
		if annotations == nil {
			continue
		}
		c := annotations.YNode().Content
		for i := 0; i+1 < len(c); i += 2 {
			if isBookkeeping(c[i].Value) {
				_ = n.PipeE(yaml.SetAnnotation(c[i].Value, c[i+1].Value))
			}
		}
	}
}

// isBookkeeping reports whether an annotation belongs to the KRM function
// protocol or kustomize's tracking of the objects it sends.
func isBookkeeping(key string) bool {
	for _, p := range []string{"config.kubernetes.io/", "internal.config.kubernetes.io/", "config.k8s.io/", "kustomize.config.k8s.io/"} {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

func clearComments(n *yaml.Node) {
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	if len(n.Content) > 0 && n.Kind == yaml.MappingNode {
		n.Content[0].HeadComment = ""
	}
}

// fnOptions reads the options from a functionConfig.
func fnOptions(fc *yaml.RNode) (renderer.Options, error) {
	if fc.IsNilOrEmpty() {
		return renderer.DefaultOptions(), nil
	}
	switch kind := fc.GetKind(); kind {
	case renderer.ConfigKind:
		s, err := fc.String()
		if err != nil {
			return renderer.Options{}, err
		}
		return renderer.ParseConfig([]byte(s))
	case "ConfigMap":
		return configMapOptions(fc.GetDataMap())
	default:
		return renderer.Options{}, fmt.Errorf("want a %s (apiVersion %s) or a ConfigMap", renderer.ConfigKind, renderer.ConfigAPIVersion)
	}
}

// configMapOptions reads options from a ConfigMap's data, keyed as the
// config file's keys; a list is comma- or newline-separated.
func configMapOptions(data map[string]string) (renderer.Options, error) {
	o := renderer.DefaultOptions()
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		op, ok := renderer.OptionOf(renderer.Opt(k))
		if !ok {
			return o, fmt.Errorf("data.%s: unknown key%s; known keys: %s", k,
				renderer.DidYouMean(k, fnKeys(), func(s string) string { return "data." + s }), fnConfigKeys())
		}
		v := strings.TrimSpace(data[k])
		values := []string{v}
		if op.IsList() {
			values = splitList(v)
		}
		for _, item := range values {
			if err := op.Set(&o, item); err != nil {
				return o, fmt.Errorf("data.%s=%q: %w", k, v, err)
			}
		}
	}
	return o, nil
}

// splitList splits a comma- or newline-separated list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
