// Command etcd is the etcd server, built from its Go module for the
// real-cluster tests.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
