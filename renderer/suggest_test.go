package renderer

import (
	"slices"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

func TestSuggest(t *testing.T) {
	distros := stringsOf(distros.All)
	for _, c := range []struct {
		word       string
		candidates []string
		want       []string
	}{
		{"rke1", distros, []string{"rke", "rke2"}},
		{"RKE2", distros, []string{"rke2"}},
		{"rke3", distros, []string{"rke", "rke2"}},
		{"k3", distros, []string{"k3s"}},
		{"kubeadmn", distros, []string{"kubeadm"}},
		{"eks", distros, nil},
		{"migrat", stringsOf(Modes), []string{"migrate"}},
		{"upgrade", stringsOf(Modes), nil},
		{"set-args", []string{"set-arg", "remove-arg", "distro"}, []string{"set-arg"}},
		{"distroo", []string{"set-arg", "remove-arg", "distro"}, []string{"distro"}},
		{"x", []string{"v", "distro"}, []string{"v"}},
		{"nmae", []string{"name", "labels"}, []string{"name"}},
		{"distor", []string{"distro", "mode"}, []string{"distro"}},
		{"", []string{"v"}, []string{"v"}},
	} {
		if got := Suggest(c.word, c.candidates); !slices.Equal(got, c.want) {
			t.Errorf("Suggest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
	if got := DidYouMean("rke3", distros, func(s string) string { return "--distro=" + s }); got != " (did you mean --distro=rke or --distro=rke2?)" {
		t.Errorf("DidYouMean: %q", got)
	}
	if got := DidYouMean("eks", distros, func(s string) string { return s }); got != "" {
		t.Errorf("DidYouMean without a near word: %q", got)
	}
}
