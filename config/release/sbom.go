package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// binary is a program the release ships, as shipped.
type binary struct {
	name, os, arch string
	data           []byte
}

// writeSBOMs writes an SPDX document of every binary the release ships:
// each image's program as the registry serves it, for each platform, and
// the plugin as its archives hold it. It returns their file names.
func writeSBOMs(ctx context.Context, o options, imgs []image, plugins []string) ([]string, error) {
	var bins []binary
	for _, img := range imgs {
		b, err := imageBinaries(ctx, img)
		if err != nil {
			return nil, fmt.Errorf("read %s's program from %s: %w", img.Name, img.Pushed, err)
		}
		bins = append(bins, b...)
	}
	for _, file := range plugins {
		b, err := pluginBinary(filepath.Join(o.out, file))
		if err != nil {
			return nil, fmt.Errorf("read kubectl-rejuv from %s: %w", file, err)
		}
		bins = append(bins, b)
	}
	var files []string
	for _, b := range bins {
		file := fmt.Sprintf("%s_%s_%s.spdx.json", b.name, b.os, b.arch)
		doc, err := spdx(o, b, file)
		if err != nil {
			return nil, fmt.Errorf("SBOM of %s: %w", file, err)
		}
		if err := os.WriteFile(filepath.Join(o.out, file), doc, 0o644); err != nil {
			return nil, err
		}
		files = append(files, file)
	}
	return files, nil
}

// imageBinaries reads the program at /NAME of every platform's image of
// img's index in the registry.
func imageBinaries(ctx context.Context, img image) ([]binary, error) {
	ref, err := name.NewDigest(img.Pushed)
	if err != nil {
		return nil, err
	}
	idx, err := remote.Index(ref, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var out []binary
	for _, desc := range m.Manifests {
		if desc.Platform == nil {
			return nil, fmt.Errorf("manifest %s names no platform", desc.Digest)
		}
		image, err := idx.Image(desc.Digest)
		if err != nil {
			return nil, err
		}
		layers, err := image.Layers()
		if err != nil {
			return nil, err
		}
		var data []byte
		for _, l := range layers {
			rc, err := l.Uncompressed()
			if err != nil {
				return nil, err
			}
			found, err := fileInTar(rc, img.Name)
			rc.Close()
			if err != nil {
				return nil, err
			}
			if found != nil {
				data = found
			}
		}
		if data == nil {
			return nil, fmt.Errorf("%s's image has no /%s", desc.Platform, img.Name)
		}
		out = append(out, binary{name: img.Name, os: desc.Platform.OS, arch: desc.Platform.Architecture, data: data})
	}
	return out, nil
}

// pluginBinary reads kubectl-rejuv from a krew archive named
// kubectl-rejuv_VERSION_OS_ARCH.tar.gz.
func pluginBinary(path string) (binary, error) {
	parts := strings.Split(strings.TrimSuffix(filepath.Base(path), ".tar.gz"), "_")
	if len(parts) != 4 {
		return binary{}, errors.New("not named kubectl-rejuv_VERSION_OS_ARCH.tar.gz")
	}
	f, err := os.Open(path)
	if err != nil {
		return binary{}, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return binary{}, err
	}
	data, err := fileInTar(gz, "kubectl-rejuv")
	if err != nil {
		return binary{}, err
	}
	if data == nil {
		return binary{}, errors.New("no kubectl-rejuv in it")
	}
	return binary{name: "kubectl-rejuv", os: parts[2], arch: parts[3], data: data}, nil
}

// fileInTar returns the content of the regular file name (with or without
// a leading / or ./) in the tar stream r, or nil.
func fileInTar(r io.Reader, name string) ([]byte, error) {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg && strings.TrimPrefix(strings.TrimPrefix(h.Name, "./"), "/") == name {
			return io.ReadAll(tr)
		}
	}
}

// spdxDocument is the part of SPDX 2.3's JSON the release writes.
type spdxDocument struct {
	SPDXVersion       string             `json:"spdxVersion"`
	DataLicense       string             `json:"dataLicense"`
	SPDXID            string             `json:"SPDXID"`
	Name              string             `json:"name"`
	DocumentNamespace string             `json:"documentNamespace"`
	CreationInfo      spdxCreationInfo   `json:"creationInfo"`
	Packages          []spdxPackage      `json:"packages"`
	Relationships     []spdxRelationship `json:"relationships"`
}

type spdxCreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

type spdxPackage struct {
	Name             string            `json:"name"`
	SPDXID           string            `json:"SPDXID"`
	VersionInfo      string            `json:"versionInfo,omitempty"`
	DownloadLocation string            `json:"downloadLocation"`
	FilesAnalyzed    bool              `json:"filesAnalyzed"`
	Checksums        []spdxChecksum    `json:"checksums,omitempty"`
	ExternalRefs     []spdxExternalRef `json:"externalRefs,omitempty"`
	PrimaryPurpose   string            `json:"primaryPackagePurpose,omitempty"`
}

type spdxChecksum struct {
	Algorithm string `json:"algorithm"`
	Value     string `json:"checksumValue"`
}

type spdxExternalRef struct {
	Category string `json:"referenceCategory"`
	Type     string `json:"referenceType"`
	Locator  string `json:"referenceLocator"`
}

type spdxRelationship struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}

// spdx is the SPDX document of b: the binary (its SHA-256), the Go
// toolchain it was built with and every module linked into it, as its
// build information records them.
func spdx(o options, b binary, file string) ([]byte, error) {
	info, err := buildinfo.Read(bytes.NewReader(b.data))
	if err != nil {
		return nil, fmt.Errorf("read its Go build information: %w", err)
	}
	sum := sha256.Sum256(b.data)
	doc := spdxDocument{
		SPDXVersion: "SPDX-2.3", DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT",
		Name:              fmt.Sprintf("%s %s %s/%s", b.name, o.version, b.os, b.arch),
		DocumentNamespace: o.url(file),
		CreationInfo:      spdxCreationInfo{Created: o.created.Format("2006-01-02T15:04:05Z"), Creators: []string{"Tool: rejuv-release-" + o.version}},
	}
	main := spdxPackage{
		Name: b.name, SPDXID: "SPDXRef-Package-" + b.name, VersionInfo: o.version, DownloadLocation: strings.TrimSuffix(o.url(""), "/"),
		Checksums:      []spdxChecksum{{Algorithm: "SHA256", Value: hex.EncodeToString(sum[:])}},
		ExternalRefs:   []spdxExternalRef{purl(info.Main.Path, o.version)},
		PrimaryPurpose: "APPLICATION",
	}
	doc.Packages = append(doc.Packages, main)
	doc.Relationships = append(doc.Relationships, spdxRelationship{"SPDXRef-DOCUMENT", "DESCRIBES", main.SPDXID})
	deps := []*debug.Module{{Path: "stdlib", Version: info.GoVersion}}
	deps = append(deps, info.Deps...)
	for i, d := range deps {
		if d.Replace != nil {
			d = d.Replace
		}
		p := spdxPackage{
			Name: d.Path, SPDXID: fmt.Sprintf("SPDXRef-Package-%d", i+1), VersionInfo: d.Version,
			DownloadLocation: "NOASSERTION", ExternalRefs: []spdxExternalRef{purl(d.Path, d.Version)},
			PrimaryPurpose: "LIBRARY",
		}
		doc.Packages = append(doc.Packages, p)
		doc.Relationships = append(doc.Relationships, spdxRelationship{main.SPDXID, "DEPENDS_ON", p.SPDXID})
	}
	return json.MarshalIndent(doc, "", "  ")
}

// purl is a Go module's package URL.
func purl(path, version string) spdxExternalRef {
	return spdxExternalRef{Category: "PACKAGE-MANAGER", Type: "purl", Locator: "pkg:golang/" + path + "@" + version}
}
