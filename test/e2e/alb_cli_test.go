package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// albTarget is one target behind the sandbox's ALB: an HTTP server on loopback that
// answers with its name, 200 on /healthz, and holds /slow until released.
type albTarget struct {
	name string
	port string
}

func startALBTarget(t *testing.T, name string, arrived chan<- string, release <-chan struct{}) albTarget {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz":
			return
		case "/slow":
			arrived <- name
			<-release
		}
		_, _ = io.WriteString(w, name)
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return albTarget{name: name, port: port}
}

func (a albTarget) arg() string { return "Id=127.0.0.1,Port=" + a.port }

// albGet sends one request through the listener and returns the target's name.
func albGet(t *testing.T, c *http.Client, addr, path string) string {
	t.Helper()
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %q %v", path, resp.StatusCode, body, err)
	}
	return string(body)
}

// targetHealth is `aws elbv2 describe-target-health` as "port → state".
func (c *cli) targetHealth(tg string) map[string]string {
	c.t.Helper()
	var out struct {
		TargetHealthDescriptions []struct {
			Target       struct{ Port int }
			TargetHealth struct{ State string }
		}
	}
	c.must(&out, "elbv2", "describe-target-health", "--target-group-arn", tg)
	h := map[string]string{}
	for _, d := range out.TargetHealthDescriptions {
		h[strconv.Itoa(d.Target.Port)] = d.TargetHealth.State
	}
	return h
}

func (c *cli) waitTargetHealth(tg string, want map[string]string) {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := c.targetHealth(tg)
		if fmt.Sprint(got) == fmt.Sprint(want) {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("describe-target-health %s: %v, want %v", tg, got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestALBCLI runs the ALB lever's data path as an operator would: `crossfade sandbox` as
// its own process, the real AWS CLI for every ELBv2 and CloudWatch call, and HTTP
// requests through the listener's loopback address. Targets turn healthy; 1,000 requests
// split 90/10 within a binomial tolerance; `modify-listener` to 0/100 sends every new
// request to green; `get-metric-data` reports the requests each group served; a
// deregistered target finishes its request in flight, takes no new one and is gone after
// its deregistration delay.
func TestALBCLI(t *testing.T) {
	needTool(t, awsBin, "awscli")
	p := startSandboxProcess(t, filepath.Join(t.TempDir(), "state.db"))
	aws := &cli{t: t, endpoint: p.api, home: t.TempDir()}
	arrived, release := make(chan string, 4), make(chan struct{})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	blue := startALBTarget(t, "blue", arrived, release)
	greenA := startALBTarget(t, "green-a", arrived, release)
	greenB := startALBTarget(t, "green-b", arrived, release)

	var lb struct {
		LoadBalancers []struct{ LoadBalancerArn string }
	}
	aws.must(&lb, "elbv2", "create-load-balancer", "--name", "shop", "--subnets", "subnet-a", "subnet-b")
	lbARN := lb.LoadBalancers[0].LoadBalancerArn
	tgs := map[string]string{}
	for _, name := range []string{"blue", "green"} {
		var out struct {
			TargetGroups []struct{ TargetGroupArn string }
		}
		aws.must(&out, "elbv2", "create-target-group", "--name", name, "--protocol", "HTTP", "--port", "8080", "--vpc-id", "vpc-1",
			"--target-type", "ip", "--health-check-path", "/healthz", "--health-check-interval-seconds", "5",
			"--health-check-timeout-seconds", "2", "--healthy-threshold-count", "2")
		tgs[name] = out.TargetGroups[0].TargetGroupArn
	}
	blueTG, greenTG := tgs["blue"], tgs["green"]
	aws.must(nil, "elbv2", "register-targets", "--target-group-arn", blueTG, "--targets", blue.arg())
	aws.must(nil, "elbv2", "register-targets", "--target-group-arn", greenTG, "--targets", greenA.arg(), greenB.arg())
	aws.must(nil, "elbv2", "modify-target-group-attributes", "--target-group-arn", greenTG,
		"--attributes", "Key=deregistration_delay.timeout_seconds,Value=2")
	var ls struct {
		Listeners []struct{ ListenerArn string }
	}
	aws.must(&ls, "elbv2", "create-listener", "--load-balancer-arn", lbARN, "--protocol", "HTTP", "--port", "80",
		"--default-actions", aws.batchFile(elbForward(0, blueTG, 90, greenTG, 10)))
	listener := ls.Listeners[0].ListenerArn

	resp, err := http.Get(p.api + "/_sandbox/elb/listeners")
	if err != nil {
		t.Fatal(err)
	}
	var addrs map[string]string
	err = json.NewDecoder(resp.Body).Decode(&addrs)
	resp.Body.Close()
	addr := addrs[listener]
	if host, _, splitErr := net.SplitHostPort(addr); err != nil || splitErr != nil || host != "127.0.0.1" {
		t.Fatalf("GET /_sandbox/elb/listeners: %v %v", addrs, err)
	}
	aws.waitTargetHealth(blueTG, map[string]string{blue.port: "healthy"})
	aws.waitTargetHealth(greenTG, map[string]string{greenA.port: "healthy", greenB.port: "healthy"})

	tr := &http.Transport{MaxIdleConnsPerHost: 8}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	const n = 1000
	began := time.Now().UTC()
	got := map[string]int{}
	for range n {
		name, _, _ := strings.Cut(albGet(t, client, addr, "/"), "-")
		got[name]++
	}
	if tol := 5 * math.Sqrt(n*0.1*0.9); math.Abs(float64(got["green"])-n*0.1) > tol || got["blue"]+got["green"] != n {
		t.Fatalf("shares %v: want green %d ± %.0f of %d", got, n/10, tol, n)
	}
	t.Logf("90/10: %v", got)

	// What CloudWatch reports per group is what the clients saw. The proxy counts a
	// request as its handler returns, a moment after the client has the answer: ask
	// again until the load balancer's total is complete.
	lbDim := strings.SplitN(lbARN, ":loadbalancer/", 2)[1]
	dim := func(arn string) string { return arn[strings.LastIndex(arn, ":")+1:] }
	window := []string{"--start-time", began.Add(-time.Minute).Format(time.RFC3339), "--end-time", time.Now().UTC().Add(2 * time.Minute).Format(time.RFC3339)}
	var sums map[string]float64
	for deadline := time.Now().Add(10 * time.Second); ; {
		var md cliMetricData
		aws.must(&md, append([]string{"cloudwatch", "get-metric-data", "--metric-data-queries", aws.batchFile("[" + strings.Join([]string{
			cwQuery("blue", "RequestCount", "Sum", 60, "TargetGroup", dim(blueTG), "LoadBalancer", lbDim),
			cwQuery("green", "RequestCount", "Sum", 60, "TargetGroup", dim(greenTG), "LoadBalancer", lbDim),
			cwQuery("all", "RequestCount", "Sum", 60, "LoadBalancer", lbDim),
			cwQuery("errors", "HTTPCode_Target_5XX_Count", "Sum", 60, "LoadBalancer", lbDim),
		}, ", ") + "]")}, window...)...)
		sums = map[string]float64{}
		for _, r := range md.MetricDataResults {
			for _, v := range r.Values {
				sums[r.Id] += v
			}
		}
		if sums["all"] == n || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if sums["blue"] != float64(got["blue"]) || sums["green"] != float64(got["green"]) || sums["all"] != n || sums["errors"] != 0 {
		t.Fatalf("get-metric-data %v, clients saw %v", sums, got)
	}

	// 0/100: every request sent after modify-listener answers goes to green.
	aws.must(nil, "elbv2", "modify-listener", "--listener-arn", listener, "--default-actions", aws.batchFile(elbForward(0, blueTG, 0, greenTG, 100)))
	for i := range 200 {
		if name := albGet(t, client, addr, "/"); !strings.HasPrefix(name, "green") {
			t.Fatalf("request %d after modify-listener 0/100 went to %s", i, name)
		}
	}
	if h := aws.targetHealth(blueTG); h[blue.port] != "healthy" {
		t.Fatalf("blue at weight 0: %v, want healthy (still in use, still checked)", h)
	}

	// Drain: deregister the green target that holds a request.
	slow := make(chan string, 1)
	go func() {
		resp, err := client.Get("http://" + addr + "/slow")
		if err != nil {
			slow <- err.Error()
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		slow <- fmt.Sprintf("%d %s", resp.StatusCode, body)
	}()
	busy, other := greenA, greenB
	select {
	case name := <-arrived:
		if name == greenB.name {
			busy, other = greenB, greenA
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the slow request reached no target")
	}
	aws.must(nil, "elbv2", "deregister-targets", "--target-group-arn", greenTG, "--targets", busy.arg())
	deregistered := time.Now()
	if h := aws.targetHealth(greenTG); h[busy.port] != "draining" || h[other.port] != "healthy" {
		t.Fatalf("green after deregistering %s: %v", busy.name, h)
	}
	for i := range 20 {
		if name := albGet(t, client, addr, "/"); name != other.name {
			t.Fatalf("request %d went to %s, which is draining", i, name)
		}
	}
	close(release)
	if res := <-slow; res != "200 "+busy.name {
		t.Fatalf("the request in flight on the draining target: %q, want 200 %s", res, busy.name)
	}
	aws.waitTargetHealth(greenTG, map[string]string{other.port: "healthy"})
	t.Logf("drained target gone %v after deregister-targets answered", time.Since(deregistered).Round(time.Millisecond))
}
