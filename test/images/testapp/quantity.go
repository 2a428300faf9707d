package main

import (
	"errors"

	"k8s.io/apimachinery/pkg/api/resource"
)

// parseBytes reads a byte count written as a Kubernetes quantity: "512Ki",
// "1Mi", "2M", "1000".
func parseBytes(s string) (int64, error) {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, err
	}
	if q.Sign() < 0 {
		return 0, errors.New("must not be negative")
	}
	// Value rounds fractions up; comparing back catches them.
	v := q.Value()
	if q.Cmp(*resource.NewQuantity(v, resource.BinarySI)) != 0 {
		return 0, errors.New("want a whole number of bytes")
	}
	return v, nil
}

// formatBytes writes a byte count the way a Kubernetes quantity would, so that
// logs read like the flags and controls that set them.
func formatBytes(v int64) string {
	return resource.NewQuantity(v, resource.BinarySI).String()
}
