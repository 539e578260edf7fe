package testtools

import (
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
)

// CCMOf splits a rendered stream and returns its CCM workload and the CCM
// container's args.
func CCMOf(t testing.TB, stream []byte) (manifest.Object, []string) {
	t.Helper()
	objs, err := manifest.Split(stream)
	if err != nil {
		t.Fatal(err)
	}
	ccm, err := manifest.CCM(objs)
	if err != nil {
		t.Fatal(err)
	}
	return ccm, manifest.Args(ccm)
}
