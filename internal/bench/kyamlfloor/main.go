// Command kyamlfloor reads a YAML stream into kyaml's nodes and writes it
// back, with no filter: the floor of any post-renderer whose patches are
// kyaml filters, which the benchmark measures beside the renderer
// (internal/bench).
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/kustomize/kyaml/kio"
)

func main() {
	err := kio.Pipeline{
		Inputs:  []kio.Reader{&kio.ByteReader{Reader: os.Stdin}},
		Outputs: []kio.Writer{kio.ByteWriter{Writer: os.Stdout}},
	}.Execute()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kyamlfloor:", err)
		os.Exit(1)
	}
}
