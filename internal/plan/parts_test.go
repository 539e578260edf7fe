package plan

import (
	"maps"
	"slices"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// TestParts: every distribution but auto has its plan parts, and nothing
// else has; a plan from the distribution's own controller only where its
// record has one.
func TestParts(t *testing.T) {
	named := distros.Named(distros.Records())
	want := make([]distros.Distro, len(named))
	for i, p := range named {
		want[i] = p.Distro
		d, ok := parts[p.Distro]
		switch {
		case !ok:
			t.Errorf("%s: no plan parts", p.Distro)
		case (d.plan == nil) == (d.leader == nil) || d.config == nil || d.configCheck == nil || d.configExpect == "" || d.restart == nil:
			t.Errorf("%s: a part missing: %+v", p.Distro, d)
		case d.builtin != nil && p.Controller == nil:
			t.Errorf("%s: a plan from its own cloud controller, and no controller in its record", p.Distro)
		}
	}
	slices.Sort(want)
	if got := slices.Sorted(maps.Keys(parts)); !slices.Equal(got, want) {
		t.Errorf("plan parts for %v; want %v", got, want)
	}
	if !slices.Equal(Distros, distros.All[1:]) {
		t.Errorf("Distros = %v; want distros.All without auto", Distros)
	}
}
