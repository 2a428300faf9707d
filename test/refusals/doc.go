// Package refusals holds the rows of docs/validation.md as data: the
// inputs the API server refuses with Rejuv installed, and the rules that
// fail when they run. It holds no checks: healer/admission creates each
// refusal on a real API server, healer/recreatepolicy runs each failing rule
// in a policy there, and this package's test writes the document.
package refusals
