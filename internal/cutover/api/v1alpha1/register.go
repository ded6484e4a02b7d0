package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is crossfade.io/v1alpha1, the apiVersion a plan file already names
// (spec.APIVersion).
var GroupVersion = schema.GroupVersion{Group: "crossfade.io", Version: "v1alpha1"}

// Resource is the plural name the API serves Cutovers under.
const Resource = "cutovers"

// GroupVersionResource is where the API serves Cutovers, for dynamic clients.
var GroupVersionResource = GroupVersion.WithResource(Resource)

var (
	// SchemeBuilder registers this version's types.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds Cutover and CutoverList to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers the kinds, and the meta types (ListOptions, …) a client of the
// group version sends.
func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Cutover{}, &CutoverList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
