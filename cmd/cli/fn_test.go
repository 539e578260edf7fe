package cli

import (
	"strings"
	"testing"
)

func resourceList(functionConfig string) string {
	rl := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
	for _, line := range strings.Split(strings.TrimSpace(ccm), "\n") {
		if strings.HasPrefix(line, "apiVersion") {
			rl += "- " + line + "\n"
		} else {
			rl += "  " + line + "\n"
		}
	}
	if functionConfig != "" {
		rl += "functionConfig:\n"
		for _, line := range strings.Split(strings.TrimSpace(functionConfig), "\n") {
			rl += "  " + line + "\n"
		}
	}
	return rl
}

func TestFn(t *testing.T) {
	cases := []struct {
		name, fc  string
		code      int
		stdout    []string // what the ResourceList written back must contain
		stderrHas string
	}{
		{"defaults without functionConfig", "", ExitOK,
			[]string{"node-role.kubernetes.io/control-plane", "operator: Exists", "severity: warning"}, ""},
		{"ConfigMap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  distro: rke\n  hostNetwork: \"false\"\n  setArgs: |\n    v=4\n    cluster-name=prod\n", ExitOK,
			[]string{`node-role.kubernetes.io/controlplane: "true"`, "--v=4", "--cluster-name=prod"}, ""},
		{"RendererConfig in migrate mode", "apiVersion: aws-ccm-renderer.io/v1alpha1\nkind: RendererConfig\nmetadata: {name: c}\nmode: migrate\n", ExitOK,
			[]string{"kind: LeaderMigrationConfiguration", "--enable-leader-migration=true"}, ""},
		{"unknown key", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  distor: rke\n", ExitInput,
			[]string{"severity: error", "data.distor: unknown key"}, "data.distor: unknown key"},
		{"bad boolean", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  hostNetwork: maybe\n", ExitInput,
			[]string{"severity: error"}, `data.hostNetwork="maybe": want true or false`},
		{"wrong kind", "apiVersion: v1\nkind: Secret\nmetadata: {name: c}\n", ExitInput,
			[]string{"severity: error"}, "functionConfig is a Secret"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := run(t, resourceList(c.fc), "fn")
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, c.code, errOut)
			}
			for _, want := range c.stdout {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if !strings.Contains(errOut, c.stderrHas) {
				t.Errorf("stderr %q lacks %q", errOut, c.stderrHas)
			}
		})
	}
	code, out, errOut := run(t, "kind: [", "fn")
	if code != ExitInput || out != "" || !strings.Contains(errOut, "failed to read ResourceList input") {
		t.Errorf("not a ResourceList: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestSplitList(t *testing.T) {
	got := splitList(" a=1, b=2\n c ,,\n")
	if strings.Join(got, "|") != "a=1|b=2|c" {
		t.Errorf("splitList = %q", got)
	}
}
