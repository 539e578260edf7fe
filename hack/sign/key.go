package main

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"

	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
)

// Keypair is the release key as sigstore-go's sign.Keypair: an ECDSA P-256
// key (what cosign generate-key-pair makes), signing SHA-256 digests.
type Keypair struct {
	priv *ecdsa.PrivateKey
}

// LoadKey reads a private key in PEM: cosign's encrypted key (ENCRYPTED
// SIGSTORE PRIVATE KEY, from cosign generate-key-pair, decrypted with
// password, which may be empty) or an unencrypted PKCS#8 or SEC 1 key.
func LoadKey(pemBytes, password []byte) (*Keypair, error) {
	priv, err := cryptoutils.UnmarshalPEMToPrivateKey(pemBytes, func(bool) ([]byte, error) {
		if password == nil {
			return []byte{}, nil
		}
		return password, nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the key: %w (a cosign key needs COSIGN_PASSWORD)", err)
	}
	ec, ok := priv.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, errors.New("the key is not ECDSA P-256: make one with cosign generate-key-pair")
	}
	return &Keypair{priv: ec}, nil
}

// GenerateKey makes a throwaway key (the tests').
func GenerateKey() (*Keypair, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return &Keypair{priv: priv}, nil
}

// PublicPEM is the public key as cosign.pub holds it.
func (k *Keypair) PublicPEM() ([]byte, error) {
	return cryptoutils.MarshalPublicKeyToPEM(k.priv.Public())
}

func (k *Keypair) GetHashAlgorithm() protocommon.HashAlgorithm {
	return protocommon.HashAlgorithm_SHA2_256
}

func (k *Keypair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return protocommon.PublicKeyDetails_PKIX_ECDSA_P256_SHA_256
}

// GetHint is the key's hint in a bundle as cosign writes it: the base64 of
// the SHA-256 of its PKIX form.
func (k *Keypair) GetHint() []byte {
	der, err := x509.MarshalPKIXPublicKey(k.priv.Public())
	if err != nil {
		return nil
	}
	sum := sha256.Sum256(der)
	return []byte(base64.StdEncoding.EncodeToString(sum[:]))
}

func (k *Keypair) GetKeyAlgorithm() string { return "ECDSA" }

func (k *Keypair) GetPublicKey() crypto.PublicKey { return k.priv.Public() }

func (k *Keypair) GetPublicKeyPem() (string, error) {
	b, err := k.PublicPEM()
	return string(b), err
}

// SignData signs the SHA-256 of data; it returns the signature and the
// digest signed.
func (k *Keypair) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	sum := sha256.Sum256(data)
	sig, err := ecdsa.SignASN1(rand.Reader, k.priv, sum[:])
	return sig, sum[:], err
}
