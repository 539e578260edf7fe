//go:build !unix

package safefile

const openNonBlocking = 0
