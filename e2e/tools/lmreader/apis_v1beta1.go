//go:build lmreader1.22 || lmreader1.23

package main

import (
	"k8s.io/controller-manager/config/v1alpha1"
	"k8s.io/controller-manager/config/v1beta1"
	"k8s.io/controller-manager/pkg/leadermigration/config"
)

// 1.22 and 1.23: v1beta1 added, and a default configuration.
func init() {
	apis = append(apis, v1alpha1.AddToScheme, v1beta1.AddToScheme)
	defaultConfiguration = config.DefaultLeaderMigrationConfiguration
}
