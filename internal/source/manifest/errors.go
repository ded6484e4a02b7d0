package manifest

import (
	"fmt"
	"strings"
)

// DocumentError is one document that could not be read.
type DocumentError struct {
	// File is the file's path, or the name given to Decode.
	File string
	// Index is the document's position in the file, from 1; Item is its position in a
	// List, from 1, or 0 when the document is not a List item.
	Index, Item int
	// Kind, Namespace and Name identify the object when they could be read.
	Kind, Namespace, Name string
	// Err says what is wrong; a JSON decoding error names the field.
	Err error
}

// Error renders `deploy/app.yaml: document 2 (Service default/web): …`.
func (e *DocumentError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: document %d", e.File, e.Index)
	if e.Item > 0 {
		fmt.Fprintf(&b, " item %d", e.Item)
	}
	if e.Kind != "" || e.Name != "" {
		b.WriteString(" (")
		b.WriteString(e.Kind)
		if e.Name != "" {
			b.WriteByte(' ')
			if e.Namespace != "" {
				b.WriteString(e.Namespace + "/")
			}
			b.WriteString(e.Name)
		}
		b.WriteByte(')')
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying error.
func (e *DocumentError) Unwrap() error { return e.Err }

// Ignored is a well-formed document of a kind crossfade does not read.
type Ignored struct {
	File        string
	Index, Item int
	APIVersion  string
	Kind        string
}
