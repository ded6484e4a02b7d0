package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/loopback"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/source"
)

// FlagChecks hold what one command tree's flag values must be: a rule per flag, and
// checks of several flags together per command. EnforceUsage runs them once the command
// line is parsed, before the command reads or writes anything, and a value they refuse is
// a usage error (exit status 2) naming the flag, the value and what the flag wants.
type FlagChecks struct {
	rules  map[*pflag.Flag][]ValueRule
	checks map[*cobra.Command][]func() error
	// aliases are the deprecated old names of flags (DeprecatedAlias), by the flag: a
	// refusal names the one the command line gave.
	aliases map[*pflag.Flag]*pflag.Flag
}

// ValueRule judges one value of a flag (each element of a list flag) as pflag holds it
// once parsed; its error says what the flag wants.
type ValueRule func(v string) error

// CheckedAnnotation marks a flag with a rule, so that the flag says so without the tree's
// FlagChecks (TestFlagValueRules walks the tree for it).
const CheckedAnnotation = "crossfade.io/value-checked"

// Want declares the rule every value of fs's flag name must meet. The flag must exist:
// a rule for a renamed flag must not silently check nothing.
func (fc *FlagChecks) Want(fs *pflag.FlagSet, name string, rule ValueRule) {
	f := fs.Lookup(name)
	if f == nil {
		panic(fmt.Sprintf("flag check for --%s, which is not defined", name))
	}
	if fc.rules == nil {
		fc.rules = map[*pflag.Flag][]ValueRule{}
	}
	fc.rules[f] = append(fc.rules[f], rule)
	_ = fs.SetAnnotation(name, CheckedAnnotation, []string{"true"})
}

// Check declares a check of c's flags together (a flag that needs another, two that
// exclude each other); its error names the flags. A group's checks hold in every command
// under it, whose persistent flags they check.
func (fc *FlagChecks) Check(c *cobra.Command, fn func() error) {
	if fc.checks == nil {
		fc.checks = map[*cobra.Command][]func() error{}
	}
	fc.checks[c] = append(fc.checks[c], fn)
}

// Run checks the values of c's flags (its own and those it inherits) and then the checks
// of c and of the groups above it, returning the first refusal as a UsageError.
func (fc *FlagChecks) Run(c *cobra.Command) error {
	if fc == nil {
		return nil
	}
	var err error
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil {
			return
		}
		for _, rule := range fc.rules[f] {
			for _, v := range flagValues(f) {
				if rerr := rule(v); rerr != nil {
					name := f.Name
					if a := fc.aliases[f]; a != nil && a.Changed && !f.Changed {
						name = a.Name
					}
					err = fmt.Errorf("--%s %q: %w", name, v, rerr)
					return
				}
			}
		}
	})
	if err != nil {
		return &UsageError{path: c.CommandPath(), err: err}
	}
	for p := c; p != nil; p = p.Parent() {
		for _, check := range fc.checks[p] {
			if err := check(); err != nil {
				return &UsageError{path: c.CommandPath(), err: err}
			}
		}
	}
	return nil
}

// flagValues are f's values: each element of a list flag, else its one value.
func flagValues(f *pflag.Flag) []string {
	if s, ok := f.Value.(pflag.SliceValue); ok {
		return s.GetSlice()
	}
	return []string{f.Value.String()}
}

// Optional lets the empty value, the flag's "not set", through rule.
func Optional(rule ValueRule) ValueRule {
	return func(v string) error {
		if v == "" {
			return nil
		}
		return rule(v)
	}
}

// NotEmpty wants a value.
func NotEmpty(what string) ValueRule {
	return func(v string) error {
		if strings.TrimSpace(v) == "" {
			return errors.New("want " + what)
		}
		return nil
	}
}

// DurationAtLeast wants a duration of min or more; why, when not empty, says what the
// bound is.
func DurationAtLeast(lo time.Duration, why string) ValueRule {
	return func(v string) error {
		d, err := time.ParseDuration(v)
		if err == nil && d >= lo {
			return nil
		}
		want := fmt.Sprintf("want a duration of %s or more", lo)
		if why != "" {
			want += " (" + why + ")"
		}
		return errors.New(want)
	}
}

// PositiveDuration wants a duration above 0: a pflag duration of 0 is otherwise the
// engine's "use the default", which the value given never meant.
func PositiveDuration(v string) error {
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return nil
	}
	return errors.New(`want a duration above 0, e.g. "30s"`)
}

// IntRange wants an integer lo..hi (hi < 0: no upper bound).
func IntRange(lo, hi int) ValueRule {
	return func(v string) error {
		n, err := strconv.Atoi(v)
		switch {
		case hi < 0 && (err != nil || n < lo):
			return fmt.Errorf("want an integer %d or more", lo)
		case hi >= 0 && (err != nil || n < lo || n > hi):
			return fmt.Errorf("want an integer %d..%d", lo, hi)
		}
		return nil
	}
}

// Ratio wants a number 0..1 (NaN is not one).
func Ratio(v string) error {
	if x, err := strconv.ParseFloat(v, 64); err == nil && x >= 0 && x <= 1 {
		return nil
	}
	return errors.New("want a number 0..1")
}

// NonNegativeNumber wants a finite number ≥ 0.
func NonNegativeNumber(v string) error {
	if x, err := strconv.ParseFloat(v, 64); err == nil && x >= 0 && !math.IsInf(x, 1) {
		return nil
	}
	return errors.New("want a number 0 or more")
}

// OneOf wants one of values, exactly.
func OneOf(values ...string) ValueRule {
	return func(v string) error {
		if slices.Contains(values, v) {
			return nil
		}
		return errors.New("want " + orList(values))
	}
}

// OneOfFold wants one of values, in any case.
func OneOfFold(values ...string) ValueRule {
	return func(v string) error {
		for _, w := range values {
			if strings.EqualFold(v, w) {
				return nil
			}
		}
		return errors.New("want " + orList(values))
	}
}

// orList renders "a", "a or b", "a, b or c".
func orList(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// LogLevel wants a level slog reads (debug, info, warn, error, any case, "info+2").
func LogLevel(v string) error {
	if _, ok := ParseLogLevel(v); !ok {
		return errors.New("want debug, info, warn or error (or external-dns's trace, warning, fatal, panic)")
	}
	return nil
}

// externalDNSLevels are the logrus levels external-dns takes for --log-level that slog has
// no name for, as the nearest slog level: a copied external-dns command line must not
// crash-loop on its log level.
var externalDNSLevels = map[string]slog.Level{
	"trace": slog.LevelDebug, "warning": slog.LevelWarn, "fatal": slog.LevelError, "panic": slog.LevelError,
}

// ParseLogLevel reads a --log-level value: slog's names (debug, info, warn, error, with
// an offset such as "debug-4"), or external-dns's trace, warning, fatal and panic.
func ParseLogLevel(v string) (slog.Level, bool) {
	if l, ok := externalDNSLevels[strings.ToLower(v)]; ok {
		return l, true
	}
	var l slog.Level
	if l.UnmarshalText([]byte(v)) != nil {
		return 0, false
	}
	return l, true
}

// splitHostPort splits host:port, with a host that is an IP address or a DNS name.
func splitHostPort(v string) (host string, port int, ok bool) {
	h, p, err := net.SplitHostPort(v)
	if err != nil {
		return "", 0, false
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 || n > 65535 {
		return "", 0, false
	}
	if h == "" || isHost(h) {
		return h, n, true
	}
	return "", 0, false
}

// isHost reports whether h is an IP address or a DNS name.
func isHost(h string) bool {
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	return h == strings.TrimSpace(h) && endpoint.CheckName(endpoint.NormalizeName(h)) == ""
}

// HostPort wants host:port of a server to ask (port 1..65535).
func HostPort(v string) error {
	if h, p, ok := splitHostPort(v); ok && h != "" && p > 0 {
		return nil
	}
	return errors.New(`want host:port, e.g. "192.0.2.53:53"`)
}

// DNSServer wants host:port of a DNS server, or a host (port 53), as the DNS gate takes it.
func DNSServer(v string) error {
	if HostPort(v) == nil || isHost(strings.Trim(v, "[]")) {
		return nil
	}
	return errors.New(`want host:port of a DNS server, e.g. "192.0.2.53:53" (a host alone: port 53)`)
}

// ListenAddr wants an address to listen at: [host]:port, port 0 picking one.
func ListenAddr(v string) error {
	if _, _, ok := splitHostPort(v); ok {
		return nil
	}
	return errors.New(`want a listen address host:port, e.g. "127.0.0.1:8080" or ":7979" (port 0 picks one)`)
}

// LoopbackAddr wants a loopback address to listen at: what has no authentication is
// served on this machine only.
func LoopbackAddr(v string) error {
	if h, _, ok := splitHostPort(v); ok && loopback.Listen(h) {
		return nil
	}
	return errors.New(`want a loopback listen address, e.g. "127.0.0.1:8080" (port 0 picks one)`)
}

// HTTPURL wants an absolute http:// or https:// URL with a host, as an API endpoint.
func HTTPURL(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New(`want an http:// or https:// URL with a host, e.g. "http://127.0.0.1:10080"`)
	}
	return nil
}

// AWSRegion wants a region name as the SDK puts it in a host name: one DNS label.
func AWSRegion(v string) error {
	if len(validation.IsDNS1123Label(v)) == 0 {
		return nil
	}
	return errors.New(`want an AWS region, e.g. "us-east-1"`)
}

// ZoneID wants a hosted zone id, as Route 53 writes them (Z…, upper case letters and
// digits), with or without "/hostedzone/".
func ZoneID(v string) error {
	id := strings.TrimPrefix(strings.TrimPrefix(v, "/"), "hostedzone/")
	if id != "" && len(id) <= 32 && strings.IndexFunc(id, func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') }) < 0 {
		return nil
	}
	return errors.New(`want a hosted zone id, e.g. "Z1D633PJN98FT9" or "/hostedzone/Z1D633PJN98FT9"`)
}

// Domain wants a DNS name (a leading or trailing dot is ignored, as the filter does).
func Domain(v string) error {
	d := strings.Trim(endpoint.NormalizeName(v), ".")
	if d != "" && endpoint.CheckName(d) == "" && !strings.ContainsFunc(v, unicode.IsSpace) {
		return nil
	}
	return errors.New(`want a DNS domain, e.g. "example.com"`)
}

// OwnerID wants an owner id the TXT registry can write and read back: not empty, without
// what would break the "k=v,k=v" payload or its quoting (the characters handover refuses).
func OwnerID(v string) error {
	if v == "" {
		return errors.New("want an owner id, e.g. the cluster's name")
	}
	if c, ok := registry.OwnerIDBreaks(v); ok {
		return fmt.Errorf("want an owner id without ',', '=', '\"', '\\', spaces or control characters (it holds %q)", c)
	}
	return nil
}

// TXTAffix wants a --txt-prefix or --txt-suffix: DNS name characters, and %{record_type}.
func TXTAffix(v string) error {
	s := strings.ReplaceAll(v, "%{record_type}", "a")
	if strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}) < 0 {
		return nil
	}
	return errors.New("want letters, digits, '-', '_', '.' and %{record_type}")
}

// DNSLabelChars wants what may replace a DNS label's "*": letters, digits, '-' and '_'.
func DNSLabelChars(v string) error {
	if v != "" && len(v) <= 63 && strings.IndexFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) < 0 {
		return nil
	}
	return errors.New("want 1 to 63 letters, digits, '-' and '_' (it stands in a DNS label)")
}

// K8sName wants a Kubernetes object name: a DNS-1123 label (namespaces) or subdomain.
func K8sName(what string, label bool) ValueRule {
	return func(v string) error {
		errs := validation.IsDNS1123Subdomain(v)
		if label {
			errs = validation.IsDNS1123Label(v)
		}
		if len(errs) > 0 {
			return fmt.Errorf("want a %s name: %s", what, errs[0])
		}
		return nil
	}
}

// Selector wants a Kubernetes selector such as "a=b,c in (d)", parsed by source.New as
// the field of source.Config it sets (AnnotationFilter, LabelFilter, GatewayLabelFilter).
func Selector(field string) ValueRule {
	return func(v string) error {
		var cfg source.Config
		switch field {
		case "AnnotationFilter":
			cfg.AnnotationFilter = v
		case "GatewayLabelFilter":
			cfg.GatewayLabelFilter = v
		default:
			cfg.LabelFilter = v
		}
		if _, err := source.New(cfg); err != nil {
			why := strings.TrimPrefix(err.Error(), fmt.Sprintf("source: %s %q: ", field, v))
			return fmt.Errorf(`want a selector such as "app=web,tier in (front)": %s`, why)
		}
		return nil
	}
}

// AnnotationPrefix wants an annotation key prefix ending in "/".
func AnnotationPrefix(v string) error {
	if v != "" && strings.HasSuffix(v, "/") {
		return nil
	}
	return fmt.Errorf("want an annotation key prefix ending in \"/\", e.g. %q", source.PrefixAlpha)
}

// Glob wants a shell glob path.Match reads.
func Glob(v string) error {
	if _, err := path.Match(v, ""); err != nil {
		return fmt.Errorf("want a shell glob, e.g. %q: %w", "*.shop.example.com", err)
	}
	return nil
}

// CloudMapAttributeKey wants a Cloud Map instance attribute key: 1 to 255 printable
// characters, not starting with AWS_ (Cloud Map's own).
func CloudMapAttributeKey(v string) error {
	ok := v != "" && len(v) <= 255 && !strings.HasPrefix(v, "AWS_") && strings.IndexFunc(v, func(r rune) bool { return r < 0x21 || r > 0x7e }) < 0
	if !ok {
		return errors.New("want an instance attribute key: 1 to 255 printable characters, not starting with AWS_")
	}
	return nil
}

// FaultOperation wants an API operation's name, as the sandbox's APIs name them.
func FaultOperation(v string) error {
	if v != "" && v[0] >= 'A' && v[0] <= 'Z' && strings.IndexFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0 {
		return nil
	}
	return errors.New(`want an API operation's name, e.g. "ChangeResourceRecordSets" or "ModifyRule"`)
}

// NotBoth refuses two flags given together that exclude each other.
func NotBoth(a, b string, aVal, bVal string) error {
	if aVal != "" && bVal != "" {
		return fmt.Errorf("--%s %q and --%s %q: give one or the other", a, aVal, b, bVal)
	}
	return nil
}
