package reconciler

import (
	"context"
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/journal/statusstore"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// TestClassify: what a worker does with the error a run ended with, wrapped as the
// engine wraps it: stand by while another holder runs the cutover, stop (Failed) when no
// retry can get past it, and otherwise retry.
func TestClassify(t *testing.T) {
	gr := schema.GroupResource{Group: "crossfade.io", Resource: "cutovers"}
	tests := []struct {
		name           string
		err            error
		standby, stuck bool
	}{
		{"lease held", &journal.LockedError{Path: "lease", Holder: journal.Holder{Cutover: "app"}}, true, false},
		{"lease lost", &statusstore.LostError{Where: "cutover ns/app", Lease: "ns/crossfade-cutover-app"}, true, false},
		{"journal appended by another", &journal.ConflictError{Where: "cutover ns/app", Seq: 3, Found: 4}, true, false},
		{"journal full", &statusstore.FullError{Namespace: "ns", Name: "app", Entries: statusstore.MaxEntries}, false, true},
		{"weights held by a CLI run", &lever.HeldError{Cutover: "app", Record: "app.example.com"}, false, true},
		{"invalid spec", &spec.Error{File: "cutover/app"}, false, true},
		{"entry refused as invalid", apierrors.NewInvalid(schema.GroupKind{Group: "crossfade.io", Kind: "Cutover"}, "app", field.ErrorList{field.Invalid(field.NewPath("status", "journal").Index(13).Child("step"), -2, "too small")}), false, true},
		{"API server unreachable", apierrors.NewServiceUnavailable("down"), false, false},
		{"conflict on the object", apierrors.NewConflict(gr, "app", errors.New("changed")), false, false},
		{"context", context.DeadlineExceeded, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := fmt.Errorf("journal cutover ns/app: append intent (seq 14): %w", tt.err)
			if got := standby(err); got != tt.standby {
				t.Errorf("standby(%v) = %t, want %t", err, got, tt.standby)
			}
			if got := stuck(err); got != tt.stuck {
				t.Errorf("stuck(%v) = %t, want %t", err, got, tt.stuck)
			}
		})
	}
}
