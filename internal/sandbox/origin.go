package sandbox

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/crossfade-io/crossfade/internal/loopback"
)

// browserGuard keeps web pages away from the API (the AWS APIs, /metrics and /_sandbox/),
// which has no authentication: whatever reaches it can rewrite zones, load balancers and
// faults. Two ways in are closed.
//
// DNS rebinding: a page at evil.example resolves its own name to 127.0.0.1 and calls the
// API as its own origin. Its requests carry Host: evil.example, so a Host that is not a
// loopback name is refused, unless the sandbox serves other names on purpose
// (--allow-remote).
//
// Cross-origin requests: any page may POST a form or send a no-cors fetch to
// 127.0.0.1:10080, and the change is made even though the page cannot read the answer.
// No client of the sandbox is a web page (the sandbox serves none; the dashboard's page
// reads its own server only), so a request a page made is refused whatever its origin,
// the sandbox's own included: an Origin header (null too), or Sec-Fetch-Site other than
// "none" (a URL typed in the address bar). Sec-Fetch-Site also marks what has no Origin,
// such as an <img> or a link's GET. This stays on with --allow-remote: there a rebinding
// page's requests are same-origin, and still refused.
//
// The ALB listeners and the weighted proxy are other servers and serve application traffic
// with any Host; this guards the API server only.
type browserGuard struct {
	next http.Handler
	// allowRemote turns the Host check off (Config.AllowRemote); the browser check stays.
	allowRemote bool
	// endpoint is the API's URL, for the refusal's advice.
	endpoint string
	log      *slog.Logger
}

func (g *browserGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	msg := g.refusal(r)
	if msg == "" {
		g.next.ServeHTTP(w, r)
		return
	}
	g.log.Warn("sandbox: refused a request", "reason", msg, "method", r.Method, "path", r.URL.Path,
		"host", r.Host, "origin", r.Header.Get("Origin"), "sec_fetch_site", r.Header.Get("Sec-Fetch-Site"), "remote", r.RemoteAddr)
	http.Error(w, msg, http.StatusForbidden)
}

// refusal tells why r must not reach the API; "" lets it through.
func (g *browserGuard) refusal(r *http.Request) string {
	if !g.allowRemote && !apiHost(loopback.Host(r.Host)) {
		return fmt.Sprintf("crossfade sandbox: refused: the request is addressed to host %q, which is not a loopback name "+
			"(127.0.0.1, [::1] or localhost). The sandbox API has no authentication, so it answers only requests addressed "+
			"to this machine by a loopback name, which a web page cannot borrow through DNS rebinding. "+
			"Point the client at %s, or start the sandbox with --allow-remote to serve other names on purpose.", r.Host, g.endpoint)
	}
	origin, hasOrigin := r.Header["Origin"]
	site := r.Header.Get("Sec-Fetch-Site")
	if hasOrigin || (site != "" && site != "none") {
		return fmt.Sprintf("crossfade sandbox: refused a request made by a web page (Origin %q, Sec-Fetch-Site %q). "+
			"The sandbox API has no authentication, so no browser page may call it, whatever its origin. "+
			"Call it from the AWS CLI, an AWS SDK or curl (endpoint %s); to look at it in a browser, type the URL "+
			"in the address bar.", strings.Join(origin, ", "), site, g.endpoint)
	}
	return ""
}

// awsHostPrefix is the host prefix AWS's models give some operations
// (servicediscovery's DiscoverInstances: "data-"). The SDKs put it before the endpoint's
// host; the AWS CLI of Debian (2.9) cannot be told not to, and reaches the sandbox through
// an HTTP proxy as Host "data-127.0.0.1:port" (see test/e2e/servicediscovery_cli_test.go).
const awsHostPrefix = "data-"

// apiHost reports whether host, a Host header's host, may address the API: a loopback
// name (loopback.Name), or a loopback IP under the AWS host prefix. "data-127.0.0.1" has
// a numeric top-level label that no DNS delegates, so no web page can be served from it.
func apiHost(host string) bool {
	if loopback.Name(host) {
		return true
	}
	rest, ok := strings.CutPrefix(host, awsHostPrefix)
	if !ok {
		return false
	}
	ip := net.ParseIP(rest)
	return ip != nil && ip.To4() != nil && ip.IsLoopback()
}
