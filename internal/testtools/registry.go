package testtools

import (
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// ServeImage starts a registry (go-containerregistry's, in memory) in the
// place of image's registry, serving a random index under image's tag, for
// the test's life. It returns the registry's host, to put where the image's
// registry is, and the index's digest.
func ServeImage(t testing.TB, image string) (host, digest string) {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host = strings.TrimPrefix(srv.URL, "http://")
	ref, err := name.ParseReference(image)
	if err != nil {
		t.Fatal(err)
	}
	local, err := name.ParseReference(strings.Replace(image, ref.Context().RegistryStr(), host, 1))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := random.Index(256, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(local, idx); err != nil {
		t.Fatal(err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return host, d.String()
}
