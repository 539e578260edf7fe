package harness

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"time"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// clientCA signs the client certificates the API server accepts
// (--client-ca-file): the certificate's common name is the user name, its
// organizations the groups, as for kubeadm's controller-manager.conf.
type clientCA struct {
	cert    *x509.Certificate
	certPEM []byte
	key     *ecdsa.PrivateKey
}

func newClientCA() (*clientCA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "aws-ccm-e2e-client-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &clientCA{cert: cert, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), key: key}, nil
}

// issue returns a client certificate and its key, PEM-encoded.
func (ca *clientCA) issue(user string, groups []string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: user, Organization: groups},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// UserKubeconfig writes a kubeconfig that authenticates as the given user
// and groups with a client certificate the API server trusts, and returns
// its path. Nothing else is granted: what the user may do is up to RBAC.
func (cp *ControlPlane) UserKubeconfig(user string, groups ...string) (string, error) {
	if cp.ca == nil {
		return "", errors.New("the control plane has no client CA")
	}
	cert, key, err := cp.ca.issue(user, groups)
	if err != nil {
		return "", fmt.Errorf("client certificate for %s: %w", user, err)
	}
	path := filepath.Join(cp.Dir, "user-"+unsafeFileChars.ReplaceAllString(user, "_")+".kubeconfig")
	return path, writeKubeconfig(path, cp.host, &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key})
}

// TokenKubeconfig writes a kubeconfig that authenticates with a bearer
// token (a service account's, say) under the given file name, and returns
// its path.
func (cp *ControlPlane) TokenKubeconfig(name, token string) (string, error) {
	path := filepath.Join(cp.Dir, unsafeFileChars.ReplaceAllString(name, "_")+".kubeconfig")
	if err := writeKubeconfig(path, cp.host, &clientcmdapi.AuthInfo{Token: token}); err != nil {
		return "", err
	}
	return path, os.Chmod(path, 0o600)
}
