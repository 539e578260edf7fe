// Command newer reports the CCM releases internal/releases does not record
// yet (make releases-check): the releases of k8s.io/cloud-provider-aws the
// Go module proxy serves (the list it gives, and the next patch of every
// minor and the next minors, which it serves without listing), and the
// cloud-controller-manager images registry.k8s.io's promotion list names
// with their digests (kubernetes/k8s.io, releases.PromotionListURL; the
// environment variable PROMOTION_LIST names another URL or a file). It
// exits 0 when the data is current, 3 when a release or an image is new, 1
// when the proxy or the list cannot be read.
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
)

const module = "k8s.io/cloud-provider-aws"

func main() {
	out, err := exec.Command("go", "list", "-m", "-versions", module).Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "newer: go list -m -versions %s: %v\n", module, err)
		os.Exit(1)
	}
	served := strings.Fields(string(out))[1:]
	for _, tag := range releases.Candidates() {
		// A version the proxy refuses or does not know is simply not
		// served.
		if exec.Command("go", "list", "-m", module+"@"+tag).Run() == nil {
			served = append(served, tag)
		}
	}
	where := os.Getenv("PROMOTION_LIST")
	if where == "" {
		where = releases.PromotionListURL
	}
	list, err := readList(where)
	if err != nil {
		fmt.Fprintf(os.Stderr, "newer: the promotion list %s: %v\n", where, err)
		os.Exit(1)
	}
	code, err := report(os.Stdout, served, list)
	if err != nil {
		fmt.Fprintf(os.Stderr, "newer: the promotion list %s: %v\n", where, err)
		os.Exit(1)
	}
	os.Exit(code)
}

// readList reads the promotion list from a URL or a file.
func readList(where string) ([]byte, error) {
	if !strings.HasPrefix(where, "https://") && !strings.HasPrefix(where, "http://") {
		return os.ReadFile(where)
	}
	c := http.Client{Timeout: time.Minute}
	resp, err := c.Get(where)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s", resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 16<<20))
}

// report writes what the module proxy serves (served) and the promotion
// list (list) have that the release data lacks, and returns the exit code:
// 0 when nothing is new, 3 when something is.
func report(w io.Writer, served []string, list []byte) (int, error) {
	promoted, err := promotedImages(list)
	if err != nil {
		return 1, err
	}
	added, changed := newlyPromoted(promoted)
	newer := releases.Newer(served)
	if len(newer) == 0 && len(added) == 0 && len(changed) == 0 {
		fmt.Fprintf(w, "internal/releases is current: the module proxy serves no %s release past the ones it pins (1.%d to 1.%d), and registry.k8s.io's promotion list no cloud-controller-manager image it does not record\n", module, releases.FirstMinor(), releases.LastMinor())
		return 0, nil
	}
	if len(newer) > 0 {
		fmt.Fprintf(w, "the module proxy serves %s releases internal/releases does not pin: %s\n", module, strings.Join(newer, ", "))
	}
	if len(added) > 0 {
		fmt.Fprintf(w, "registry.k8s.io promoted cloud-controller-manager images internal/releases does not record (add each to releases.Promoted, with the list's commit in PromotedSource): %s\n", strings.Join(added, ", "))
	}
	if len(changed) > 0 {
		fmt.Fprintf(w, "the promotion list gives other digests than internal/releases records (a promoted image never changes: find out why before pinning): %s\n", strings.Join(changed, ", "))
	}
	fmt.Fprintln(w, "for each release: check that registry.k8s.io promoted its image (kubernetes/k8s.io registry.k8s.io/images/k8s-staging-provider-aws/images.yaml), read its docs/prerequisites.md and pkg/providers/v1 at the tag, then update internal/releases and run make generate")
	return 3, nil
}
