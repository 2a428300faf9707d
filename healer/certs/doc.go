// Package certs owns the webhook server's TLS: a CA and a serving
// certificate kept in a Secret, renewed before they expire, written where the
// webhook server reads them, and the CA bundle written into the webhook
// configurations and the CRD's conversion webhook. It is not used when
// certificates come from elsewhere (cert-manager).
package certs
