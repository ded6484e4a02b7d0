package render

import (
	"errors"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// failingWriter refuses every write, as a closed stdout does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// TestReleased: release says, per lever, what it removed, and every thing it
// released with --force that will change: taken over runners, weights the sources ask
// for, members no source asks for, publishers that did not confirm.
func TestReleased(t *testing.T) {
	forced := cutover.Released{Records: 2,
		TakenOver:   []registry.Runner{{Token: "tok", Host: "other", PID: 7}},
		Changes:     []cutover.HandBack{{Member: "app.example.com A [blue]", Wants: 100, Holds: 0}},
		Gone:        []cutover.Departure{{Member: "app.example.com A [old]", Holds: 5}},
		Unconfirmed: []cutover.Unconfirmed{{Member: "app.example.com A [green]", Owner: "kube-b"}},
	}
	for _, tc := range []struct {
		name string
		plan *spec.Plan
		rel  cutover.Released
		want []string
	}{
		{"route53", &spec.Plan{Name: "app"}, cutover.Released{Records: 3},
			[]string{"cutover app: 3 authority records deleted; publishers own the weights again\n"}},
		{"alb", &spec.Plan{Name: "app", ALB: &spec.ALB{}}, cutover.Released{Records: 2},
			[]string{"cutover app: authority tags removed from 2 listener rules; their weights are anyone's to change again\n"}},
		{"cloud map", &spec.Plan{Name: "app", CloudMap: &spec.CloudMap{}}, cutover.Released{Records: 1},
			[]string{"cutover app: authority tags removed from 1 Cloud Map services; their instances' health is anyone's to change again\n"}},
		{"forced", &spec.Plan{Name: "app"}, forced, []string{
			"cutover app: took the weights over from runner tok@other:7 (another runner's record, deleted with --force); that runner, if still running, stops at its next write\n",
			"cutover app: 2 authority records deleted",
			"cutover app: released with --force although its source asks for another weight: app.example.com A [blue] goes from weight 0 to 100 at its publisher's next sync\n",
			"cutover app: released with --force although no source asks for it any more: app.example.com A [old] (weight 5) goes away at its publisher's next sync\n",
			"cutover app: released with --force without its publisher's confirmation: app.example.com A [green]: owner kube-b has not confirmed this hold; it writes whatever its source asks for at its next sync\n",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := Released(&b, tc.plan, tc.rel); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
			if n := strings.Count(b.String(), "\n"); n != len(tc.want) {
				t.Errorf("%d lines, want %d:\n%s", n, len(tc.want), b.String())
			}
		})
	}
	// A summary that could not be written is an error naming the cutover, not silence.
	if err := Released(failingWriter{}, &spec.Plan{Name: "app"}, cutover.Released{}); err == nil || !strings.Contains(err.Error(), "cutover app") {
		t.Errorf("write to a broken output: err = %v, want one naming cutover app", err)
	}
}
