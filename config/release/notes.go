package main

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

//go:embed notes.md.tmpl
var notesTemplate string

// notes are what the release notes say, beside the options.
type notes struct {
	Images  []image
	Chart   string
	Plugins []string
	SBOMs   []string
	Changes changes
}

// notesData is what notes.md.tmpl reads.
type notesData struct {
	notes
	Version, Commit, Registry string
	url                       func(string) string
}

// URL is where the release publishes file.
func (d notesData) URL(file string) string { return d.url(file) }

// writeNotes writes RELEASE_NOTES.md from notes.md.tmpl.
func writeNotes(o options, n notes) error {
	t, err := template.New("notes").Funcs(template.FuncMap{"join": strings.Join}).Option("missingkey=error").Parse(notesTemplate)
	if err != nil {
		return fmt.Errorf("release notes template: %w", err)
	}
	var b strings.Builder
	if err := t.Execute(&b, notesData{notes: n, Version: o.version, Commit: o.commit, Registry: o.registry, url: o.url}); err != nil {
		return fmt.Errorf("release notes: %w", err)
	}
	return os.WriteFile(filepath.Join(o.out, "RELEASE_NOTES.md"), []byte(b.String()), 0o644)
}
