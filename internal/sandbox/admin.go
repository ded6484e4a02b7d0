package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
)

// AdminPrefix is where the sandbox's own endpoints live, beside the Route 53 API paths.
const AdminPrefix = "/_sandbox/"

// adminHandler serves what only a sandbox has: fault injection, health-check status and a
// liveness probe.
func (s *Sandbox) adminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_sandbox/healthz", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /_sandbox/faults", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.faults.Config())
	})
	mux.HandleFunc("PUT /_sandbox/faults", func(w http.ResponseWriter, r *http.Request) {
		var cfg faults.Config
		if err := decodeJSON(r, &cfg); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "faults: " + err.Error()})
			return
		}
		if err := s.faults.Set(cfg); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		s.log.Info("faults set", "config", cfg)
		writeJSON(w, http.StatusOK, cfg)
	})
	mux.HandleFunc("GET /_sandbox/health/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		writeJSON(w, http.StatusOK, healthStatus{ID: id, Healthy: s.store.Healthy(id)})
	})
	mux.HandleFunc("PUT /_sandbox/health/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		var body struct {
			Healthy *bool `json:"healthy"`
		}
		if err := decodeJSON(r, &body); err != nil || body.Healthy == nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("health check %s: body must be {\"healthy\": true|false}", id)})
			return
		}
		if err := s.store.SetHealth(id, *body.Healthy); err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
			return
		}
		s.log.Info("health check set", "health_check", id, "healthy", *body.Healthy)
		writeJSON(w, http.StatusOK, healthStatus{ID: id, Healthy: *body.Healthy})
	})
	return mux
}

type healthStatus struct {
	ID      string `json:"id"`
	Healthy bool   `json:"healthy"`
}

func decodeJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
