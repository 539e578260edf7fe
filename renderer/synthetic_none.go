//go:build !syntheticdistro

package renderer

// synthetic is empty but in TestSyntheticDistro's build (synthetic.go).
var synthetic []Profile
