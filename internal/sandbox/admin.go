package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"

	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
	"github.com/crossfade-io/crossfade/internal/sandbox/targetaddr"
)

// AdminPrefix is where the sandbox's own endpoints live, beside the Route 53 API paths.
const AdminPrefix = "/_sandbox/"

// adminHandler serves what only a sandbox has: fault injection, health-check status, the
// addresses of AWS load balancers that aliases name, where the ELBv2 listeners are served,
// the loopback backends that stand for registered targets, and a liveness probe.
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
	mux.HandleFunc("GET /_sandbox/loadbalancers/{name}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		lb, ok := s.store.LoadBalancerInfo(name)
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("load balancer %s: no addresses set", name)})
			return
		}
		writeJSON(w, http.StatusOK, lb)
	})
	mux.HandleFunc("PUT /_sandbox/loadbalancers/{name}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		var body struct {
			Addresses *[]netip.Addr `json:"addresses"`
		}
		if err := decodeJSON(r, &body); err != nil || body.Addresses == nil {
			msg := fmt.Sprintf("load balancer %s: body must be {\"addresses\": [\"192.0.2.10\", \"2001:db8::10\"]}", name)
			if err != nil {
				msg += ": " + err.Error()
			}
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": msg})
			return
		}
		lb, err := s.store.SetLoadBalancer(name, *body.Addresses)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		s.log.Info("load balancer addresses set", "load_balancer", lb.DNSName, "zone_id", lb.ZoneID, "addresses", len(lb.Addresses))
		writeJSON(w, http.StatusOK, lb)
	})
	mux.HandleFunc("DELETE /_sandbox/loadbalancers/{name}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		if !s.store.DeleteLoadBalancer(name) {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("load balancer %s: no addresses set", name)})
			return
		}
		s.log.Info("load balancer addresses removed", "load_balancer", name)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /_sandbox/elb/listeners", func(w http.ResponseWriter, r *http.Request) {
		// Where the weighted proxy serves each listener, {"<listener ARN>":
		// "127.0.0.1:<port>"}: clients send their requests there, not to port 80 or 443.
		// A listener is listed from the moment CreateListener answers.
		writeJSON(w, http.StatusOK, s.ListenerAddrs())
	})
	mux.HandleFunc("GET /_sandbox/addresses", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, addressesJSON(s.TargetAddresses()))
	})
	mux.HandleFunc("PUT /_sandbox/addresses", func(w http.ResponseWriter, r *http.Request) {
		// The whole mapping, {"192.0.2.11:8080": "127.0.0.1:18011", …}: what is not in it
		// has no route from now on (a loopback target is still its own backend).
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "addresses: reading the body: " + err.Error()})
			return
		}
		entries, err := targetaddr.Parse(body)
		if err == nil {
			err = s.SetTargetAddresses(entries)
		}
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, addressesJSON(s.TargetAddresses()))
	})
	return mux
}

// SetTargetAddresses makes entries the whole mapping from registered targets' IP:port to
// the loopback IP:port that stands for each, as PUT /_sandbox/addresses does. The ALB
// and NLB proxies apply it before this returns: a target that lost its mapping is unhealthy ("no
// route in the sandbox") and gets no request, one that gained one is checked at once. A
// refused mapping (an entry that is not IP:port, or a backend that is not loopback)
// changes nothing; the error names the entry.
func (s *Sandbox) SetTargetAddresses(entries map[netip.AddrPort]netip.AddrPort) error {
	if err := s.addrs.Set(entries); err != nil {
		return err
	}
	s.alb.proxy.RoutesChanged()
	if s.nlb != nil {
		s.nlb.proxy.RoutesChanged()
	}
	s.log.Info("target addresses set", "entries", len(entries))
	return nil
}

// TargetAddresses returns a copy of the mapping from targets' IP:port to loopback backends.
func (s *Sandbox) TargetAddresses() map[netip.AddrPort]netip.AddrPort { return s.addrs.Entries() }

// addressesJSON is a mapping as GET /_sandbox/addresses answers it: "IP:port" strings.
func addressesJSON(entries map[netip.AddrPort]netip.AddrPort) map[string]string {
	out := make(map[string]string, len(entries))
	for from, to := range entries {
		out[from.String()] = to.String()
	}
	return out
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
