package testtools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
)

// PGPKey is an OpenPGP key made for one test: the tests sign chart packages
// and plugin packages with it, as a release does with the releaser's key.
type PGPKey struct {
	Entity *openpgp.Entity
	// Name is the key's user ID, which helm package --sign --key and helm
	// plugin package --sign --key take.
	Name string
	// PublicRing and SecretRing are keyring files (binary OpenPGP packets,
	// the format Helm reads): the public one for --keyring when verifying,
	// the secret one for --keyring when signing.
	PublicRing, SecretRing string
}

// NewPGPKey makes a key without a passphrase and writes its keyrings to a
// temporary directory of the test.
func NewPGPKey(t testing.TB, name string) PGPKey {
	t.Helper()
	e, err := openpgp.NewEntity(name, "test", name+"@example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	k := PGPKey{Entity: e, PublicRing: filepath.Join(dir, "pubring.gpg"), SecretRing: filepath.Join(dir, "secring.gpg")}
	for path, write := range map[string]func(*os.File) error{
		k.PublicRing: func(f *os.File) error { return e.Serialize(f) },
		k.SecretRing: func(f *os.File) error { return e.SerializePrivate(f, nil) },
	} {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := write(f); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for id := range e.Identities {
		k.Name = id
	}
	return k
}
