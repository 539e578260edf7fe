// Command lmreader reads a LeaderMigrationConfiguration file the way the
// controller managers of one Kubernetes minor do: with
// ReadLeaderMigrationConfiguration and ValidateLeaderMigrationConfiguration
// of k8s.io/controller-manager (pkg/leadermigration/config) at the version
// the build's module file, go.1.<minor>.mod, pins.
//
//	lmreader FILE
//
// exits 0 and prints the configuration as that version parsed it (JSON) when
// it loads and validates; with the reader's error on stderr, 3 when it does
// not load and 4 when it does not validate; 1 on a usage error.
//
//	lmreader -default
//
// prints the configuration a controller manager of that minor uses when
// leader migration is enabled without a file (DefaultLeaderMigrationConfiguration,
// from 1.22).
//
// The controller managers decode leniently: a field the file's API version
// does not have is dropped without a word. strictDecodingError says what a
// strict decode of the same file with the same API versions finds.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	internal "k8s.io/controller-manager/config"
	"k8s.io/controller-manager/pkg/leadermigration/config"
)

// Module is the module whose reader this is.
const Module = "k8s.io/controller-manager"

// What the build's minor has, set by the apis_*.go file its build tag
// (lmreader1.<minor>) selects: the API versions of the configuration, and
// the configuration it runs with when leader migration is enabled without a
// file (none in 1.21).
var (
	apis                 []func(*runtime.Scheme) error
	defaultConfiguration func() *internal.LeaderMigrationConfiguration
)

// Output is what the reader parsed.
type Output struct {
	ControllerManager   string   `json:"controllerManager"` // the version of Module
	LeaderName          string   `json:"leaderName"`
	ResourceLock        string   `json:"resourceLock"`
	ControllerLeaders   []Leader `json:"controllerLeaders"`
	StrictDecodingError string   `json:"strictDecodingError,omitempty"`
}

type Leader struct {
	Name      string `json:"name"`
	Component string `json:"component"`
}

func main() {
	if len(os.Args) != 2 || os.Args[1] == "" || os.Args[1][0] == '-' && os.Args[1] != "-default" {
		fail(1, fmt.Sprintf("usage: %s FILE|-default (read a LeaderMigrationConfiguration, or print the default, with %s %s)", os.Args[0], Module, moduleVersion()))
	}
	var out Output
	if file := os.Args[1]; file == "-default" {
		if defaultConfiguration == nil {
			fail(1, fmt.Sprintf("%s %s has no default LeaderMigrationConfiguration", Module, moduleVersion()))
		}
		out = output(defaultConfiguration())
	} else {
		c, err := config.ReadLeaderMigrationConfiguration(file)
		if err != nil {
			fail(3, err.Error())
		}
		if errs := config.ValidateLeaderMigrationConfiguration(c); len(errs) > 0 {
			fail(4, errs.ToAggregate().Error())
		}
		out = output(c)
		if err := strictDecode(file); err != nil {
			out.StrictDecodingError = err.Error()
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func fail(code int, msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(code)
}

func output(c *internal.LeaderMigrationConfiguration) Output {
	out := Output{ControllerManager: moduleVersion(), LeaderName: c.LeaderName, ResourceLock: c.ResourceLock, ControllerLeaders: []Leader{}}
	for _, l := range c.ControllerLeaders {
		out.ControllerLeaders = append(out.ControllerLeaders, Leader{Name: l.Name, Component: l.Component})
	}
	return out
}

// strictDecode decodes the file into its API version's type with the
// versions this minor has, refusing unknown and duplicate fields.
func strictDecode(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	for _, add := range apis {
		if err := add(scheme); err != nil {
			return err
		}
	}
	_, _, err = serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer().Decode(data, nil, nil)
	return err
}

func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == Module {
				return d.Version
			}
		}
	}
	return "(unknown)"
}
