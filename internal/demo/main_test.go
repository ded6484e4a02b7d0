package demo

import (
	"testing"

	"github.com/crossfade-io/crossfade/internal/controllertest"
)

// TestMain removes the crossfade binary demo --kube's test builds for its controllers.
func TestMain(m *testing.M) { controllertest.Main(m) }
