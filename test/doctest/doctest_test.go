package doctest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/child"
	"github.com/crossfade-io/crossfade/internal/controllertest"
	"github.com/crossfade-io/crossfade/internal/testenv"
)

// root is the repository's top directory, two levels above this package.
const root = "../.."

// pages are the guides whose shell blocks run as written: one subtest each, named by
// the path under docs/ without .md (TestDocs/levers/alb).
var pages = []string{
	"docs/getting-started.md",
	"docs/levers/route53.md",
	"docs/levers/alb.md",
	"docs/levers/cloudmap.md",
}

// copied are the repository's directories a page may use as a checkout has them
// (`cp -r examples/blue .`). They are copied, not linked: a page's `sed -i` must never
// reach the checkout.
var copied = []string{"examples"}

// Bounds on waiting, against a hang only: a page's `cutover run` holds each step for its
// TTL, minutes in all, and a started sandbox answers within a second.
const (
	blockTimeout = 8 * time.Minute
	readyTimeout = time.Minute
)

// TestMain removes the crossfade binary the pages ran once every test has ended.
func TestMain(m *testing.M) { controllertest.Main(m) }

// TestDocs runs every shell block of each guide in pages as the convention in page.go
// says, against the sandbox the guide starts, and fails on a non-zero exit or output
// that does not match what the guide shows. With -short it checks the marking alone.
func TestDocs(t *testing.T) {
	for _, path := range pages {
		name := strings.TrimSuffix(strings.TrimPrefix(path, "docs/"), ".md")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(root, path))
			if err != nil {
				t.Fatalf("read the guide %s: %v", path, err)
			}
			p, err := Parse(path, string(src))
			if err != nil {
				t.Fatal(err)
			}
			if errs := Check(p); len(errs) > 0 {
				for _, err := range errs {
					t.Error(err)
				}
				t.FailNow()
			}
			if testing.Short() {
				t.Logf("-short: %d fenced blocks checked, none run", len(p.Blocks))
				return
			}
			// Each page has its own ports and directory: they run side by side.
			t.Parallel()
			needTools(t, p)
			r := newRunner(t, p, controllertest.Binary(t), copied)
			if err := r.run(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// tools are the programs a page may call, each with the Debian package that provides
// it; a page that names one and runs on a machine without it skips (fails under CI=true).
var tools = []struct {
	re       *regexp.Regexp
	name     string // a path, or a name looked up on PATH
	debian   string
	absolute bool
}{
	{regexp.MustCompile(`/usr/bin/aws\b`), "/usr/bin/aws", "awscli", true},
	{regexp.MustCompile(`(^|[\s;|&(])aws\s`), "aws", "awscli", false},
	{regexp.MustCompile(`\bdig\b`), "dig", "bind9-dnsutils", false},
	{regexp.MustCompile(`\bcurl\b`), "curl", "curl", false},
	{regexp.MustCompile(`\bjq\b`), "jq", "jq", false},
	{regexp.MustCompile(`\bpython3\b`), "python3", "python3", false},
}

// needTools stops t (testenv.Missing) unless bash and every tool p's run blocks name are
// installed.
func needTools(t *testing.T, p *Page) {
	t.Helper()
	testenv.LookPath(t, "bash", "bash")
	var text strings.Builder
	for _, b := range p.Blocks {
		if b.Kind == Run || b.Kind == Background {
			text.WriteString(b.Text)
		}
	}
	for _, tool := range tools {
		if !tool.re.MatchString(text.String()) {
			continue
		}
		if tool.absolute {
			testenv.File(t, tool.name, "install the Debian package "+tool.debian)
		} else {
			testenv.LookPath(t, tool.name, tool.debian)
		}
	}
}

// runner runs one page's blocks in order, in one directory, as one terminal would.
type runner struct {
	t    testing.TB
	page *Page
	// work is the page's directory: bin/crossfade, the copied directories, whatever
	// the page makes.
	work string
	// meta holds the harness's own files: each block's script and log, and the
	// exports and working directory carried from one block to the next.
	meta  string
	env   []string
	ports map[int]int
	bg    []*child.Process
	// block and ready bound the wait for a block to end and for a background block to
	// be ready (blockTimeout, readyTimeout; shorter in the harness's own tests).
	block, ready time.Duration
	// watch is the process whose end kills every block's process group: this test
	// process, which may die without running its cleanups (go test -timeout panics).
	watch int
}

// newRunner prepares p's directory (bin/crossfade linked to crossfade unless it is "",
// the repository's directories in copy copied), picks free ports for the documented
// ones, and kills every process the page starts when t ends, passed or failed.
func newRunner(t testing.TB, p *Page, crossfade string, copy []string) *runner {
	t.Helper()
	r := &runner{t: t, page: p, work: t.TempDir(), meta: t.TempDir(), block: blockTimeout, ready: readyTimeout, watch: os.Getpid()}
	t.Cleanup(r.stop)
	if crossfade != "" {
		if err := os.Mkdir(filepath.Join(r.work, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(crossfade, filepath.Join(r.work, "bin", "crossfade")); err != nil {
			t.Fatalf("bin/crossfade: %v", err)
		}
	}
	for _, dir := range copy {
		if err := os.CopyFS(filepath.Join(r.work, dir), os.DirFS(filepath.Join(root, dir))); err != nil {
			t.Fatalf("copy the repository's %s/ into the page's directory: %v", dir, err)
		}
	}
	r.ports = freePorts(t, DocumentedPorts)
	r.env = r.environment(t)
	if err := os.WriteFile(filepath.Join(r.meta, "cwd"), []byte(r.work), 0o644); err != nil {
		t.Fatal(err)
	}
	return r
}

// stop kills every background process of the page with its process group, and reaps it.
func (r *runner) stop() {
	for _, p := range r.bg {
		if err := p.Kill(); err != nil {
			r.t.Errorf("%s: %v", p.Name(), err)
		}
	}
}

// freePorts maps each of ports to a loopback port free for both TCP and UDP now (a DNS
// server serves both), all distinct: they are held until all are chosen.
func freePorts(t testing.TB, ports []int) map[int]int {
	t.Helper()
	out := map[int]int{}
	var held []interface{ Close() error }
	defer func() {
		for _, c := range held {
			_ = c.Close()
		}
	}()
	for _, p := range ports {
		for attempt := 0; ; attempt++ {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatalf("a free port for %d: %v", p, err)
			}
			held = append(held, l)
			port := l.Addr().(*net.TCPAddr).Port
			u, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(port))
			if err != nil {
				if attempt == 20 {
					t.Fatalf("a free port for %d: no TCP port free for UDP too: %v", p, err)
				}
				continue
			}
			held = append(held, u)
			out[p] = port
			break
		}
	}
	return out
}

// environment is what every block starts with: the harness's environment without AWS,
// XDG (a developer's state directory would receive the page's journals) or crossfade
// settings or proxies of its own, HOME in the page's meta directory, PATH starting
// with bin/, credentials for the sandbox unless the page exports its own, and every
// proxy variable pointing at a closed loopback port, so that a request to anything but
// loopback (a command missing its --endpoint-url) fails at once instead of leaving the
// machine.
func (r *runner) environment(t testing.TB) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "AWS_"), strings.HasPrefix(k, "XDG_"), strings.HasPrefix(k, "CROSSFADE_"),
			strings.HasSuffix(strings.ToLower(k), "_proxy"),
			k == "HOME", k == "PATH", k == "PWD", k == "OLDPWD":
			continue
		}
		env = append(env, kv)
	}
	home := filepath.Join(r.meta, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	closed := freePorts(t, []int{0})[0]
	proxy := "http://127.0.0.1:" + strconv.Itoa(closed)
	env = append(env,
		"HOME="+home,
		"PATH="+filepath.Join(r.work, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"AWS_CONFIG_FILE="+filepath.Join(home, "no-aws-config"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(home, "no-aws-credentials"),
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_PAGER=",
		"http_proxy="+proxy, "https_proxy="+proxy, "HTTP_PROXY="+proxy, "HTTPS_PROXY="+proxy, "ALL_PROXY="+proxy,
		"no_proxy=127.0.0.1,localhost,::1", "NO_PROXY=127.0.0.1,localhost,::1",
	)
	var text strings.Builder
	for _, b := range r.page.Blocks {
		text.WriteString(b.Text)
	}
	// A page that assigns one (export AWS_ACCESS_KEY_ID=…, as a user would) keeps its own.
	for _, kv := range []string{"AWS_ACCESS_KEY_ID=doctest", "AWS_SECRET_ACCESS_KEY=doctest", "AWS_DEFAULT_REGION=us-east-1"} {
		if k, _, _ := strings.Cut(kv, "="); !regexp.MustCompile(`\b` + k + `=`).MatchString(text.String()) {
			env = append(env, kv)
		}
	}
	return env
}

// run runs the page's blocks in order and returns the first failure: a block that
// exits non-zero or outlives blockTimeout, output that does not match the block after
// it, a background process that is not ready or ends before the page does.
func (r *runner) run() error {
	for i, b := range r.page.Blocks {
		if b.Kind != Run && b.Kind != Background {
			continue
		}
		var want *Block
		if i+1 < len(r.page.Blocks) && r.page.Blocks[i+1].Kind == Output {
			want = &r.page.Blocks[i+1]
		}
		var err error
		if b.Kind == Background {
			err = r.background(i, b, want)
		} else {
			err = r.foreground(i, b, want)
		}
		if err != nil {
			return fmt.Errorf("%w%s", err, r.backgroundLogs())
		}
	}
	for _, p := range r.bg {
		if p.Exited() {
			return fmt.Errorf("%w%s", p.ExitError(), r.backgroundLogs())
		}
	}
	return nil
}

// where names block b for a failure: the page, the line of its fence, its marking.
func (r *runner) where(b Block) string {
	return fmt.Sprintf("%s:%d: ```%s", r.page.Path, b.Line, b.Info)
}

// script writes block i's script: the exports and directory left by the blocks before
// it, then its text with the documented ports moved; a foreground block saves its own
// exports and directory on exit for the next one.
func (r *runner) script(i int, b Block, save bool) (string, error) {
	env, cwd := filepath.Join(r.meta, "env"), filepath.Join(r.meta, "cwd")
	var s strings.Builder
	fmt.Fprintf(&s, "# %s:%d\n", r.page.Path, b.Line)
	fmt.Fprintf(&s, "if [ -f %q ]; then . %q; fi\n", env, env)
	fmt.Fprintf(&s, "cd \"$(cat %q)\"\n", cwd)
	// The kernel kills bash if the test process dies (child's Pdeathsig), but not what
	// bash started (the sandbox): this watcher, in the block's process group, kills the
	// whole group then. Disowned, so that the page's own `wait` does not wait for it.
	fmt.Fprintf(&s, "( while kill -0 %d 2>/dev/null; do sleep 1; done; kill -KILL 0 ) >/dev/null 2>&1 &\ndisown\n", r.watch)
	if save {
		fmt.Fprintf(&s, "trap 'export -p > %q; pwd > %q' EXIT\n", env, cwd)
	}
	s.WriteString(RewritePorts(b.Text, r.ports))
	path := filepath.Join(r.meta, fmt.Sprintf("block-%02d.sh", i))
	return path, os.WriteFile(path, []byte(s.String()), 0o644)
}

// start starts block i's script under bash -euo pipefail with no standard input, in its
// own process group, its output in a log beside the script.
func (r *runner) start(i int, b Block, save bool) (*child.Process, error) {
	path, err := r.script(i, b, save)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.where(b), err)
	}
	cmd := exec.Command("bash", "-euo", "pipefail", path)
	cmd.Dir = r.work
	cmd.Env = r.env
	p, err := child.StartWith(cmd, strings.TrimSuffix(path, ".sh")+".log", child.Options{Name: fmt.Sprintf("%s:%d", r.page.Path, b.Line)})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.where(b), err)
	}
	return p, nil
}

// foreground runs block i to its end and checks its exit status and its output.
func (r *runner) foreground(i int, b Block, want *Block) error {
	p, err := r.start(i, b, true)
	if err != nil {
		return err
	}
	timeout := time.NewTimer(r.block)
	defer timeout.Stop()
	select {
	case <-p.Done():
		// Whatever the block left running in its group goes with it.
		_ = p.Stop(0)
	case <-timeout.C:
		_ = p.Kill()
		return fmt.Errorf("%s: still running after %s: killed\n%s", r.where(b), r.block, r.shown(b, p))
	}
	if err := p.Err(); err != nil {
		return fmt.Errorf("%s: %v\n%s", r.where(b), err, r.shown(b, p))
	}
	out, err := os.ReadFile(p.LogPath)
	if err != nil {
		return err
	}
	// Seen with go test -v: what each block printed, when a page's output is to be shown.
	r.t.Logf("%s: exit status 0, output:\n%s", r.where(b), out)
	if want == nil {
		return nil
	}
	if miss := Match(RewritePorts(want.Text, r.ports), string(out)); miss != "" {
		return fmt.Errorf("%s: the output does not match the ```text output block at line %d: %s\n--- expected ---\n%s%s",
			r.where(b), want.Line, miss, RewritePorts(want.Text, r.ports), r.shown(b, p))
	}
	return nil
}

// background starts block i and waits until it is ready: every documented port its
// text names accepts connections, and its output shows what want shows.
func (r *runner) background(i int, b Block, want *Block) error {
	p, err := r.start(i, b, false)
	if err != nil {
		return err
	}
	r.bg = append(r.bg, p)
	deadline := time.Now().Add(r.ready)
	ready := func() bool {
		for _, port := range PortsIn(b.Text) {
			c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(r.ports[port]), time.Second)
			if err != nil {
				return false
			}
			_ = c.Close()
		}
		if want != nil {
			out, _ := os.ReadFile(p.LogPath)
			if Match(RewritePorts(want.Text, r.ports), string(out)) != "" {
				return false
			}
		}
		return true
	}
	for !ready() {
		select {
		case <-p.Done():
			return fmt.Errorf("%s: ended before it was ready: %v\n%s", r.where(b), p.Err(), r.shown(b, p))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			msg := "its ports " + fmt.Sprint(PortsIn(b.Text)) + " do not accept connections"
			if want != nil {
				out, _ := os.ReadFile(p.LogPath)
				msg += " or " + Match(RewritePorts(want.Text, r.ports), string(out))
			}
			return fmt.Errorf("%s: not ready after %s: %s\n%s", r.where(b), r.ready, msg, r.shown(b, p))
		}
	}
	return nil
}

// shown is what a failure shows of block b: the commands as run (ports moved) and
// their output.
func (r *runner) shown(b Block, p *child.Process) string {
	out, err := os.ReadFile(p.LogPath)
	if err != nil {
		out = []byte(err.Error())
	}
	return fmt.Sprintf("--- ran (ports %v) ---\n%s--- output ---\n%s", r.ports, RewritePorts(b.Text, r.ports), out)
}

// backgroundLogs is the end of every background process's log, for a failure: a
// block's error often shows only that the sandbox said no.
func (r *runner) backgroundLogs() string {
	var s strings.Builder
	for _, p := range r.bg {
		state := "running"
		if p.Exited() {
			state = "exited: " + fmt.Sprint(p.Err())
		}
		fmt.Fprintf(&s, "\n--- background %s (%s), last lines ---\n%s", p.Name(), state, p.Tail(40))
	}
	return s.String()
}
