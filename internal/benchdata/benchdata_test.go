package benchdata

import (
	"bytes"
	"testing"
)

func TestUmbrella(t *testing.T) {
	b := Umbrella(10000)
	if n := bytes.Count(b, []byte("\n---\n")) + 1; n != 10000 {
		t.Fatalf("%d documents, want 10000", n)
	}
	if !bytes.Contains(b, []byte("kind: DaemonSet")) {
		t.Fatal("no CCM inside")
	}
	if len(b) < 10e6 || len(b) > 12e6 {
		t.Fatalf("%d bytes, want about 11 MB", len(b))
	}
}

func TestAdversarialSizes(t *testing.T) {
	if n := len(ManyRoles(10000)); n < 3.4e6 || n > 3.8e6 {
		t.Errorf("ManyRoles(10000) is %d bytes, want about 3.6 MB", n)
	}
	if n := len(AliasBindings(100)); n < 640<<10 || n > 670<<10 {
		t.Errorf("AliasBindings(100) is %d bytes, want about 653 KiB", n)
	}
}
