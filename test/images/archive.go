package images

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Archive is a written image archive.
type Archive struct {
	Path string
	Ref  string
	// Digest is the index's, the same in the archive and in a registry.
	Digest v1.Hash
	// Pushed is the reference by digest it was pushed as, "" when it was
	// not pushed.
	Pushed string
	// Platforms are the images in it, with their sizes.
	Platforms []PlatformImage
}

// PlatformImage is one platform's image in an archive.
type PlatformImage struct {
	Platform v1.Platform
	Digest   v1.Hash
	// Compressed is what a registry stores and a node downloads: the
	// manifest's config and layers.
	Compressed int64
	// Unpacked is the root filesystem's size on a node.
	Unpacked int64
}

// writeArchive writes the index as one tar that the usual loaders accept:
// an OCI image layout (oci-layout, index.json naming the image, blobs/),
// which `ctr images import` and kind's `load image-archive` read, plus a
// Docker manifest.json for the host's platform (or the first), which
// `docker load` reads. Docker's own `docker save` writes the same pair. It
// writes through a temporary file so that a failed build never leaves a
// truncated archive.
func writeArchive(path string, tag name.Tag, index v1.ImageIndex) ([]PlatformImage, error) {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	// CreateTemp makes the file private; the archive is for whoever imports it.
	if err := f.Chmod(0o644); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	sizes, err := writeLayout(f, tag, index)
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return sizes, os.Rename(f.Name(), path)
}

// dockerManifest is one entry of docker-save's manifest.json.
type dockerManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

func writeLayout(w io.Writer, tag name.Tag, index v1.ImageIndex) ([]PlatformImage, error) {
	a := &layoutWriter{tw: tar.NewWriter(w), written: map[v1.Hash]bool{}}
	// Directories first, for loaders that extract the archive as it is.
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := a.tw.WriteHeader(&tar.Header{Name: dir, Mode: 0o755, ModTime: epoch, Typeflag: tar.TypeDir}); err != nil {
			return nil, err
		}
	}
	im, err := index.IndexManifest()
	if err != nil {
		return nil, err
	}
	var sizes []PlatformImage
	var docker *dockerManifest
	for _, desc := range im.Manifests {
		img, err := index.Image(desc.Digest)
		if err != nil {
			return nil, err
		}
		entry, size, err := a.image(img)
		if err != nil {
			return nil, fmt.Errorf("image for %s: %w", desc.Platform, err)
		}
		size.Platform = *desc.Platform
		sizes = append(sizes, size)
		if docker == nil || desc.Platform.Architecture == runtime.GOARCH {
			entry.RepoTags = []string{tag.String()}
			docker = entry
		}
	}
	rawIndex, err := index.RawManifest()
	if err != nil {
		return nil, err
	}
	indexDigest, err := index.Digest()
	if err != nil {
		return nil, err
	}
	if err := a.blob(indexDigest, rawIndex); err != nil {
		return nil, err
	}
	top := v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: types.OCIImageIndex,
			Digest:    indexDigest,
			Size:      int64(len(rawIndex)),
			Annotations: map[string]string{
				// containerd's name for the image, and the OCI layout's.
				"io.containerd.image.name":          containerdName(tag),
				"org.opencontainers.image.ref.name": tag.TagStr(),
			},
		}},
	}
	for _, file := range []struct {
		name string
		v    any
	}{
		{"oci-layout", map[string]string{"imageLayoutVersion": "1.0.0"}},
		{"index.json", top},
		{"manifest.json", []*dockerManifest{docker}},
	} {
		b, err := json.Marshal(file.v)
		if err != nil {
			return nil, err
		}
		if err := a.file(file.name, b); err != nil {
			return nil, err
		}
	}
	return sizes, a.tw.Close()
}

// containerdName is the fully qualified name containerd and the kubelet use
// for tag: rejuv-healer:v1 is docker.io/library/rejuv-healer:v1.
func containerdName(tag name.Tag) string {
	registry := tag.RegistryStr()
	if registry == name.DefaultRegistry {
		registry = "docker.io"
	}
	return registry + "/" + tag.RepositoryStr() + ":" + tag.TagStr()
}

// layoutWriter writes blobs once each under blobs/sha256/.
type layoutWriter struct {
	tw      *tar.Writer
	written map[v1.Hash]bool
}

// image writes an image's manifest, config and layers and returns its
// manifest.json entry and sizes.
func (a *layoutWriter) image(img v1.Image) (*dockerManifest, PlatformImage, error) {
	var size PlatformImage
	raw, err := img.RawManifest()
	if err != nil {
		return nil, size, err
	}
	if size.Digest, err = img.Digest(); err != nil {
		return nil, size, err
	}
	if err := a.blob(size.Digest, raw); err != nil {
		return nil, size, err
	}
	cfg, err := img.RawConfigFile()
	if err != nil {
		return nil, size, err
	}
	cfgName, err := img.ConfigName()
	if err != nil {
		return nil, size, err
	}
	if err := a.blob(cfgName, cfg); err != nil {
		return nil, size, err
	}
	entry := &dockerManifest{Config: blobPath(cfgName)}
	size.Compressed = int64(len(cfg))
	layers, err := img.Layers()
	if err != nil {
		return nil, size, err
	}
	for _, l := range layers {
		digest, err := l.Digest()
		if err != nil {
			return nil, size, err
		}
		rc, err := l.Compressed()
		if err != nil {
			return nil, size, err
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, size, err
		}
		if err := a.blob(digest, b); err != nil {
			return nil, size, err
		}
		entry.Layers = append(entry.Layers, blobPath(digest))
		size.Compressed += int64(len(b))
		unpacked, err := uncompressedSize(l)
		if err != nil {
			return nil, size, err
		}
		size.Unpacked += unpacked
	}
	return entry, size, nil
}

func uncompressedSize(l v1.Layer) (int64, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	var n int64
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
		n += h.Size
	}
}

func blobPath(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }

func (a *layoutWriter) blob(h v1.Hash, b []byte) error {
	if a.written[h] {
		return nil
	}
	a.written[h] = true
	return a.file(blobPath(h), b)
}

func (a *layoutWriter) file(name string, b []byte) error {
	if err := a.tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: epoch, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	_, err := io.Copy(a.tw, bytes.NewReader(b))
	return err
}
