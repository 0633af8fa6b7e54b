package engine

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/recallhq/recall/engine/render"
)

// TranscriptScheme is the URI scheme of transcripts.
const TranscriptScheme = "recall"

// ErrBadURI is a recall: URI that does not parse; doors report it as bad
// input (-32602).
var ErrBadURI = errors.New("bad recall: URI")

// Transcript is what a recall: URI names:
//
//	recall:/session/<id>[/<display>][?source=<name>][&around=<msg>][&mode=…][&limit=N][&format=markdown|chatml]
//
// The display segment (a slug of the title and ".md") is for the editor's
// tab and language mode; the server ignores it. Without source, the first
// source (in source order) that holds the session answers, so URIs made
// before there were several histories keep working. Results carry the URI
// to open (Hit.URI, SessionInfo.URI): clients never build or parse one.
type Transcript struct {
	Source    string
	SessionID string
	Around    string // message id
	Mode      string
	Limit     int
	Format    string
}

// maxSlug bounds a title's slug in a URI: an editor tab shows about this
// much.
const maxSlug = 60

// TranscriptURI is the URI of a session of source (around a message when
// given), with a slug of its title for the editor's tab. It is written
// unencoded: ids are [A-Za-z0-9_], source names and slugs [a-z0-9-].
func TranscriptURI(source, sessionID, title, around string) string {
	u := TranscriptScheme + ":/session/" + sessionID
	if slug := titleSlug(title); slug != "" {
		u += "/" + slug + ".md"
	}
	var q []string
	if source != "" {
		q = append(q, "source="+source)
	}
	if around != "" {
		q = append(q, "around="+around)
	}
	if len(q) > 0 {
		u += "?" + strings.Join(q, "&")
	}
	return u
}

// titleSlug is a title as lower-case words joined by dashes ("Fix invoice
// total rounding drift" is fix-invoice-total-rounding-drift), cut at a
// word within maxSlug.
func titleSlug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	s := b.String()
	if len(s) > maxSlug {
		s = s[:maxSlug]
		if i := strings.LastIndexByte(s, '-'); i > maxSlug/2 {
			s = s[:i]
		}
	}
	return strings.Trim(s, "-")
}

// ParseTranscript reads a recall: URI, encoded or not (VS Code percent-
// encodes the query's = and &).
func ParseTranscript(s string) (Transcript, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w %q: %s; use recall:/session/<ses_id>?around=<msg_id>", ErrBadURI, echoURI(s), fmt.Sprintf(format, a...))
	}
	u, err := url.Parse(s)
	if err != nil {
		return Transcript{}, bad("%v", errors.Unwrap(err))
	}
	if u.Scheme != TranscriptScheme {
		return Transcript{}, bad("the scheme is not %s", TranscriptScheme)
	}
	id, ok := strings.CutPrefix(u.Path, "/session/")
	id, display, titled := strings.Cut(id, "/")
	if !ok || !strings.HasPrefix(id, "ses_") || (titled && strings.TrimSpace(display) == "") {
		return Transcript{}, bad("the path is not /session/<ses_id> or /session/<ses_id>/<title>.md")
	}
	raw, err := url.PathUnescape(u.RawQuery) // a whole query percent-encoded
	if err != nil {
		return Transcript{}, bad("%v", err)
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return Transcript{}, bad("%v", err)
	}
	t := Transcript{Source: q.Get("source"), SessionID: id, Around: q.Get("around"), Mode: q.Get("mode"), Format: q.Get("format")}
	for k := range q {
		switch k {
		case "source", "around", "mode", "format", "limit":
		default:
			return Transcript{}, bad("unknown query field %q (source, around, mode, limit, format)", k)
		}
	}
	if t.Around != "" && !strings.HasPrefix(t.Around, "msg_") {
		return Transcript{}, bad("around must be a msg_ id")
	}
	if l := q.Get("limit"); l != "" {
		if t.Limit, err = strconv.Atoi(l); err != nil || t.Limit < 1 {
			return Transcript{}, bad("limit must be a positive whole number")
		}
	}
	if t.Format == "" {
		t.Format = "markdown" // people read these in editors
	}
	if t.Mode == "" {
		t.Mode = "full"
		if t.Around != "" {
			t.Mode = "around"
		}
	}
	return t, nil
}

// echoURI makes a URI fit to quote in an error: valid UTF-8, clipped.
func echoURI(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return render.Clip(s, 120)
}
