package images

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func TestRef(t *testing.T) {
	for _, tt := range []struct {
		img  Image
		want string
	}{
		{Pause, "rejuv.local/pause:dev"},
		{TestApp, "rejuv.local/testapp:dev"},
	} {
		if got := tt.img.Ref(); got != tt.want {
			t.Errorf("%s.Ref() = %q, want %q", tt.img.Name, got, tt.want)
		}
	}
}

func TestBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles two programs")
	}
	tests := []struct {
		img         Image
		wantFiles   []string
		wantMissing []string
	}{
		{
			img:         Pause,
			wantFiles:   []string{"pause", "tmp/"},
			wantMissing: []string{"bin/busybox", "bin/sh"},
		},
		{
			img:       TestApp,
			wantFiles: []string{"testapp", "tmp/", "bin/busybox", "bin/sh", "bin/wget", "bin/sleep"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.img.Name, func(t *testing.T) {
			t.Parallel()
			first := buildAndOpen(t, tt.img, t.TempDir())

			cf, err := first.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"/" + tt.img.Name}; !slices.Equal(cf.Config.Entrypoint, want) {
				t.Errorf("entrypoint %q, want %q", cf.Config.Entrypoint, want)
			}
			if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
				t.Errorf("platform %s/%s, want linux/%s", cf.OS, cf.Architecture, runtime.GOARCH)
			}
			if !slices.Contains(cf.Config.Env, "PATH=/bin") {
				t.Errorf("env %q lacks PATH=/bin", cf.Config.Env)
			}

			files := layerFiles(t, first)
			for _, f := range tt.wantFiles {
				if _, ok := files[f]; !ok {
					t.Errorf("layer lacks /%s", f)
				}
			}
			for _, f := range tt.wantMissing {
				if _, ok := files[f]; ok {
					t.Errorf("layer has /%s, which it should not", f)
				}
			}
			if h := files[tt.img.Name]; h != nil && (h.Mode&0o111 == 0 || h.Size == 0) {
				t.Errorf("/%s is not a non-empty executable: mode %o, size %d", tt.img.Name, h.Mode, h.Size)
			}
			if h := files["tmp/"]; h != nil && (h.Typeflag != tar.TypeDir || h.Mode != 0o1777) {
				t.Errorf("/tmp has type %c mode %o, want a directory with mode 1777", h.Typeflag, h.Mode)
			}
			if h := files["bin/sh"]; tt.img.Busybox && h != nil && (h.Typeflag != tar.TypeSymlink || h.Linkname != "/bin/busybox") {
				t.Errorf("/bin/sh has type %c target %q, want a symlink to /bin/busybox", h.Typeflag, h.Linkname)
			}

			second := buildAndOpen(t, tt.img, t.TempDir())
			d1, err := first.Digest()
			if err != nil {
				t.Fatal(err)
			}
			d2, err := second.Digest()
			if err != nil {
				t.Fatal(err)
			}
			if d1 != d2 {
				t.Errorf("two builds of %s differ: %s and %s", tt.img.Name, d1, d2)
			}
		})
	}
}

// buildAndOpen builds img into dir and opens the tarball by its tag, which
// fails unless the tarball is tagged with img.Ref().
func buildAndOpen(t *testing.T, img Image, dir string) v1.Image {
	t.Helper()
	path, err := Build(t.Context(), img, dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, img.Name+".tar"); path != want {
		t.Errorf("Build wrote %s, want %s", path, want)
	}
	if info, err := os.Stat(path); err != nil {
		t.Error(err)
	} else if info.Mode().Perm() != 0o644 {
		t.Errorf("tarball %s has mode %o, want 0644", path, info.Mode().Perm())
	}
	tag, err := name.NewTag(img.Ref())
	if err != nil {
		t.Fatal(err)
	}
	opened, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		t.Fatalf("open %s as %s: %v", path, tag, err)
	}
	return opened
}

// layerFiles returns the headers of the image's single layer by name.
func layerFiles(t *testing.T, img v1.Image) map[string]*tar.Header {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]*tar.Header{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = h
	}
}

// TestBuildCompile runs the compile step from several working directories.
func TestBuildCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	tests := []struct {
		name    string
		img     Image
		dir     string
		wantErr string // prefix of the error; empty for success
	}{
		{name: "deeper in the module", img: Pause, dir: "pause"},
		{
			name:    "outside any module",
			img:     Pause,
			dir:     t.TempDir(),
			wantErr: "build image rejuv.local/pause:dev: compile github.com/rejuv-dev/rejuv/test/images/pause for linux/" + runtime.GOARCH + ": find module root",
		},
		{
			name:    "no such package",
			img:     Image{Name: "missing", Package: "github.com/rejuv-dev/rejuv/test/images/missing"},
			dir:     ".",
			wantErr: "build image rejuv.local/missing:dev: compile github.com/rejuv-dev/rejuv/test/images/missing for linux/" + runtime.GOARCH + ": go build: exit status 1: ",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(tt.dir)
			t.Setenv("GOWORK", "off")
			_, err := Build(t.Context(), tt.img, t.TempDir())
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatal(err)
			case tt.wantErr != "" && err == nil:
				t.Fatal("Build succeeded")
			case tt.wantErr != "" && !strings.HasPrefix(err.Error(), tt.wantErr):
				t.Errorf("error %q does not start with %q", err, tt.wantErr)
			}
		})
	}
}
