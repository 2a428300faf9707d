package v1alpha1

import (
	"math/rand"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"sigs.k8s.io/randfill"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

func filler(f *randfill.Filler) *randfill.Filler {
	return f.NilChance(0.3).NumElements(0, 3)
}

func checkHubRoundTrip(t *testing.T, f *randfill.Filler) {
	t.Helper()
	var in v1beta1.ContainerRecreateRequest
	filler(f).Fill(&in)
	in.TypeMeta = metav1.TypeMeta{} // set per version by the caller of a conversion
	var spoke ContainerRecreateRequest
	if err := spoke.ConvertFrom(in.DeepCopy()); err != nil {
		t.Fatalf("ConvertFrom: %v", err)
	}
	var out v1beta1.ContainerRecreateRequest
	if err := spoke.ConvertTo(&out); err != nil {
		t.Fatalf("ConvertTo: %v", err)
	}
	if !equality.Semantic.DeepEqual(&in, &out) {
		t.Fatalf("v1beta1 -> v1alpha1 -> v1beta1 changed the object (-in +out):\n%s", diff.Diff(&in, &out))
	}
}

func checkSpokeRoundTrip(t *testing.T, f *randfill.Filler) {
	t.Helper()
	var in ContainerRecreateRequest
	filler(f).Fill(&in)
	in.TypeMeta = metav1.TypeMeta{}
	var hub v1beta1.ContainerRecreateRequest
	if err := in.DeepCopy().ConvertTo(&hub); err != nil {
		t.Fatalf("ConvertTo: %v", err)
	}
	var out ContainerRecreateRequest
	if err := out.ConvertFrom(&hub); err != nil {
		t.Fatalf("ConvertFrom: %v", err)
	}
	if !equality.Semantic.DeepEqual(&in, &out) {
		t.Fatalf("v1alpha1 -> v1beta1 -> v1alpha1 changed the object (-in +out):\n%s", diff.Diff(&in, &out))
	}
}

// TestConversionRoundTripsRandomObjects converts a thousand randomly filled
// objects each way and back.
func TestConversionRoundTripsRandomObjects(t *testing.T) {
	for seed := range int64(1000) {
		checkHubRoundTrip(t, randfill.New().RandSource(rand.NewSource(seed)))
		checkSpokeRoundTrip(t, randfill.New().RandSource(rand.NewSource(seed)))
	}
}

// FuzzConversion is the same check driven by the fuzzer:
// go test -fuzz FuzzConversion ./api/apps/v1alpha1
func FuzzConversion(f *testing.F) {
	f.Add([]byte("rejuv"))
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkHubRoundTrip(t, randfill.NewFromGoFuzz(data))
		checkSpokeRoundTrip(t, randfill.NewFromGoFuzz(data))
	})
}
