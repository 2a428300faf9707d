// Package rejuv groups the API of rejuv.dev: the RecreatePolicy that says
// which containers to recreate and when. Execution stays with the
// ContainerRecreateRequest of package apps.
package rejuv
