package renderer

import (
	"maps"
	"testing"
)

func TestCommandLine(t *testing.T) {
	for _, c := range []struct {
		name          string
		command, args []string
		want          map[string]string
	}{
		{"args", nil, []string{"--v=2", "--cloud-provider", "aws", "pos"}, map[string]string{"v": "2", "cloud-provider": "aws"}},
		{"command of the CCM's executable, then args", []string{"/bin/aws-cloud-controller-manager", "--v", "2"}, []string{"--x=1"},
			map[string]string{"v": "2", "x": "1"}},
		{"another executable's words are not the CCM's", []string{"/bin/sh", "-c", "--v=9"}, []string{"--x=1"}, map[string]string{"x": "1"}},
		{"the last occurrence wins", nil, []string{"--x=1", "-x", "2", "--x=3"}, map[string]string{"x": "3"}},
		{"a bare flag is true", nil, []string{"--enable-leader-migration", "--leader-elect=false"},
			map[string]string{"enable-leader-migration": "true", "leader-elect": "false"}},
		{"a bare flag before another flag", nil, []string{"--a", "--b", "v"}, map[string]string{"a": "true", "b": "v"}},
		{"-- and - are words", nil, []string{"--", "-"}, map[string]string{}},
		{"nothing", nil, nil, map[string]string{}},
	} {
		cl := ParseCommandLine(c.command, c.args)
		if got := cl.Flags(); !maps.Equal(got, c.want) {
			t.Errorf("%s: Flags %v, want %v", c.name, got, c.want)
		}
		for k, v := range c.want {
			if got, ok := cl.Value(k); !ok || got != v {
				t.Errorf("%s: Value(%s) = %q %v, want %q", c.name, k, got, ok, v)
			}
		}
		if _, ok := cl.Value("absent"); ok {
			t.Errorf("%s: an absent flag is there", c.name)
		}
	}
}
