//go:build !syntheticdistro

package plan

import "github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"

// syntheticParts is empty but in TestSyntheticDistro's build (synthetic.go).
var syntheticParts map[distros.Distro]distroParts
