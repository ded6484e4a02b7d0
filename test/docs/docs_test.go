// Package docs checks that the repository's documents stay true to the code: every test
// they cite exists, every relative link resolves, and nothing points outside the
// repository.
package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the repository's top directory, two levels above this package.
const root = "../.."

// skipDirs are not the repository's own text: build output, caches, git.
var skipDirs = []string{".git", "bin", "artifacts", "node_modules", "testdata"}

// walkFiles calls fn with every regular file below root whose name ends in one of exts.
func walkFiles(t *testing.T, exts []string, fn func(path string, body string)) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && slices.Contains(skipDirs, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !slices.ContainsFunc(exts, func(e string) bool { return strings.HasSuffix(p, e) }) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fn(p, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNothingPointsOutsideTheRepository: a reader of the repository has only the
// repository; a document outside it (a design note beside the checkout) is a dead end.
func TestNothingPointsOutsideTheRepository(t *testing.T) {
	outside := regexp.MustCompile(`\.\./shared/|\bDESIGN\.md\b`)
	walkFiles(t, []string{".go", ".md", ".sh", ".yaml", ".yml", "Makefile", ".tpl", ".txt"}, func(p, body string) {
		if strings.HasSuffix(p, filepath.Join("test", "docs", "docs_test.go")) {
			return
		}
		for i, line := range strings.Split(body, "\n") {
			if outside.MatchString(line) {
				t.Errorf("%s:%d points outside the repository: %s", p, i+1, strings.TrimSpace(line))
			}
		}
	})
}

// citingDocs lists the documents whose citations are checked: README.md, BENCHMARKS.md
// and every guide under docs/ (a guide added later is checked without being listed here).
func citingDocs(t *testing.T) []string {
	t.Helper()
	docs := []string{"README.md", "BENCHMARKS.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			docs = append(docs, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("list docs/: %v", err)
	}
	return docs
}

// TestCitedTestsExist: docs/architecture.md names, for each safety rule, the tests that
// prove it; a test renamed or deleted must take its citation with it.
func TestCitedTestsExist(t *testing.T) {
	defined := map[string]bool{}
	fn := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]+)\(`)
	walkFiles(t, []string{"_test.go"}, func(_, body string) {
		for _, m := range fn.FindAllStringSubmatch(body, -1) {
			defined[m[1]] = true
		}
	})
	cited := regexp.MustCompile(`\b((?:Test|Fuzz|Benchmark)[A-Z][A-Za-z0-9_]*)\b`)
	for _, doc := range citingDocs(t) {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range cited.FindAllStringSubmatch(line, -1) {
				if !defined[m[1]] {
					t.Errorf("%s:%d cites %s, which no _test.go defines", doc, i+1, m[1])
				}
			}
		}
	}
}

// TestRelativeLinksResolve: a link from one document to another file of the repository
// (not a URL, not an anchor alone) names a file that exists.
func TestRelativeLinksResolve(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	walkFiles(t, []string{".md"}, func(p, body string) {
		for i, line := range strings.Split(body, "\n") {
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target, _, _ := strings.Cut(m[1], "#")
				if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				if _, err := os.Stat(filepath.Join(filepath.Dir(p), target)); err != nil {
					t.Errorf("%s:%d links %s, which does not exist", p, i+1, m[1])
				}
			}
		}
	})
}

// TestCitedPathsExist: a file or package the documents name in backquotes
// (`internal/cutover/lever/authority`, `cmd/crossfade/main.go:20`) is there: a path left
// behind by a move sends a reader to nothing.
func TestCitedPathsExist(t *testing.T) {
	path := regexp.MustCompile("`((?:internal|cmd|test|bench|scripts|deploy|charts?)/[A-Za-z0-9_./-]*)(?::[0-9-]+)?`")
	for _, doc := range citingDocs(t) {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range path.FindAllStringSubmatch(line, -1) {
				if strings.Contains(m[1], "...") {
					continue
				}
				if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
					t.Errorf("%s:%d names %s, which does not exist", doc, i+1, m[1])
				}
			}
		}
	}
}

// TestReadmeIsTheFrontPage: README.md is the front page, short enough to read in one sitting
// (at most 250 lines), and every guide under docs/ is reachable from it; the rest lives in
// docs/, organised by what a user is doing.
func TestReadmeIsTheFrontPage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if n := strings.Count(readme, "\n"); n > 250 {
		t.Errorf("README.md has %d lines, want at most 250: move sections into docs/", n)
	}
	for _, doc := range citingDocs(t) {
		if !strings.HasPrefix(doc, "docs"+string(filepath.Separator)) {
			continue
		}
		if !strings.Contains(readme, "]("+filepath.ToSlash(doc)) {
			t.Errorf("README.md does not link %s: a guide no one can find from the front page", doc)
		}
	}
}

// TestHelmSetKeysAreQuoted: a `--set` key with an escaped dot (eks\.amazonaws\.com) loses its
// backslashes in the shell unless it is quoted, and helm then refuses the command as pasted
// ("serviceAccount.annotations.eks: Invalid type").
func TestHelmSetKeysAreQuoted(t *testing.T) {
	unquoted := regexp.MustCompile(`--set(?:-string)?[ =][^"' ]*\\\.`)
	walkFiles(t, []string{".md"}, func(p, body string) {
		for i, line := range strings.Split(body, "\n") {
			if unquoted.MatchString(line) {
				t.Errorf("%s:%d has a --set key with an unquoted \\. (the shell drops the backslash): %s", p, i+1, strings.TrimSpace(line))
			}
		}
	})
}
