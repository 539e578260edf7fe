//go:build lmreader1.21

package main

import "k8s.io/controller-manager/config/v1alpha1"

// 1.21: v1alpha1 only, and no default configuration.
func init() {
	apis = append(apis, v1alpha1.AddToScheme)
}
