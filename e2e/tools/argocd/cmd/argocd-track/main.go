// Command argocd-track marks manifests as Argo CD's application controller
// does before it applies them: with Argo CD's own resource tracking
// (util/argo's ResourceTracking.SetAppInstance, under the label key
// common.LabelKeyAppInstance) of the module this tool module pins.
//
//	argocd-track -app NAME -namespace NS -method label|annotation|annotation+label < MANIFESTS
//
// Prints the marked manifests as a YAML stream, exit 0. A usage or input
// error: one line on stderr, exit 1.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/argoproj/argo-cd/v2/common"
	argov1alpha1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v2/util/argo"
)

func main() {
	app := flag.String("app", "", "the Application's name")
	namespace := flag.String("namespace", "", "the Application's destination namespace")
	method := flag.String("method", string(argo.TrackingMethodLabel), "the tracking method: label (Argo CD 2's default), annotation or annotation+label")
	flag.Parse()
	if *app == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: argocd-track -app NAME [-namespace NS] [-method label|annotation|annotation+label] < MANIFESTS")
		os.Exit(1)
	}
	if err := run(os.Stdin, os.Stdout, *app, *namespace, argov1alpha1.TrackingMethod(*method)); err != nil {
		fmt.Fprintln(os.Stderr, "argocd-track:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer, app, namespace string, method argov1alpha1.TrackingMethod) error {
	tracking := argo.NewResourceTracking()
	docs := utilyaml.NewYAMLReader(bufio.NewReader(in))
	var stream bytes.Buffer
	for {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return err
		}
		// A document is YAML or JSON (what the repo server's manifests are).
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return err
		}
		if obj == nil {
			continue
		}
		un := &unstructured.Unstructured{Object: obj}
		if err := tracking.SetAppInstance(un, common.LabelKeyAppInstance, app, namespace, method, ""); err != nil {
			return fmt.Errorf("%s %s: %w", un.GetKind(), un.GetName(), err)
		}
		b, err := yaml.Marshal(un.Object)
		if err != nil {
			return err
		}
		stream.WriteString("---\n")
		stream.Write(b)
	}
	_, err := out.Write(stream.Bytes())
	return err
}
