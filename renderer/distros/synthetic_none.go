//go:build !syntheticdistro

package distros

// synthetic is empty but in TestSyntheticDistro's build (synthetic.go).
var synthetic []Record
