// Command newer asks the Go module proxy which releases of
// k8s.io/cloud-provider-aws it serves and prints those internal/releases does
// not pin yet (make releases-check): the list the proxy gives, and the next
// patch of every minor and the next minors, which it serves without listing.
// It exits 0 when the data is current, 3 when a release is new, 1 when the
// proxy cannot be asked.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"

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
	newer := releases.Newer(served)
	if len(newer) == 0 {
		fmt.Printf("internal/releases is current: the module proxy serves no %s release past the ones it pins (1.%d to 1.%d)\n", module, releases.FirstMinor(), releases.LastMinor())
		return
	}
	fmt.Printf("the module proxy serves %s releases internal/releases does not pin: %s\n", module, strings.Join(newer, ", "))
	fmt.Println("for each: check that registry.k8s.io promoted its image (kubernetes/k8s.io registry.k8s.io/images/k8s-staging-provider-aws/images.yaml), read its docs/prerequisites.md and pkg/providers/v1 at the tag, then update internal/releases and run make generate")
	os.Exit(3)
}
