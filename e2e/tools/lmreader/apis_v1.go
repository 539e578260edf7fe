//go:build !lmreader1.21 && !lmreader1.22 && !lmreader1.23

package main

import (
	v1 "k8s.io/controller-manager/config/v1"
	"k8s.io/controller-manager/config/v1alpha1"
	"k8s.io/controller-manager/config/v1beta1"
	"k8s.io/controller-manager/pkg/leadermigration/config"
)

// 1.24 on: v1 added.
func init() {
	apis = append(apis, v1alpha1.AddToScheme, v1beta1.AddToScheme, v1.AddToScheme)
	defaultConfiguration = config.DefaultLeaderMigrationConfiguration
}
