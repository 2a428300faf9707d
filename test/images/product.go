package images

// Rejuv's own images: the manager and the node daemon, each its static
// binary and nothing else, tagged with Rejuv's version; and the demo app
// the quick start (docs/quickstart.md) runs, published with them.

// Repositories of Rejuv's images, as the manifests name them, and of the
// demo app the quick start runs.
const (
	HealerRepository = "rejuv-healer"
	DaemonRepository = "rejuv-daemon"
	DemoRepository   = "rejuv-demo"
)

// nonRoot is the manager's user and group (distroless's nonroot).
const nonRoot = "65532:65532"

const buildinfoPkg = "github.com/rejuv-dev/rejuv/cmd/internal/buildinfo"

// Healer is the manager's image: it runs as a numeric non-root user.
func Healer(version, commit string) Image {
	return product("rejuv-healer", HealerRepository, "github.com/rejuv-dev/rejuv/cmd/healer", nonRoot,
		"The Rejuv manager: policy controller, request controller and admission webhooks", version, commit)
}

// Daemon is the node daemon's image: root, to open the container runtime's
// socket (the DaemonSet drops every capability).
func Daemon(version, commit string) Image {
	return product("rejuv-daemon", DaemonRepository, "github.com/rejuv-dev/rejuv/cmd/daemon", "0:0",
		"The Rejuv node daemon: executes ContainerRecreateRequests through the CRI", version, commit)
}

// Demo is the quick start's app (testapp, without a shell): it serves
// /readyz on 8080 and, as its flags say, leaks memory or stops being ready.
// It runs as the same non-root user as the manager.
func Demo(version, commit string) Image {
	return product("rejuv-demo", DemoRepository, "github.com/rejuv-dev/rejuv/test/images/testapp", nonRoot,
		"The Rejuv demo app: serves /readyz, leaks memory or stops being ready on request", version, commit)
}

func product(name, repo, pkg, user, description, version, commit string) Image {
	return Image{
		Name: name, Package: pkg, Repository: repo, Tag: version, User: user,
		LDFlags: "-X " + buildinfoPkg + ".Version=" + version + " -X " + buildinfoPkg + ".Commit=" + commit,
		Labels: map[string]string{
			"org.opencontainers.image.title":       name,
			"org.opencontainers.image.description": description,
			"org.opencontainers.image.version":     version,
			"org.opencontainers.image.revision":    commit,
		},
	}
}
