package renderer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safefile"
)

// The renderer's config file, a RendererConfig: what --config reads and
// the KRM function takes as functionConfig. It is decoded as YAML into
// Options, after its keys and the kinds of their values are checked
// against OptionTable.

// ConfigAPIVersion and ConfigKind identify the renderer's own config file,
// which --config reads and the KRM function takes as functionConfig.
const (
	ConfigAPIVersion = "aws-ccm-renderer.io/v1alpha1"
	ConfigKind       = "RendererConfig"
)

// Config is the renderer's config file: the command line's options as YAML.
type Config struct {
	APIVersion string `yaml:"apiVersion" json:"apiVersion"`
	Kind       string `yaml:"kind" json:"kind"`
	Metadata   struct {
		Name        string            `yaml:"name,omitempty" json:"name,omitempty"`
		Annotations map[string]string `yaml:"annotations,omitempty" json:"annotations,omitempty"`
		Labels      map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	} `yaml:"metadata,omitempty" json:"metadata,omitempty"`
	Options `yaml:",inline" json:",inline"`
}

// ReadConfigFile reads a RendererConfig file; "-" is not accepted because
// stdin carries the manifests.
func ReadConfigFile(path string) (Options, error) {
	data, err := safefile.ReadFile(path)
	if err != nil {
		return Options{}, &UsageError{Err: fmt.Errorf("--config: %w", err)}
	}
	o, err := ParseConfig(data)
	if err != nil {
		return Options{}, &UsageError{Err: fmt.Errorf("--config %s: %w", path, err)}
	}
	return o, nil
}

// ParseConfig decodes a RendererConfig document strictly: unknown keys
// (named with the known ones they most likely meant), values of the wrong
// kind, a wrong kind and a second document are errors, said in the file's
// own words. Fields it does not set keep their defaults.
func ParseConfig(data []byte) (Options, error) {
	c := Config{Options: DefaultOptions()}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return Options{}, errors.New("empty config")
		}
		return Options{}, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return Options{}, errors.New("a config file holds one document")
	}
	if err := checkConfigKeys(&doc); err != nil {
		return Options{}, err
	}
	if err := doc.Decode(&c); err != nil {
		return Options{}, err
	}
	if c.APIVersion != ConfigAPIVersion || c.Kind != ConfigKind {
		return Options{}, fmt.Errorf("want apiVersion %s and kind %s, got %q and %q",
			ConfigAPIVersion, ConfigKind, c.APIVersion, c.Kind)
	}
	return c.Options, nil
}

// configKeys are the keys of a RendererConfig besides the options'.
var configKeys = []string{"apiVersion", "kind", "metadata"}

// ConfigKeys lists the keys a RendererConfig takes: apiVersion, kind,
// metadata and the options' (as OptionTable names them).
func ConfigKeys() []string {
	keys := slices.Clone(configKeys)
	for _, op := range OptionTable {
		keys = append(keys, string(op.Opt))
	}
	return keys
}

// checkConfigKeys refuses, by line, a key a RendererConfig does not have
// (saying which it most likely meant) and an option's value of the wrong
// kind, before the document is decoded into Config.
func checkConfigKeys(doc *yaml.Node) error {
	m := doc
	if m.Kind == yaml.DocumentNode && len(m.Content) == 1 {
		m = m.Content[0]
	}
	if m.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: want a mapping of keys (apiVersion, kind, the options)", m.Line)
	}
	keys := ConfigKeys()
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if seen[k.Value] {
			return fmt.Errorf("line %d: %s is given twice", k.Line, k.Value)
		}
		seen[k.Value] = true
		if k.Value == "metadata" {
			if err := checkMetadataKeys(v); err != nil {
				return err
			}
			continue
		}
		op, isOption := OptionOf(Opt(k.Value))
		if !slices.Contains(keys, k.Value) {
			return fmt.Errorf("line %d: unknown key %q%s; the keys: %s", k.Line, k.Value,
				DidYouMean(k.Value, keys, func(s string) string { return s }), strings.Join(keys, ", "))
		}
		if !isOption || v.Tag == "!!null" {
			continue
		}
		if err := checkOptionValue(op, v); err != nil {
			return fmt.Errorf("line %d: %s: %w", v.Line, k.Value, err)
		}
	}
	return nil
}

// checkOptionValue refuses a value of the wrong kind for an option.
func checkOptionValue(op Option, v *yaml.Node) error {
	switch {
	case op.IsList():
		if v.Kind != yaml.SequenceNode {
			return fmt.Errorf("want a list, e.g. %s: [%s]", op.Opt, exampleItem(op))
		}
		for _, item := range v.Content {
			if item.Kind != yaml.ScalarNode {
				return fmt.Errorf("want a list of strings, e.g. %s: [%s]", op.Opt, exampleItem(op))
			}
		}
	case v.Kind != yaml.ScalarNode:
		return errors.New("want a single value, not a list or mapping")
	case op.IsBool():
		// One reading of true and false on every front end: Option.Set's,
		// as the flags, the KRM function's ConfigMap and the Argo CD
		// parameters take them (YAML 1.1's yes and on are no booleans
		// there, nor here). The node is rewritten to the boolean it means,
		// for the decoder.
		var o Options
		if err := op.Set(&o, v.Value); err != nil {
			return fmt.Errorf("%w, got %q", err, v.Value)
		}
		v.Value, v.Tag, v.Style = op.Text(o)[0], "!!bool", 0
	}
	return nil
}

func exampleItem(op Option) string {
	if op.Opt == OptRemoveArgs {
		return "v"
	}
	return "v=4"
}

// metadataKeys are the keys a RendererConfig's metadata takes.
var metadataKeys = []string{"name", "annotations", "labels"}

func checkMetadataKeys(v *yaml.Node) error {
	if v.Kind != yaml.MappingNode {
		return nil // the decoder says what is wrong with it
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		if k := v.Content[i]; !slices.Contains(metadataKeys, k.Value) {
			return fmt.Errorf("line %d: unknown key metadata.%s%s; metadata's keys: %s", k.Line, k.Value,
				DidYouMean(k.Value, metadataKeys, func(s string) string { return "metadata." + s }), strings.Join(metadataKeys, ", "))
		}
	}
	return nil
}
