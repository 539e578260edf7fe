// Command etcd is the etcd server (go.etcd.io/etcd/server/v3, etcdmain),
// built from its Go module for the real-cluster tests: the same program as
// the release's etcd binary, flags and all.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
