package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/testenv"
)

func TestNginxConf(t *testing.T) {
	ups := []upstream{{"127.0.0.1:1001", "blue-1"}, {"127.0.0.1:1002", "blue-2"}, {"127.0.0.1:1003", "green-1"}, {"127.0.0.1:1004", "green-2"}}
	base := func(dir string) nginxConf {
		return nginxConf{dir: dir, listen: "127.0.0.1:2000", upstreams: ups, workers: "auto", keepalive: 64}
	}
	for _, tc := range []struct {
		name    string
		edit    func(*nginxConf)
		want    []string // lines the config must have (trimmed)
		notWant []string
		wantErr string
	}{
		{
			name: "defaults",
			edit: func(*nginxConf) {},
			want: []string{
				"daemon off;", "worker_processes auto;", "pid DIR/nginx.pid;", "error_log DIR/error.log warn;",
				"access_log off;", "proxy_temp_path DIR/tmp/proxy;", "client_body_temp_path DIR/tmp/client_body;",
				"server 127.0.0.1:1001 weight=1;  # blue-1", "server 127.0.0.1:1004 weight=1;  # green-2",
				"keepalive 64;", "keepalive_requests 1000000000;", "listen 127.0.0.1:2000;",
				"proxy_pass http://backends;", "proxy_http_version 1.1;", `proxy_set_header Connection "";`,
				"proxy_set_header Host $http_host;", "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;",
			},
			notWant: []string{"access_log DIR/access.log combined buffer=64k flush=1s;"},
		},
		{
			name:    "access log and two workers",
			edit:    func(c *nginxConf) { c.accessLog, c.workers, c.keepalive = true, "2", 16 },
			want:    []string{"access_log DIR/access.log combined buffer=64k flush=1s;", "worker_processes 2;", "keepalive 16;"},
			notWant: []string{"access_log off;", "worker_processes auto;"},
		},
		{
			name:    "no upstreams",
			edit:    func(c *nginxConf) { c.upstreams = nil },
			wantErr: "upstreams",
		},
		{
			name:    "no keepalive",
			edit:    func(c *nginxConf) { c.keepalive = 0 },
			wantErr: "keepalive",
		},
		{
			name:    "a space in the dir",
			edit:    func(c *nginxConf) { c.dir += "/a b" },
			wantErr: "no spaces",
		},
		{
			name:    "nginx syntax in a name",
			edit:    func(c *nginxConf) { c.upstreams = []upstream{{"127.0.0.1:1", "x;}"}} },
			wantErr: "no spaces, quotes or nginx syntax",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c := base(dir)
			tc.edit(&c)
			text, err := c.render()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			lines := map[string]bool{}
			for l := range strings.SplitSeq(text, "\n") {
				lines[strings.TrimSpace(l)] = true
			}
			for _, w := range tc.want {
				if w = strings.ReplaceAll(w, "DIR", dir); !lines[w] {
					t.Errorf("config lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tc.notWant {
				if w = strings.ReplaceAll(w, "DIR", dir); lines[w] {
					t.Errorf("config has %q:\n%s", w, text)
				}
			}
			if strings.Contains(text, "/var/") {
				t.Errorf("config points outside its dir:\n%s", text)
			}
			// The real judge of the syntax, where nginx is installed: nginx -t on the file,
			// with the same command line the benchmark runs it with.
			bin := testenv.LookPath(t, "nginx", "nginx")
			if err := writeNginxConf(c); err != nil {
				t.Fatal(err)
			}
			args := append(nginxArgs(bin, dir), "-t")
			if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s\n%s", strings.Join(args, " "), err, out, text)
			}
		})
	}
}
