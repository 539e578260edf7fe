// Package reach tells a failure to reach a server (a cluster, a registry, a
// chart repository) from an answer it gave, by the errors' types: the one
// rule the action layer and check share for what exits 3.
package reach

import (
	"context"
	"errors"
	"net"
	"net/url"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Unreachable tells a network failure, a timeout or an interruption (a
// server that cannot be reached, a rollout that did not finish in time,
// Ctrl-C) from an answer.
func Unreachable(err error) bool {
	var urlErr *url.Error
	var netErr *net.OpError
	return errors.As(err, &urlErr) || errors.As(err, &netErr) || wait.Interrupted(err) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}
