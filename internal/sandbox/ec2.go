package sandbox

import (
	"errors"
	"net/http"

	"github.com/crossfade-io/crossfade/internal/sandbox/ec2"
)

// ec2AdminPath is where tests and the demo declare what exists in EC2.
const ec2AdminPath = AdminPrefix + "ec2"

// EC2 is the sandbox's EC2 store: the VPCs, subnets, security groups, instances and network
// interfaces its EC2 API answers about.
func (s *Sandbox) EC2() *ec2.Store { return s.ec2 }

// DeclareEC2 declares what exists in EC2, as PUT /_sandbox/ec2 does: each object of doc
// replaces the one of its id or is added, the others are kept, and declaring the same
// document again changes nothing. A refused document changes nothing; its
// *ec2.DeclareError names the field.
func (s *Sandbox) DeclareEC2(doc ec2.Document) error { return s.ec2.Declare(doc) }

// ec2AdminHandler serves GET /_sandbox/ec2 (everything declared, and the rules the
// controller authorized) and PUT /_sandbox/ec2 (a declaration, answered with the result).
func (s *Sandbox) ec2AdminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+ec2AdminPath, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.ec2.Snapshot())
	})
	mux.HandleFunc("PUT "+ec2AdminPath, func(w http.ResponseWriter, r *http.Request) {
		var doc ec2.Document
		if err := decodeJSON(r, &doc); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "ec2 declaration: body must be {\"vpcs\": [...], \"subnets\": [...], \"securityGroups\": [...], \"instances\": [...], \"networkInterfaces\": [...]}: " + err.Error()})
			return
		}
		if err := s.ec2.Declare(doc); err != nil {
			status := http.StatusInternalServerError
			if de := (*ec2.DeclareError)(nil); errors.As(err, &de) {
				status = http.StatusBadRequest
			}
			writeJSON(w, status, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, s.ec2.Snapshot())
	})
	return mux
}
