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
