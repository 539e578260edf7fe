package cli

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

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

// fnConfigKeys are the keys a ConfigMap functionConfig may hold.
var fnConfigKeys = []string{"distro", "mode", "hostNetwork", "setArgs", "removeArgs",
	"allowMissingWorkload", "leaderMigrationConfig", "leaderName"}

// NewFnCommand builds "aws-ccm-renderer fn", the KRM function.
func NewFnCommand(s IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fn",
		Short: "Run as a KRM function: a ResourceList on stdin, patched on stdout",
		Long: `fn runs the renderer as a KRM function (kustomize transformers, kpt). It reads a
ResourceList on stdin and writes it back with the CCM's objects patched.

Options come from the ResourceList's functionConfig: either the renderer's own
RendererConfig (the --config file format), or a ConfigMap whose data holds
` + strings.Join(fnConfigKeys, ", ") + ` (lists comma- or newline-separated).
Problems are reported as results of severity error, with a non-zero exit.`,
		Example: fnExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rw := &kio.ByteReadWriter{Reader: cmd.InOrStdin(), Writer: cmd.OutOrStdout(), KeepReaderAnnotations: true}
			err := framework.Execute(framework.ResourceListProcessorFunc(processResourceList), rw)
			var results framework.Results
			if errors.As(err, &results) {
				// Already written as the ResourceList's results.
				return &renderer.InputError{Err: errors.New(oneLine(results.Error()))}
			}
			if err != nil {
				return &renderer.InputError{Err: err}
			}
			return nil
		},
	}
	setCommon(cmd, s)
	return cmd
}

// processResourceList is the function: options from functionConfig, then
// the renderer over the items.
func processResourceList(rl *framework.ResourceList) error {
	fail := func(err error, obj *yaml.RNode) error {
		r := &framework.Result{Message: oneLine(err.Error()), Severity: framework.Error}
		if obj != nil {
			r.ResourceRef = resourceRef(obj)
		}
		rl.Results = append(rl.Results, r)
		return rl.Results
	}
	opts, err := fnOptions(rl.FunctionConfig)
	if err != nil {
		return fail(err, rl.FunctionConfig)
	}
	r, err := renderer.New(opts)
	if err != nil {
		return fail(err, rl.FunctionConfig)
	}
	items, warnings, err := r.RenderNodes(rl.Items)
	if err != nil {
		return fail(err, nil)
	}
	rl.Items = items
	for _, w := range warnings {
		rl.Results = append(rl.Results, &framework.Result{Message: w, Severity: framework.Warning})
	}
	return nil
}

func resourceRef(obj *yaml.RNode) *yaml.ResourceIdentifier {
	return &yaml.ResourceIdentifier{
		TypeMeta: yaml.TypeMeta{APIVersion: obj.GetApiVersion(), Kind: obj.GetKind()},
		NameMeta: yaml.NameMeta{Name: obj.GetName(), Namespace: obj.GetNamespace()},
	}
}

// fnOptions reads the options from a functionConfig.
func fnOptions(fc *yaml.RNode) (renderer.Options, error) {
	if fc == nil || yaml.IsMissingOrNull(fc) {
		return renderer.DefaultOptions(), nil
	}
	switch kind := fc.GetKind(); kind {
	case renderer.ConfigKind:
		s, err := fc.String()
		if err != nil {
			return renderer.Options{}, err
		}
		o, err := renderer.ParseConfig([]byte(s))
		if err != nil {
			return o, &renderer.UsageError{Err: fmt.Errorf("functionConfig: %w", err)}
		}
		return o, nil
	case "ConfigMap":
		return configMapOptions(fc.GetDataMap())
	default:
		return renderer.Options{}, &renderer.UsageError{Err: fmt.Errorf("functionConfig is a %s: want a %s or a ConfigMap", kind, renderer.ConfigKind)}
	}
}

// configMapOptions reads options from a ConfigMap's data.
func configMapOptions(data map[string]string) (renderer.Options, error) {
	o := renderer.DefaultOptions()
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := strings.TrimSpace(data[k])
		bad := func(err error) error {
			return &renderer.UsageError{Err: fmt.Errorf("functionConfig data.%s=%q: %v", k, v, err)}
		}
		switch k {
		case "distro":
			o.Distro = renderer.Distro(v)
		case "mode":
			o.Mode = renderer.Mode(v)
		case "hostNetwork":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return o, bad(errors.New("want true or false"))
			}
			o.HostNetwork = &b
		case "allowMissingWorkload":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return o, bad(errors.New("want true or false"))
			}
			o.AllowMissingWorkload = b
		case "setArgs":
			o.SetArgs = splitList(v)
		case "removeArgs":
			o.RemoveArgs = splitList(v)
		case "leaderMigrationConfig":
			o.LeaderMigrationConfig = v
		case "leaderName":
			o.LeaderName = v
		default:
			return o, &renderer.UsageError{Err: fmt.Errorf("functionConfig data.%s: unknown key; known keys: %s", k, strings.Join(fnConfigKeys, ", "))}
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
