package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is the release of gml, set at link time with
// -ldflags "-X main.version=v1.2.3"; builds from a checkout report "dev".
var version = "dev"

func init() {
	register("version", "print the gml version", func(args []string) error {
		if len(args) > 0 {
			return fmt.Errorf("version takes no arguments, got %q", args)
		}
		fmt.Printf("gml %s (%s %s/%s)\n", versionString(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return nil
	})
}

// versionString is version, followed for development builds by the VCS revision the
// binary was built from (and "+dirty" when the tree had changes).
func versionString() string {
	info, ok := debug.ReadBuildInfo()
	if !ok || version != "dev" {
		return version
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return version
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return version + "-" + rev
}
