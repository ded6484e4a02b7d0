package sandbox

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crossfade-io/crossfade/internal/sandbox/cloudmapstore"
	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
	"github.com/crossfade-io/crossfade/internal/sandbox/servicediscoveryapi"
	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// This file joins the Cloud Map model (internal/sandbox/cloudmapstore) to the rest of the
// sandbox:
//
//   - its state lives in buckets of the zones' state file, as the ELBv2 state does;
//   - a DNS namespace's hosted zone is a zone of the zones store, private for a private
//     namespace, so ListHostedZones and ListResourceRecordSets show it under the
//     namespace's HostedZoneId and the sandbox's DNS server answers the records Cloud Map
//     writes for the namespace's instances (the DNS server answers every zone, private or
//     not: the sandbox has no VPCs);
//   - the API is served on the sandbox's API address, routed by its X-Amz-Target prefix,
//     with the shared fault injection and call counters.

// cloudMapTarget routes the JSON 1.1 requests of Cloud Map to its handler.
const cloudMapTarget = servicediscoveryapi.TargetPrefix

// openCloudMap opens the Cloud Map store over the sandbox's zones and state file.
// Operations stay PENDING for the Route 53 change delay, so that one setting makes every
// asynchronous AWS answer of the sandbox slow or quick.
func openCloudMap(cfg Config, zs *zones.Store) (*cloudmapstore.Store, error) {
	cm, err := cloudmapstore.Open(cloudmapstore.Options{
		DB: zs.DB(), Zones: zs, OperationDelay: cfg.ChangeDelay, HealthDelay: cfg.CloudMapHealthDelay, Logger: cfg.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("cloud map: %w", err)
	}
	return cm, nil
}

// cloudMapAPI builds the Cloud Map handler; it joins the call counters the Route 53 API
// registered.
func cloudMapAPI(cfg Config, cm *cloudmapstore.Store, inj *faults.Injector, reg prometheus.Registerer) (*servicediscoveryapi.API, error) {
	return servicediscoveryapi.New(servicediscoveryapi.Config{Store: cm, Faults: inj, Registerer: reg, Logger: cfg.Logger})
}

// CloudMap is the sandbox's Cloud Map store.
func (s *Sandbox) CloudMap() *cloudmapstore.Store { return s.cm }
