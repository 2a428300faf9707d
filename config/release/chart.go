package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// chartDir is the chart the release packages.
const chartDir = "config/helm/rejuv"

// packageChart writes the chart as helm package does (NAME-VERSION.tgz,
// every file under NAME/), its values.yaml naming the images in the
// registry by digest, and returns the package's file name.
func packageChart(o options, imgs []image) (string, error) {
	version := strings.TrimPrefix(o.version, "v")
	file := "rejuv-" + version + ".tgz"
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	err := filepath.WalkDir(chartDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(chartDir, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch rel {
		case "Chart.yaml":
			if m := chartVersion.FindSubmatch(data); m == nil || string(m[1]) != version {
				return fmt.Errorf("%s: the chart's version is not %s, the release's", path, version)
			}
		case "values.yaml":
			if data, err = pinValues(data, o.registry, installed(imgs)); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		hdr := &tar.Header{Name: "rejuv/" + filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), ModTime: o.created, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(o.out, file), buf.Bytes(), 0o644)
	}
	if err != nil {
		return "", fmt.Errorf("package the chart: %w", err)
	}
	return file, nil
}

var chartVersion = regexp.MustCompile(`(?m)^version:\s*"?([^"\s]+)"?\s*$`)

// pinValues sets image.healer's and image.daemon's repository and digest
// in values.yaml's text, keeping its comments; each must be found.
func pinValues(values []byte, registry string, imgs []image) ([]byte, error) {
	lines := strings.Split(string(values), "\n")
	set := map[string]bool{}
	section, key := "", ""
	for i, line := range lines {
		indent := len(line) - len(strings.TrimLeft(line, " "))
		field, _, _ := strings.Cut(strings.TrimSpace(line), ":")
		if strings.HasPrefix(strings.TrimSpace(line), "#") || strings.TrimSpace(line) == "" {
			continue
		}
		switch indent {
		case 0:
			section, key = field, ""
			continue
		case 2:
			key = field
			continue
		}
		if section != "image" || indent != 4 {
			continue
		}
		for _, img := range imgs {
			if key != strings.TrimPrefix(img.Name, "rejuv-") {
				continue
			}
			switch field {
			case "repository":
				lines[i] = fmt.Sprintf("    repository: %s/%s", strings.TrimSuffix(registry, "/"), img.Name)
				set[key+".repository"] = true
			case "digest":
				lines[i] = fmt.Sprintf("    digest: %q", img.Digest)
				set[key+".digest"] = true
			}
		}
	}
	for _, img := range imgs {
		key := strings.TrimPrefix(img.Name, "rejuv-")
		for _, f := range []string{"repository", "digest"} {
			if !set[key+"."+f] {
				return nil, fmt.Errorf("no image.%s.%s to set", key, f)
			}
		}
	}
	return []byte(strings.Join(lines, "\n")), nil
}
