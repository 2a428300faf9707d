// Command krew packages kubectl-rejuv for krew, the kubectl plugin
// manager: an archive per platform (the binary, and kubectl_complete-rejuv
// for kubectl's completion of plugins) and the plugin manifest rejuv.yaml
// that points at them, with their checksums. make krew runs it for a
// release; the archives are then uploaded where -url-base says.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	var o options
	flag.StringVar(&o.version, "version", "", "the release's version, vMAJOR.MINOR.PATCH")
	flag.StringVar(&o.commit, "commit", "", "the commit stamped into the binaries")
	flag.StringVar(&o.out, "out", "bin/krew", "where the archives and rejuv.yaml are written")
	flag.StringVar(&o.urlBase, "url-base", "https://github.com/rejuv-dev/rejuv/releases/download", "the archives' URL, before /VERSION/ARCHIVE")
	platforms := flag.String("platforms", "linux/amd64,linux/arm64,darwin/amd64,darwin/arm64", "os/arch pairs to build, comma separated")
	flag.Parse()
	o.platforms = splitPlatforms(*platforms)
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "krew: %v\n", err)
		os.Exit(1)
	}
}
