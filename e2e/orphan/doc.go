// Package orphan holds a test of the e2e tests' process starters
// (e2e/harness, e2e/moto; both through e2e/harness/spawn): a test binary
// that runs a control plane and moto as the e2e packages do, from its
// TestMain, and then is killed, times out, fails or panics leaves none of
// their processes behind.
package orphan
