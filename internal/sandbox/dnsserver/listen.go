package dnsserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/miekg/dns"
)

const (
	// bindAttempts is how often a free port (port 0) is tried: the UDP socket picks it and
	// the TCP listener may find it taken, in which case both are given up and tried anew.
	bindAttempts = 20
	// socketBuffer is the kernel buffer asked for on each UDP socket, so that bursts of
	// queries queue instead of being dropped; the kernel caps it at its configured maximum.
	socketBuffer = 4 << 20
	// shutdownGrace bounds how long shutdown waits for in-flight queries before it reports.
	shutdownGrace = 5 * time.Second
)

// ListenAndServe serves DNS on UDP and TCP at addr (host:port; port 0 picks a port free for
// both) until ctx is cancelled, then shuts both down, waits for every goroutine it started
// and returns nil. ready, if not nil, is called with the bound addresses once the server
// answers. Where the OS has SO_REUSEPORT, one UDP socket per GOMAXPROCS shares the port so
// that reading scales with CPUs. An error is returned if binding fails or a listener stops
// on its own.
func (s *Server) ListenAndServe(ctx context.Context, addr string, ready func(udp, tcp net.Addr)) error {
	n := 1
	if reusePortSupported {
		n = runtime.GOMAXPROCS(0)
	}
	socks, err := bind(ctx, addr, n)
	if err != nil {
		return err
	}
	// Every socket is closed on the way out, including any miekg/dns never got to serve.
	defer socks.close()

	// exited has room for every server, so a serving goroutine never blocks on it.
	exited := make(chan *running, len(socks.udp)+1)
	runs := make([]*running, 0, len(socks.udp)+1)
	for _, conn := range socks.udp {
		runs = append(runs, s.startUDP(conn, exited))
	}
	runs = append(runs, startTCP(&dns.Server{Listener: socks.tcp, Handler: s, MsgAcceptFunc: acceptRequest}, exited))
	defer s.stop(runs)

	// Wait until each server runs or has failed: shutting down a miekg/dns server that has
	// not started yet is a no-op and would leave it serving.
	for _, r := range runs {
		select {
		case <-r.started:
		case <-r.done:
			return fmt.Errorf("dns serve %s: %w", socks.udp[0].LocalAddr(), r.failure())
		}
	}
	udpAddr, tcpAddr := socks.udp[0].LocalAddr(), socks.tcp.Addr()
	s.log.Info("dns server listening", "udp", udpAddr.String(), "tcp", tcpAddr.String(), "udp_sockets", len(socks.udp))
	if ready != nil {
		ready(udpAddr, tcpAddr)
	}

	select {
	case <-ctx.Done():
		s.log.Info("dns server stopping", "udp", udpAddr.String())
		return nil
	case r := <-exited:
		return fmt.Errorf("dns serve %s: %w", udpAddr, r.failure())
	}
}

// acceptRequest drops responses and lets every request through to ServeDNS, which answers
// malformed ones itself, so that TCP treats them exactly as the UDP path does.
func acceptRequest(dh dns.Header) dns.MsgAcceptAction {
	const qr = 1 << 15
	if dh.Bits&qr != 0 {
		return dns.MsgIgnore
	}
	return dns.MsgAccept
}

// running is one serving goroutine and how to stop it.
type running struct {
	started chan struct{} // closed once it accepts queries
	done    chan struct{} // closed when it has returned
	err     error         // what it returned, set before done is closed
	stop    func(context.Context) error
}

// startUDP serves one UDP socket on a new goroutine, which reports on exited when it returns.
// Closing the socket stops it.
func (s *Server) startUDP(conn *net.UDPConn, exited chan<- *running) *running {
	r := &running{started: make(chan struct{}), done: make(chan struct{}),
		stop: func(context.Context) error { return conn.Close() }}
	close(r.started) // the socket is bound: queries queue in it from now on
	go func() {
		r.err = s.serveUDP(conn)
		close(r.done)
		exited <- r
	}()
	return r
}

// startTCP serves srv on a new goroutine, which reports on exited when it returns.
func startTCP(srv *dns.Server, exited chan<- *running) *running {
	r := &running{started: make(chan struct{}), done: make(chan struct{}), stop: srv.ShutdownContext}
	srv.NotifyStartedFunc = func() { close(r.started) }
	go func() {
		r.err = srv.ActivateAndServe()
		close(r.done)
		exited <- r
	}()
	return r
}

// failure is why a server stopped without being asked to; call it only after done.
func (r *running) failure() error {
	if r.err == nil {
		return errors.New("listener stopped unexpectedly")
	}
	return r.err
}

// stop stops every server still running and waits until all have returned.
func (s *Server) stop(runs []*running) {
	for _, r := range runs {
		select {
		case <-r.done:
			continue
		case <-r.started:
		}
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		if err := r.stop(ctx); err != nil {
			s.log.Warn("dns server shutdown", "err", err)
		}
		cancel()
	}
	for _, r := range runs {
		<-r.done
	}
}

// sockets are a server's bound sockets: UDP sockets sharing one port and a TCP listener.
type sockets struct {
	udp []*net.UDPConn
	tcp net.Listener
}

func (s *sockets) close() {
	for _, c := range s.udp {
		_ = c.Close() // most are closed already by stop; nothing to report
	}
	if s.tcp != nil {
		_ = s.tcp.Close()
	}
}

// bind opens n UDP sockets and one TCP listener on the same host and port. With port 0 the
// first UDP socket picks the port; if TCP finds it taken, everything is retried.
func bind(ctx context.Context, addr string, n int) (*sockets, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w", addr, err)
	}
	attempts := 1
	if port == "" || port == "0" {
		attempts = bindAttempts
	}
	for i := 0; ; i++ {
		socks, err := bindOnce(ctx, host, port, n)
		if err == nil || i+1 >= attempts || !errors.Is(err, syscall.EADDRINUSE) {
			return socks, err
		}
	}
}

func bindOnce(ctx context.Context, host, port string, n int) (*sockets, error) {
	lc := net.ListenConfig{}
	if n > 1 {
		lc.Control = reusePort
	}
	at := net.JoinHostPort(host, port)
	first, err := listenUDP(ctx, &lc, at)
	if err != nil {
		return nil, err
	}
	socks := &sockets{udp: []*net.UDPConn{first}}
	at = net.JoinHostPort(host, strconv.Itoa(first.LocalAddr().(*net.UDPAddr).Port))
	socks.tcp, err = (&net.ListenConfig{}).Listen(ctx, "tcp", at)
	if err != nil {
		socks.close()
		// net's error names the protocol and address: "listen tcp ADDR: …".
		return nil, err
	}
	for range n - 1 {
		c, err := listenUDP(ctx, &lc, at)
		if err != nil {
			socks.close()
			return nil, err
		}
		socks.udp = append(socks.udp, c)
	}
	return socks, nil
}

func listenUDP(ctx context.Context, lc *net.ListenConfig, at string) (*net.UDPConn, error) {
	pc, err := lc.ListenPacket(ctx, "udp", at)
	if err != nil {
		// net's error names the protocol and address: "listen udp ADDR: …".
		return nil, err
	}
	c, ok := pc.(*net.UDPConn)
	if !ok {
		pc.Close()
		return nil, fmt.Errorf("listen udp %s: got a %T", at, pc)
	}
	// Best effort: a smaller buffer only means drops under bursts, not failure.
	_ = c.SetReadBuffer(socketBuffer)
	_ = c.SetWriteBuffer(socketBuffer)
	return c, nil
}
