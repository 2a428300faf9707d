package main

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// checksumsFile lists the SHA-256 of every other file of the release.
const checksumsFile = "SHA256SUMS"

// writeChecksums writes SHA256SUMS in dir, in sha256sum's format, in the
// order of the files' names.
func writeChecksums(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var lines []string
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == checksumsFile {
			continue
		}
		sum, err := fileSHA256(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		lines = append(lines, fmt.Sprintf("%s  %s\n", sum, e.Name()))
	}
	return os.WriteFile(filepath.Join(dir, checksumsFile), []byte(strings.Join(lines, "")), 0o644)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("checksum of %s: %w", path, err)
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}
