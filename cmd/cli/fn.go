package cli

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
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
			items, err := rw.Read()
			if err != nil {
				return &renderer.InputError{Err: fmt.Errorf("failed to read ResourceList input: %w", err)}
			}
			items, results, runErr := processResourceList(items, rw.FunctionConfig)
			if len(results) > 0 {
				b, err := yaml.Marshal(results)
				if err != nil {
					return err
				}
				if rw.Results, err = yaml.Parse(string(b)); err != nil {
					return err
				}
			}
			if err := rw.Write(items); err != nil {
				return &ioError{fmt.Errorf("writing the ResourceList: %w", err)}
			}
			return runErr
		},
	}
	setCommon(cmd, s)
	return cmd
}

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

// processResourceList is the function: options from functionConfig, then
// the renderer over the items. On error the items come back unchanged, with
// the problem as a result of severity error.
func processResourceList(items []*yaml.RNode, fc *yaml.RNode) ([]*yaml.RNode, []result, error) {
	fail := func(err error, obj *yaml.RNode) ([]*yaml.RNode, []result, error) {
		r := result{Message: oneLine(err.Error()), Severity: "error"}
		if obj != nil {
			r.ResourceRef = &resourceRef{APIVersion: obj.GetApiVersion(), Kind: obj.GetKind(), Name: obj.GetName(), Namespace: obj.GetNamespace()}
		}
		return items, []result{r}, &renderer.InputError{Err: err}
	}
	opts, err := fnOptions(fc)
	if err != nil {
		return fail(err, fc)
	}
	r, err := renderer.New(opts)
	if err != nil {
		return fail(err, fc)
	}
	out, warnings, err := r.RenderNodes(items)
	if err != nil {
		return fail(err, nil)
	}
	var results []result
	for _, w := range warnings {
		results = append(results, result{Message: w, Severity: "warning"})
	}
	return out, results, nil
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
