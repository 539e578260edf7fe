package chartops

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/provenance"
	"helm.sh/helm/v3/pkg/repo"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// TestCheckDigest compares a package with the digest its index gives, in
// the spellings an index may use; one that differs is an input error and
// the package leaves the cache.
func TestCheckDigest(t *testing.T) {
	b, err := os.ReadFile(testtools.UpstreamChart(t, testtools.LatestChartVersion))
	if err != nil {
		t.Fatal(err)
	}
	right, err := provenance.Digest(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	off := right[:63] + "a"
	if right[63] == 'a' {
		off = right[:63] + "b"
	}
	for _, tc := range []struct {
		name, digest string
		err, warn    string // "" for none
	}{
		{name: "plain hex", digest: right},
		{name: "sha256: prefix, upper case", digest: "sha256:" + strings.ToUpper(right)},
		{name: "none", digest: "", warn: "gives no digest for ccm 1.0.0: its package is not checked"},
		{name: "all zero", digest: strings.Repeat("0", 64), err: "has digest sha256:" + right + ", but the index of REPO gives sha256:" + strings.Repeat("0", 64)},
		{name: "one digit off", digest: off, err: "refusing it"},
		{name: "truncated", digest: right[:40], err: "refusing it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ccm-1.0.0.tgz")
			testtools.WriteFile(t, path, b)
			var errOut bytes.Buffer
			c := &Client{ErrOut: &errOut}
			err := c.checkDigest("ccm", "REPO", path, &repo.ChartVersion{Metadata: &chart.Metadata{Name: "ccm", Version: "1.0.0"}, Digest: tc.digest})
			_, statErr := os.Stat(path)
			var input *renderer.InputError
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &input)):
				t.Fatalf("error %v, want an input error with %q", err, tc.err)
			case tc.err != "" && statErr == nil:
				t.Error("the refused package is still in the cache")
			case tc.err == "" && statErr != nil:
				t.Errorf("the accepted package is gone: %v", statErr)
			}
			if !strings.Contains(errOut.String(), tc.warn) || tc.warn == "" && errOut.Len() > 0 {
				t.Errorf("stderr %q, want %q", errOut.String(), tc.warn)
			}
		})
	}
}

// TestHTTPSOnly: with HTTPSOnly, the getters send no plain http:// request,
// neither asked for nor a redirect from https://; without it, they do.
func TestHTTPSOnly(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("apiVersion: v1\n")) }))
	defer plain.Close()
	redirect := httptest.NewTLSServer(http.RedirectHandler(plain.URL+"/index.yaml", http.StatusFound))
	defer redirect.Close()
	tc := redirect.Client().Transport.(*http.Transport).TLSClientConfig
	for _, httpsOnly := range []bool{false, true} {
		s := &Source{HTTPSOnly: httpsOnly}
		for _, u := range []string{plain.URL + "/index.yaml", redirect.URL + "/index.yaml"} {
			g, err := s.getters(NewEnv(), tc).ByScheme(strings.SplitN(u, ":", 2)[0])
			if err != nil {
				t.Fatal(err)
			}
			_, err = g.Get(u)
			var refused *PlainHTTPError
			if errors.As(err, &refused) != httpsOnly || (!httpsOnly && err != nil) {
				t.Errorf("HTTPSOnly %v, %s: %v", httpsOnly, u, err)
			}
		}
	}
	err := (&Client{Source: &Source{}}).sourceError("http://example.com/x.tgz", "http://example.com/x.tgz", fmt.Errorf("get: %w", &PlainHTTPError{URL: "http://example.com/x.tgz"}))
	if !renderer.IsInputError(err) || err.Error() != "chart http://example.com/x.tgz: plain http:// (http://example.com/x.tgz) is refused, as anyone on the way may change what it gets: use https://" {
		t.Errorf("sourceError: %v", err)
	}
}
