package render

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestEngineRendersNoText: the text a person reads lives here, not in the engine (issue
// 27): package cutover declares none of the renderers, and draws nothing on a terminal.
// A renderer added back to the engine would be a second copy of some text, free to drift
// from the one the CLI prints.
func TestEngineRendersNoText(t *testing.T) {
	files, err := filepath.Glob("../*.go")
	if err != nil {
		t.Fatal(err)
	}
	// Receiver type ("" for a function) → names that render text in the engine.
	banned := map[string][]string{
		"":             {"NewProgress", "LogWriter", "MultiProgress", "describe", "controlLine", "gateMark", "writeHead", "writeGates"},
		"Preview":      {"WriteText", "WriteSummary"},
		"Report":       {"WriteText"},
		"Status":       {"WriteText", "queuedWhen"},
		"ResumeReport": {"String"},
	}
	fset := token.NewFileSet()
	checked := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			recv := ""
			if fn.Recv != nil && len(fn.Recv.List) == 1 {
				typ := fn.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					recv = id.Name
				}
			}
			for _, name := range banned[recv] {
				if fn.Name.Name == name {
					t.Errorf("%s: the engine declares %s%s: text rendering belongs in package render", fset.Position(fn.Pos()), recvPrefix(recv), name)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && strings.Contains(lit.Value, `\x1b[`) {
				t.Errorf("%s: the engine writes a terminal escape %s: drawing on the terminal belongs in package render", fset.Position(lit.Pos()), lit.Value)
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no engine files found under ..: the test checked nothing")
	}
}

func recvPrefix(recv string) string {
	if recv == "" {
		return ""
	}
	return "(" + recv + ")."
}
