// Package image_test proves the container image: the Dockerfile's shape (under -short, as
// text), the binary it ships is static (built as `make image` builds it), and `make image`
// builds, with Debian's buildah and no registry, an image whose entrypoint runs `crossfade
// --help` as a non-root user, holding nothing but the binary and the CA bundle.
package image_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/testenv"
)

// root is the checkout, where the Dockerfile and Makefile are.
const root = "../.."

// Paths inside the image.
const (
	entrypoint = "/crossfade"
	caBundle   = "/etc/ssl/certs/ca-certificates.crt"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd, args string
}

// parseDockerfile reads the instructions of a Dockerfile: comments and blank lines
// dropped, lines ending in a backslash joined with the next.
func parseDockerfile(t *testing.T, path string) []instruction {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []instruction
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(cont + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)})
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// nonRootUser reports whether a USER value ("uid" or "uid:gid") names a numeric,
// non-zero uid and gid: Kubernetes' runAsNonRoot can only verify a numeric uid.
func nonRootUser(user string) error {
	uid, gid, hasGID := strings.Cut(user, ":")
	ids := []string{uid}
	if hasGID {
		ids = append(ids, gid)
	}
	for _, id := range ids {
		n, err := strconv.Atoi(id)
		switch {
		case err != nil:
			return fmt.Errorf("user %q: %q is not numeric", user, id)
		case n == 0:
			return fmt.Errorf("user %q: id 0 is root", user)
		}
	}
	return nil
}

func TestNonRootUser(t *testing.T) {
	for _, c := range []struct {
		user string
		ok   bool
	}{
		{"65532:65532", true},
		{"65532", true},
		{"0", false},
		{"65532:0", false},
		{"nonroot", false},
		{"", false},
	} {
		if err := nonRootUser(c.user); (err == nil) != c.ok {
			t.Errorf("nonRootUser(%q) = %v, want ok=%v", c.user, err, c.ok)
		}
	}
}

// TestDockerfile checks the Dockerfile as text: one stage, FROM scratch; nothing run at
// build time (there is no shell to run it); only files `make image` stages copied in, the
// binary to the entrypoint and the CA bundle where Go looks for it; a numeric non-root
// USER; an exec-form ENTRYPOINT, so that no shell is needed to start it.
func TestDockerfile(t *testing.T) {
	ins := parseDockerfile(t, filepath.Join(root, "Dockerfile"))
	var from, user, entry []string
	copies := map[string]string{} // destination -> source
	for _, in := range ins {
		switch in.cmd {
		case "FROM":
			from = append(from, in.args)
		case "USER":
			user = append(user, in.args)
		case "ENTRYPOINT":
			entry = append(entry, in.args)
		case "COPY":
			f := strings.Fields(in.args)
			if len(f) != 2 || strings.HasPrefix(f[0], "--") {
				t.Errorf("COPY %s: want one source and one destination, no flags", in.args)
				continue
			}
			copies[f[1]] = f[0]
		case "RUN", "ADD", "SHELL", "ONBUILD", "VOLUME":
			t.Errorf("%s %s: the image is FROM scratch with no shell; %s has no place in it", in.cmd, in.args, in.cmd)
		case "ARG", "LABEL", "EXPOSE", "ENV", "WORKDIR", "STOPSIGNAL":
		default:
			t.Errorf("unexpected instruction %s %s", in.cmd, in.args)
		}
	}
	if !slices.Equal(from, []string{"scratch"}) {
		t.Errorf("FROM %q, want exactly one stage FROM scratch (a registry base cannot be pulled here)", from)
	}
	if len(user) != 1 {
		t.Errorf("USER %q, want exactly one", user)
	} else if err := nonRootUser(user[0]); err != nil {
		t.Errorf("USER: %v", err)
	}
	var ep []string
	if len(entry) != 1 || json.Unmarshal([]byte(entry[0]), &ep) != nil || !slices.Equal(ep, []string{entrypoint}) {
		t.Errorf("ENTRYPOINT %q, want exactly one, exec form [%q]", entry, entrypoint)
	}
	want := map[string]*regexp.Regexp{
		entrypoint: regexp.MustCompile(`^bin/image/crossfade-linux-\$\{TARGETARCH\}$`),
		caBundle:   regexp.MustCompile(`^bin/image/ca-certificates\.crt$`),
	}
	for dst, src := range copies {
		if re, ok := want[dst]; !ok || !re.MatchString(src) {
			t.Errorf("COPY %s %s: want only %v", src, dst, want)
		}
	}
	if len(copies) != len(want) {
		t.Errorf("COPY instructions %v, want %v", copies, want)
	}
}

// TestMakeImageRecipe checks, without running it, that `make image` stages what the
// Dockerfile copies, built static, and builds with buildah under chroot isolation.
func TestMakeImageRecipe(t *testing.T) {
	testenv.LookPath(t, "make", "make")
	out, err := makeCmd("-n", "image", "IMAGE_ARCH=amd64", "IMAGE_TAG=recipe", "COMMIT=c0ffee").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n image: %v\n%s", err, out)
	}
	for _, want := range []string{
		// The image's `crossfade version` names its tag and commit.
		`CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags "-s -w -X github.com/crossfade-io/crossfade/internal/cli.version=recipe -X github.com/crossfade-io/crossfade/internal/cli.commit=c0ffee" -o bin/image/crossfade-linux-amd64 ./cmd/crossfade`,
		"bin/image/ca-certificates.crt",
		"bud --isolation chroot",
		"--build-arg TARGETARCH=amd64",
		"-t crossfade:recipe .",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("make -n image lacks %q:\n%s", want, out)
		}
	}
}

// makeCmd is `make ARGS` in the checkout, without the make variables of a `make test`
// that may be running this test (its jobserver and flags are not this make's).
func makeCmd(args ...string) *exec.Cmd {
	cmd := exec.Command("make", append([]string{"--no-print-directory"}, args...)...)
	cmd.Dir = root
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return k == "MAKEFLAGS" || k == "MFLAGS" || k == "MAKELEVEL"
	})
	return cmd
}

// buildStatic builds cmd/crossfade as `make image` does (TestMakeImageRecipe pins the
// flags) into dir.
func buildStatic(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "crossfade")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./cmd/crossfade")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// requireStatic fails the test unless path is a statically linked ELF executable: no
// program interpreter (dynamic loader) and no shared libraries needed, and ldd agrees.
func requireStatic(t *testing.T, path string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s asks for a program interpreter: dynamically linked", path)
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v (%v)", path, libs, err)
	}
	if _, err := exec.LookPath("ldd"); err != nil {
		return
	}
	// ldd exits 1 for a static binary; its words are the check.
	out, _ := exec.Command("ldd", path).CombinedOutput()
	if !strings.Contains(string(out), "not a dynamic executable") {
		t.Errorf("ldd %s: %s, want \"not a dynamic executable\"", path, out)
	}
}

// TestStaticBinary: the binary `make image` ships is static, so it runs in an image with
// no libc and no loader. It needs no container tools, so it runs wherever Go does.
func TestStaticBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	requireStatic(t, buildStatic(t, t.TempDir()))
}

// TestImage runs `make image` for real and looks inside the image it built: its config
// (entrypoint, non-root user), its files (the binary and the CA bundle, nothing else: no
// shell), the binary static, the bundle parseable, and the entrypoint running `--help`
// both by `buildah run` and chrooted as the image's user. A missing buildah, or not being
// root, fails the test under CI=true and skips it otherwise (testenv.Missing).
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a container image")
	}
	buildah := testenv.LookPath(t, "buildah", "buildah")
	testenv.Root(t, "buildah here runs as root (rootless needs subordinate ids set up) and chroot isolation needs root: run `make test` as root (CI does)")

	name, tag := "localhost/crossfade-imagetest", fmt.Sprintf("t%d", time.Now().UnixNano())
	ref := name + ":" + tag
	began := time.Now()
	out, err := makeCmd("image", "IMAGE_NAME="+name, "IMAGE_TAG="+tag, "BUILDAH="+buildah).CombinedOutput()
	if err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	t.Cleanup(func() { run(t, buildah, "rmi", ref) })
	t.Logf("make image built %s in %s", ref, time.Since(began).Round(100*time.Millisecond))

	// The image's config.
	var img struct {
		OCIv1 struct {
			Architecture, OS string
			Config           struct {
				User       string
				Entrypoint []string
				Cmd        []string
			}
		}
	}
	if err := json.Unmarshal([]byte(run(t, buildah, "inspect", "--type", "image", ref)), &img); err != nil {
		t.Fatalf("buildah inspect: %v", err)
	}
	cfg := img.OCIv1.Config
	if err := nonRootUser(cfg.User); err != nil {
		t.Errorf("image config: %v", err)
	}
	if !slices.Equal(cfg.Entrypoint, []string{entrypoint}) {
		t.Errorf("image entrypoint %q, want [%q]", cfg.Entrypoint, entrypoint)
	}
	if img.OCIv1.OS != "linux" {
		t.Errorf("image OS %q, want linux", img.OCIv1.OS)
	}

	// Its files.
	ctr := strings.TrimSpace(run(t, buildah, "from", "--pull-never", ref))
	t.Cleanup(func() { run(t, buildah, "rm", ctr) })
	mnt := strings.TrimSpace(run(t, buildah, "mount", ctr))
	var files []string
	var size int64
	err = filepath.WalkDir(mnt, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		size += fi.Size()
		files = append(files, strings.TrimPrefix(path, mnt))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	if want := []string{entrypoint, caBundle}; !slices.Equal(files, []string{entrypoint, caBundle}) {
		t.Errorf("image files %q, want only %q (no shell, nothing else)", files, want)
	}
	t.Logf("image content: %d files, %.1f MB", len(files), float64(size)/1e6)
	requireStatic(t, filepath.Join(mnt, entrypoint))
	pem, err := os.ReadFile(filepath.Join(mnt, caBundle))
	if err != nil {
		t.Fatal(err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pem) {
		t.Errorf("%s in the image holds no PEM certificate", caBundle)
	}

	// The entrypoint runs: through buildah (its own chroot isolation: no OCI runtime or
	// cgroup setup needed), and chrooted into the image's root as the image's user.
	help := func(how string, out []byte, err error) {
		t.Helper()
		if err != nil || !strings.Contains(string(out), "Usage:\n  crossfade [command]") {
			t.Errorf("%s: %v\n%s", how, err, out)
		}
	}
	args := append(slices.Clone(cfg.Entrypoint), "--help")
	out, err = combined(buildah, append([]string{"run", "--isolation", "chroot", ctr, "--"}, args...)...)
	help("buildah run "+strings.Join(args, " "), out, err)
	out, err = combined("chroot", append([]string{"--userspec=" + cfg.User, mnt}, args...)...)
	help("chroot --userspec="+cfg.User+" "+strings.Join(args, " "), out, err)
	if _, err := os.Stat(filepath.Join(mnt, "bin", "sh")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("/bin/sh in the image: %v", err)
	}
}

// combined runs a command, bounded by a minute, and returns its stdout and stderr.
func combined(name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return exec.CommandContext(ctx, name, args...).CombinedOutput()
}

// run runs a command and returns its stdout, failing the test on an error.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}
