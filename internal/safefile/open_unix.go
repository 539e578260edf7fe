//go:build unix

package safefile

import "syscall"

const openNonBlocking = syscall.O_NONBLOCK
