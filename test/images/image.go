package images

import "strings"

// Registry is the registry part of every test image reference. The local
// cluster's node pulls it from the cluster's own registry (see
// test/cluster/harness), where the images are pushed.
const Registry = "rejuv.local"

// tag is the tag of every test image.
const tag = "dev"

// Image is an image built from one Go program: the program at /NAME, an
// empty /tmp and, when asked, a static busybox.
type Image struct {
	// Name is the image name and the path of the program inside it, e.g. "testapp".
	Name string
	// Package is the Go package to build, e.g. "github.com/rejuv-dev/rejuv/test/images/testapp".
	Package string
	// Binary, when set, is a program built already (for the host's
	// platform) that the image carries instead of building Package: a
	// program from another module, such as metrics-server.
	Binary string
	// Busybox adds a static busybox as /bin/sh and the usual applets, so that
	// `kubectl exec POD -- sh -c ...` works in the container.
	Busybox bool
	// Repository and Tag name the image; empty, they are the test images'
	// rejuv.local/NAME and dev.
	Repository, Tag string
	// User is the numeric user (and group) the program runs as, e.g.
	// "65532:65532"; empty is root.
	User string
	// LDFlags are passed to the linker beside -s -w (version stamps).
	LDFlags string
	// Labels are the image config's labels (org.opencontainers.image.*).
	Labels map[string]string
}

// Pause is the pod sandbox image, containerd's sandbox_image.
var Pause = Image{Name: "pause", Package: "github.com/rejuv-dev/rejuv/test/images/pause"}

// TestApp is the end-to-end test workload.
var TestApp = Image{Name: "testapp", Package: "github.com/rejuv-dev/rejuv/test/images/testapp", Busybox: true}

// RefIn is the image's reference in registry (a host, with a port and a
// path if need be): its
// repository's path under it, without the test images' rejuv.local, e.g.
// "127.0.0.1:5000/testapp:dev" or "127.0.0.1:5000/rejuv-healer:v0.1.0".
func (i Image) RefIn(registry string) string {
	return registry + "/" + strings.TrimPrefix(i.Ref(), Registry+"/")
}

// Ref is the image reference, e.g. "rejuv.local/testapp:dev".
func (i Image) Ref() string {
	repo, t := i.Repository, i.Tag
	if repo == "" {
		repo = Registry + "/" + i.Name
	}
	if t == "" {
		t = tag
	}
	return repo + ":" + t
}
