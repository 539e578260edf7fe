package renderer

import (
	"testing"
)

// TestBooleansAlike: a boolean option means the same from a flag, a KRM
// ConfigMap or an Argo CD parameter (Option.Set) and from a RendererConfig
// (ParseConfig): the same texts are true, false or refused.
func TestBooleansAlike(t *testing.T) {
	op, _ := OptionOf(OptStrict)
	for _, text := range []string{"true", "false", "True", "FALSE", "1", "0", "t", "f", "yes", "no", "on", "off", "y", "2", `"true"`} {
		var fromFlag Options
		flagErr := op.Set(&fromFlag, text)
		fromConfig, configErr := ParseConfig([]byte("apiVersion: " + ConfigAPIVersion + "\nkind: " + ConfigKind + "\nstrict: " + text + "\n"))
		if text == `"true"` { // a quoted YAML string is the text true
			flagErr = op.Set(&fromFlag, "true")
		}
		if (flagErr == nil) != (configErr == nil) {
			t.Errorf("%s: as a flag %v, in a RendererConfig %v", text, flagErr, configErr)
			continue
		}
		if flagErr == nil && fromFlag.Strict != fromConfig.Strict {
			t.Errorf("%s: as a flag %v, in a RendererConfig %v", text, fromFlag.Strict, fromConfig.Strict)
		}
	}
}
