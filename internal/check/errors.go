package check

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// ClusterError is a cluster check cannot read: unreachable, refusing the
// credentials, or forbidding a read check needs. The command exits 3.
type ClusterError struct {
	// Forbidden is set when the API server refused a permission; the
	// permission is Verb on Resource (in Namespace).
	Forbidden bool
	Verb      string
	Resource  string
	Namespace string
	Err       error
}

func (e *ClusterError) Error() string {
	switch {
	case e.Forbidden:
		scope := "at cluster scope"
		if e.Namespace != "" {
			scope = "in namespace " + e.Namespace
		}
		return fmt.Sprintf("forbidden: check needs %q on %s %s (kubectl auth can-i %s %s%s); docs/check.md lists the permissions it needs",
			e.Verb, e.Resource, scope, e.Verb, e.Resource, nsFlag(e.Namespace))
	case apierrors.IsUnauthorized(e.Err):
		return "the cluster refused the credentials (401 Unauthorized): renew the kubeconfig's token or certificate"
	}
	return "cannot reach the cluster: " + e.Err.Error()
}

func (e *ClusterError) Unwrap() error { return e.Err }

func nsFlag(ns string) string {
	if ns == "" {
		return ""
	}
	return " -n " + ns
}

// clusterError classifies an API error of a read check needs.
func clusterError(verb, resource, namespace string, err error) error {
	if err == nil {
		return nil
	}
	return &ClusterError{Forbidden: apierrors.IsForbidden(err), Verb: verb, Resource: resource, Namespace: namespace, Err: err}
}
