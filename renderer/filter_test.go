package renderer

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools/ccmtest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// filterCase is one table test of a filter: input YAML (one object or
// several separated by "---"), the expected YAML or an error substring.
type filterCase struct {
	name    string
	filter  kio.Filter
	input   string
	want    string
	wantErr string
}

func runFilterCases(t *testing.T, cases []filterCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var nodes []*yaml.RNode
			for _, doc := range strings.Split(tc.input, "\n---\n") {
				rn, err := yaml.Parse(doc)
				if err != nil {
					t.Fatalf("bad test input: %v", err)
				}
				nodes = append(nodes, rn)
			}
			out, err := tc.filter.Filter(nodes)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			var got []string
			for _, rn := range out {
				got = append(got, rn.MustString())
			}
			if g, w := strings.Join(got, "---\n"), strings.TrimLeft(tc.want, "\n"); g != w {
				t.Fatalf("got:\n%s\nwant:\n%s", g, w)
			}
			// Every filter is idempotent.
			again, err := tc.filter.Filter(out)
			if err != nil {
				t.Fatalf("second run: %v", err)
			}
			for i, rn := range again {
				if rn.MustString() != got[i] {
					t.Fatalf("second run changed the output:\n%s", rn.MustString())
				}
			}
		})
	}
}

// ds is the tests' CCM DaemonSet (the shared fixture) with a pod spec of
// the test's.
func ds(podSpec string) string { return ccmtest.DaemonSet(ccmtest.Options{PodSpec: podSpec}) }

// ccmContainer is the workload of the test inputs: its CCM container is "ccm".
var ccmContainer = Workload{Containers: []string{"ccm"}}

func mustProfile(d distros.Distro) distros.Record {
	p, ok := distros.RecordOf(d)
	if !ok {
		panic(d)
	}
	return p
}
