package images

import (
	"archive/tar"
	"io"
	"os"
	"path"
)

// entry is one file, directory or symlink of an image's root filesystem.
type entry struct {
	name   string // relative to /, as layer tarballs spell it
	mode   int64
	kind   byte   // tar.TypeReg, tar.TypeDir or tar.TypeSymlink
	source string // for files: the host file to copy
	target string // for symlinks
}

// rootfs lists the root filesystem of an image whose program, at /name, is
// built at binary; busybox, when not empty, is the host's static busybox.
// Directories come before their content, as tar extractors expect.
func rootfs(name, binary, busybox string) []entry {
	var entries []entry
	if busybox != "" {
		entries = append(entries,
			entry{name: "bin/", mode: 0o755, kind: tar.TypeDir},
			entry{name: "bin/busybox", mode: 0o755, kind: tar.TypeReg, source: busybox},
		)
		for _, applet := range busyboxApplets {
			entries = append(entries, entry{name: path.Join("bin", applet), mode: 0o777, kind: tar.TypeSymlink, target: "/bin/busybox"})
		}
	}
	return append(entries,
		entry{name: name, mode: 0o755, kind: tar.TypeReg, source: binary},
		// Sticky and world-writable, as programs expect of /tmp.
		entry{name: "tmp/", mode: 0o1777, kind: tar.TypeDir},
	)
}

// writeLayer writes entries as an uncompressed layer tarball at dst, owned by
// root and dated at the epoch.
func writeLayer(dst string, entries []entry) error {
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	for _, e := range entries {
		if err := writeEntry(tw, e); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}

func writeEntry(tw *tar.Writer, e entry) error {
	h := &tar.Header{
		Name:     e.name,
		Mode:     e.mode,
		Typeflag: e.kind,
		Linkname: e.target,
		ModTime:  epoch,
	}
	if e.kind != tar.TypeReg {
		return tw.WriteHeader(h)
	}
	src, err := os.Open(e.source)
	if err != nil {
		return err
	}
	defer src.Close()
	info, err := src.Stat()
	if err != nil {
		return err
	}
	h.Size = info.Size()
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err = io.Copy(tw, src)
	return err
}
