package refusals

// Refusal is one input the API server refuses on create with Rejuv
// installed: healer/admission's TestEveryRefusal creates it and checks the
// cause the API server returns.
type Refusal struct {
	// Input says in words what the user wrote.
	Input string
	// Stage is what refuses it: the CRD's schema, a CEL rule of the CRD,
	// a webhook, or the Rego compiler inside the policy webhook.
	Stage string
	// Name is the object's name when it matters; Spec is its spec as YAML.
	Name, Spec string
	// Field and Message are the cause the API server returns: the field
	// it names and what its message contains.
	Field, Message string
}

// The stages, in the order the API server runs them for a policy.
const (
	StageSchema  = "schema"
	StageCEL     = "CEL"
	StageWebhook = "webhook"
	StageCompile = "Rego compiler"
)
