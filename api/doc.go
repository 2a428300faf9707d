// Package api holds Rejuv's API types: api/apps (ContainerRecreateRequest, apps.kruise.io) and
// api/rejuv (RecreatePolicy, rejuv.dev). The types arrive with their issues; this
// package only anchors the tree.
package api
