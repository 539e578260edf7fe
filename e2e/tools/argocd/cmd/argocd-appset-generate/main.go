// Command argocd-appset-generate gives the Applications an ApplicationSet
// generates, with the ApplicationSet controller's own code from the Argo CD
// module this tool module pins: template.GenerateApplications (what the
// controller's reconcile runs) with the cluster generator, which lists the
// cluster Secrets of the Argo CD namespace in the API server.
//
//	argocd-appset-generate -kubeconfig FILE -namespace argocd APPSET.yaml
//
// Prints the Applications as a JSON list, exit 0. When the controller's
// code returns an error: {"error": "..."} on stdout, exit 3. A usage error:
// one line on stderr, exit 1. Argo CD's log lines go to stderr.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	log "github.com/sirupsen/logrus"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/argoproj/argo-cd/v2/applicationset/controllers/template"
	"github.com/argoproj/argo-cd/v2/applicationset/generators"
	"github.com/argoproj/argo-cd/v2/applicationset/utils"
	argov1alpha1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the API server Argo CD runs in, whose cluster Secrets the generator lists")
	namespace := flag.String("namespace", "argocd", "Argo CD's namespace")
	flag.Parse()
	if flag.NArg() != 1 || *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "usage: argocd-appset-generate -kubeconfig FILE [-namespace argocd] APPSET.yaml")
		os.Exit(1)
	}
	b, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var appSet argov1alpha1.ApplicationSet
	if err := yaml.UnmarshalStrict(b, &appSet); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", flag.Arg(0), err)
		os.Exit(1)
	}
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The controller's client reads the cluster Secrets of its own
	// namespace (its manager's cache holds that namespace only).
	c, err := client.New(config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	c = client.NewNamespacedClient(c, *namespace)
	log.SetOutput(os.Stderr)
	ctx := context.Background()
	gens := map[string]generators.Generator{
		"Clusters": generators.NewClusterGenerator(c, ctx, clientset, *namespace),
	}
	if appSet.Namespace == "" {
		appSet.Namespace = *namespace
	}
	apps, _, err := template.GenerateApplications(log.WithField("applicationset", appSet.Name), appSet, gens, &utils.Render{}, c)
	if err != nil {
		out, _ := json.Marshal(map[string]string{"error": err.Error()})
		fmt.Println(string(out))
		os.Exit(3)
	}
	out, err := json.MarshalIndent(apps, "", "  ")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(string(out))
}
