// Package sandbox is crossfade's embedded default: a Route 53-compatible API and an
// authoritative DNS server answering from the same records, an ELBv2-compatible API with a
// real weighted HTTP proxy behind every listener, the CloudWatch API that reads the
// proxy's traffic, and a Cloud Map (servicediscovery) API whose DNS namespaces are zones of
// the same DNS server, in one loopback process, with fault injection and call counters for
// tests.
//
// The API has no authentication (whatever reaches it can rewrite zones, load balancers
// and faults), so it listens on loopback only unless told otherwise (--allow-remote), and
// refuses requests whose Host is not a loopback name (DNS rebinding) and any request a web
// page made (an Origin header, a cross-site Sec-Fetch-Site): see origin.go.
//
// Each AWS API is a protocol front end over a store; the names differ because a store is
// named for what it holds and a front end for the API it speaks:
//
//	API (front end)        protocol      store (model)   what the store holds
//	route53api             REST-XML      zones           hosted zones, record sets, changes
//	elbv2api               query-XML     elb             load balancers, target groups, listeners, rules
//	ec2api                 EC2 query     ec2             VPCs, subnets, security groups, instances, ENIs
//	servicediscoveryapi    JSON 1.1      cloudmapstore   namespaces, services, instances, operations
//	cloudwatchapi          query, JSON,  (albproxy)      the ALB proxy's per-second traffic counts
//	                       rpc-v2-cbor
//
// Every front end serves through awsapi (the error type, request id, region, the chain of
// call metrics, injected faults and body limit, and the stores' bbolt helpers) and supplies
// only its codec and handlers. cloudmapstore is not internal/cloudmap, the controller's
// Cloud Map publisher.
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/crossfade-io/crossfade/internal/loopback"
	"github.com/crossfade-io/crossfade/internal/sandbox/albproxy"
	"github.com/crossfade-io/crossfade/internal/sandbox/cloudmapstore"
	"github.com/crossfade-io/crossfade/internal/sandbox/cloudwatchapi"
	"github.com/crossfade-io/crossfade/internal/sandbox/dnsserver"
	"github.com/crossfade-io/crossfade/internal/sandbox/ec2"
	"github.com/crossfade-io/crossfade/internal/sandbox/ec2api"
	"github.com/crossfade-io/crossfade/internal/sandbox/elb"
	"github.com/crossfade-io/crossfade/internal/sandbox/elbv2api"
	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
	"github.com/crossfade-io/crossfade/internal/sandbox/route53api"
	"github.com/crossfade-io/crossfade/internal/sandbox/targetaddr"
	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// Default listen addresses.
const (
	DefaultAPIAddr = "127.0.0.1:10080"
	DefaultDNSAddr = "127.0.0.1:10053"
)

// Config configures a sandbox.
type Config struct {
	// APIAddr serves the Route 53, ELBv2, CloudWatch and Cloud Map APIs, /metrics and /_sandbox/;
	// port 0 picks one. The ELBv2 listeners are served on ports of their own (see
	// ListenerAddrs).
	APIAddr string
	// DNSAddr serves DNS on UDP and TCP; port 0 picks one.
	DNSAddr string
	// StatePath keeps the zones, the ELBv2 and the Cloud Map state in a bbolt file; empty
	// keeps them in memory.
	StatePath string
	// AllowRemote permits non-loopback listen addresses, and API requests addressed to
	// any host (else a Host that is not a loopback name is refused: DNS rebinding). A
	// request made by a web page is refused either way (see browserGuard).
	AllowRemote bool
	// ChangeDelay is how long a change stays PENDING before GetChange reports INSYNC, and
	// how long a Cloud Map operation stays PENDING before GetOperation reports its result.
	ChangeDelay time.Duration
	// CloudMapHealthDelay is how long Cloud Map waits before an
	// UpdateInstanceCustomHealthStatus takes effect (real Cloud Map: about 30 s); 0 applies
	// it at once.
	CloudMapHealthDelay time.Duration
	// TargetAddresses maps registered targets' IP:port to the loopback IP:port that stands
	// for each (targetaddr.Parse, ParseFlag); SetTargetAddresses and PUT
	// /_sandbox/addresses replace it later. The ALB proxy dials only through it: a loopback
	// target is its own backend, any other target without a mapping is unhealthy ("no
	// route in the sandbox") and never dialled.
	TargetAddresses map[netip.AddrPort]netip.AddrPort
	Faults          faults.Config
	Logger          *slog.Logger

	// targetDialControl, when set, runs before every socket the ALB proxy opens to a
	// target, for tests that count them.
	targetDialControl func(network, address string, c syscall.RawConn) error
}

// Sandbox is a running sandbox.
type Sandbox struct {
	log     *slog.Logger
	store   *zones.Store
	elb     *elb.Store
	ec2     *ec2.Store
	alb     *albBridge
	nlb     *nlbBridge
	addrs   *targetaddr.Map
	cm      *cloudmapstore.Store
	faults  *faults.Injector
	http    *http.Server
	apiAddr net.Addr
	dnsAddr string
	stopDNS context.CancelFunc
	dnsDone chan error
	done    chan error
	// closeOnce makes Close safe to call again (a test's explicit Close and its cleanup):
	// the second call returns the first one's error instead of waiting for servers that
	// have already reported their end.
	closeOnce sync.Once
	closeErr  error
}

// checkLoopback refuses an address that would expose the sandbox beyond this machine.
func checkLoopback(flag, addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q: %w", flag, addr, err)
	}
	if !loopback.Listen(host) {
		return fmt.Errorf("%s %q: not a loopback address; the sandbox has no authentication, so pass --allow-remote to listen there on purpose", flag, addr)
	}
	return nil
}

// Start opens the state, binds both listeners and serves until Close.
func Start(ctx context.Context, cfg Config) (*Sandbox, error) {
	if cfg.APIAddr == "" {
		cfg.APIAddr = DefaultAPIAddr
	}
	if cfg.DNSAddr == "" {
		cfg.DNSAddr = DefaultDNSAddr
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if !cfg.AllowRemote {
		if err := checkLoopback("--api", cfg.APIAddr); err != nil {
			return nil, err
		}
		if err := checkLoopback("--dns", cfg.DNSAddr); err != nil {
			return nil, err
		}
	}
	inj, err := faults.New(cfg.Faults)
	if err != nil {
		return nil, err
	}
	store, err := zones.Open(zones.Options{Path: cfg.StatePath})
	if err != nil {
		return nil, err
	}
	// The ELBv2 state lives in the zones' state file, in buckets of its own.
	lbs, err := elb.Open(elb.Options{DB: store.DB(), Logger: cfg.Logger})
	if err != nil {
		store.Close()
		return nil, err
	}
	// EC2 too: the instances that exist, which instance targets must name, and the
	// security groups the AWS Load Balancer Controller edits.
	ec2s, err := ec2.Open(ec2.Options{DB: store.DB(), Logger: cfg.Logger})
	if err != nil {
		lbs.Close()
		store.Close()
		return nil, err
	}
	lbs.SetInstances(ec2s)
	// The proxy follows the ELBv2 state from here on: persisted listeners are served now.
	addrs := targetaddr.New()
	if err := addrs.Set(cfg.TargetAddresses); err != nil {
		lbs.Close()
		store.Close()
		return nil, fmt.Errorf("target addresses: %w", err)
	}
	alb, err := startALB(ctx, cfg.Logger, lbs, store, albOptions{
		Dialer:     &targetaddr.Dialer{Map: addrs, Dialer: net.Dialer{Control: cfg.targetDialControl}},
		InstanceIP: ec2s.InstanceIP,
	})
	if err != nil {
		lbs.Close()
		store.Close()
		return nil, err
	}
	// The NLB proxy after the ALB's: it wraps the health source the ALB bridge set.
	nlb, err := startNLB(cfg.Logger, lbs, &targetaddr.Dialer{Map: addrs, Dialer: net.Dialer{Control: cfg.targetDialControl}}, ec2s.InstanceIP)
	if err != nil {
		_ = alb.close()
		lbs.Close()
		store.Close()
		return nil, err
	}
	// Cloud Map keeps its state in the same file and its DNS namespaces' zones in the store.
	cm, err := openCloudMap(cfg, store)
	if err != nil {
		_ = nlb.close()
		_ = alb.close()
		lbs.Close()
		store.Close()
		return nil, err
	}
	s := &Sandbox{log: cfg.Logger, store: store, elb: lbs, ec2: ec2s, alb: alb, nlb: nlb, addrs: addrs, cm: cm, faults: inj, done: make(chan error, 1)}
	closeStores := func() {
		_ = nlb.close()
		_ = alb.close()
		cm.Close()
		_ = ec2s.Close()
		lbs.Close()
		store.Close()
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	api, err := route53api.New(route53api.Config{
		Store: store, Faults: inj, Registerer: reg, ChangeDelay: cfg.ChangeDelay, Logger: cfg.Logger,
	})
	if err != nil {
		closeStores()
		return nil, err
	}
	// After the Route 53 API: ELBv2 joins its call counter rather than registering one.
	elbAPI, err := elbv2api.New(elbv2api.Config{Store: lbs, Faults: inj, Registerer: reg, Logger: cfg.Logger})
	if err != nil {
		closeStores()
		return nil, err
	}
	ec2API, err := ec2api.New(ec2api.Config{Store: ec2s, Faults: inj, Registerer: reg, Logger: cfg.Logger})
	if err != nil {
		closeStores()
		return nil, err
	}
	// CloudWatch recognises its own requests (three protocols, signed or not).
	cwAPI, err := cloudwatchapi.New(cloudwatchapi.Config{Source: lbMetrics{alb: proxyMetrics{alb.proxy}, nlb: nlb}, Faults: inj, Registerer: reg, Logger: cfg.Logger})
	if err != nil {
		closeStores()
		return nil, err
	}
	cmAPI, err := cloudMapAPI(cfg, cm, inj, reg)
	if err != nil {
		closeStores()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle(AdminPrefix, s.adminHandler())
	mux.Handle(ec2AdminPath, s.ec2AdminHandler())
	mux.Handle("/", &apiRouter{
		rest:      api,
		matchers:  []matcher{cwAPI},
		byVersion: map[string]http.Handler{elbv2api.Version: elbAPI, ec2api.Version: ec2API},
		byTarget:  map[string]http.Handler{cloudMapTarget: cmAPI},
	})

	ln, err := net.Listen("tcp", cfg.APIAddr)
	if err != nil {
		closeStores()
		// net's error names the address ("listen tcp ADDR: …"): name only the flag, as
		// checkLoopback does.
		return nil, fmt.Errorf("--api: %w", err)
	}
	s.apiAddr = ln.Addr()

	if err := s.startDNS(ctx, cfg.DNSAddr); err != nil {
		ln.Close()
		closeStores()
		return nil, err
	}

	guard := &browserGuard{next: mux, allowRemote: cfg.AllowRemote, endpoint: s.APIURL(), log: cfg.Logger}
	s.http = &http.Server{Handler: guard, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	go func() {
		err := s.http.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	state := cfg.StatePath
	if state == "" {
		state = "memory (pass --state to keep it)"
	}
	cfg.Logger.Info("sandbox serving", "api", s.APIURL(), "dns", s.dnsAddr, "state", state)
	return s, nil
}

// APIURL is the base URL for AWS clients' endpoint setting.
func (s *Sandbox) APIURL() string { return "http://" + s.apiAddr.String() }

// DNSAddr is the host:port DNS answers on, over UDP and TCP.
func (s *Sandbox) DNSAddr() string { return s.dnsAddr }

// Store is the sandbox's record store.
func (s *Sandbox) Store() *zones.Store { return s.store }

// ELB is the sandbox's ELBv2 store: the weighted proxy subscribes to it and gives it
// target health.
func (s *Sandbox) ELB() *elb.Store { return s.elb }

// ALB is the weighted proxy behind the ELBv2 listeners: where each listener is served,
// target health and per-target-group counts, as the proxy itself sees them.
func (s *Sandbox) ALB() *albproxy.Proxy { return s.alb.proxy }

// ListenerAddrs returns where each ELBv2 listener is served, "127.0.0.1:port" by listener
// ARN, as GET /_sandbox/elb/listeners answers.
func (s *Sandbox) ListenerAddrs() map[string]string {
	snap := s.elb.Snapshot()
	out := s.alb.listenerAddrs(snap)
	maps.Copy(out, s.nlb.listenerAddrs(snap)) // an NLB listener is the TCP proxy's
	return out
}

// Close stops the servers and the ALB proxy (every listener, health check and request in
// flight) and closes the state file. Calling it again returns the first call's error.
func (s *Sandbox) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

// close is Close's one run.
func (s *Sandbox) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		// Shutdown counts a connection that was opened but never sent a request (a
		// client cancelled mid-dial) as busy until it is 5 s old, so a client that
		// hammered the API and stopped can hold it past any deadline. Such connections
		// carry nothing: close whatever is left.
		err = s.http.Close()
	}
	errs := []error{err}
	errs = append(errs, <-s.done)
	s.stopDNS()
	errs = append(errs, <-s.dnsDone)
	// No API call can change the ELBv2 state now; the store's drain timer still can, so
	// the proxy stops following the store before it stops.
	errs = append(errs, s.nlb.close(), s.alb.close())
	errs = append(errs, s.cm.Close(), s.ec2.Close(), s.elb.Close(), s.store.Close())
	return errors.Join(errs...)
}

// apiRouter sends each request on "/" to the AWS API it is written for. Route 53 speaks
// REST on its own paths and gets whatever no other API claims; the query-protocol APIs
// share POST / and differ in their Version parameter; JSON-protocol APIs differ in the
// X-Amz-Target prefix ("<prefix>.<Operation>"); an API that recognises its own requests
// (several protocols, or a path of its own) is asked first. Adding an API is one entry:
//
//	matchers:  []matcher{cloudwatch}          // cloudwatchapi.API: query, json and cbor
//	byVersion: {"2015-12-01": elbv2}          // query protocol
//	byTarget:  {"<JSON target prefix>": api}  // JSON protocol
type apiRouter struct {
	rest      http.Handler
	matchers  []matcher
	byVersion map[string]http.Handler
	byTarget  map[string]http.Handler
}

// matcher is an API handler that recognises its own requests.
type matcher interface {
	http.Handler
	Matches(r *http.Request) bool
}

// maxFormBytes bounds the form body the router reads to find the Version.
const maxFormBytes = 4 << 20

func (a *apiRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for _, m := range a.matchers {
		if m.Matches(r) {
			m.ServeHTTP(w, r)
			return
		}
	}
	if t := r.Header.Get("X-Amz-Target"); t != "" {
		prefix, _, _ := strings.Cut(t, ".")
		if h, ok := a.byTarget[prefix]; ok {
			h.ServeHTTP(w, r)
			return
		}
	}
	if r.URL.Path == "/" {
		if v, ok := queryVersion(w, r); ok {
			if h, ok := a.byVersion[v]; ok {
				h.ServeHTTP(w, r)
				return
			}
		}
	}
	a.rest.ServeHTTP(w, r)
}

// queryVersion reads the Version of a query-protocol request (in the URL, or in a POSTed
// form) and puts the body back for the handler.
func queryVersion(w http.ResponseWriter, r *http.Request) (string, bool) {
	if v := r.URL.Query().Get("Version"); v != "" {
		return v, true
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); r.Method != http.MethodPost || mt != "application/x-www-form-urlencoded" {
		return "", false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxFormBytes))
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return "", false
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return "", false
	}
	return form.Get("Version"), true
}

// startDNS serves DNS until Close and returns once both sockets are bound, or with the
// reason they could not be.
func (s *Sandbox) startDNS(ctx context.Context, addr string) error {
	dnsCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.stopDNS, s.dnsDone = cancel, make(chan error, 1)
	ready := make(chan string, 1)
	srv := dnsserver.New(s.store, s.log)
	go func() {
		s.dnsDone <- srv.ListenAndServe(dnsCtx, addr, func(udp, _ net.Addr) { ready <- udp.String() })
	}()
	select {
	case s.dnsAddr = <-ready:
		return nil
	case err := <-s.dnsDone:
		cancel()
		// The server's error names the address and protocol ("listen udp ADDR: …").
		return fmt.Errorf("--dns: %w", err)
	}
}
