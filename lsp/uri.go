package lsp

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"go.lsp.dev/uri"
)

// Scheme is the URI scheme of transcripts.
const Scheme = "recall"

var errBadURI = errors.New("bad recall: URI")

// Transcript is what a recall: URI names:
// recall:/session/<id>[/<display>][?around=<msg>][&mode=…][&limit=N][&format=markdown|chatml].
// The optional display segment (say a slug of the title and ".md") is for
// the editor's tab and language mode; the server ignores it.
type Transcript struct {
	SessionID string
	Around    string // message id
	Mode      string
	Limit     int
	Format    string
}

// TranscriptURI builds the URI of a session (around a message when given).
// It is written unencoded: ids are [A-Za-z0-9_] and clients parse it.
func TranscriptURI(sessionID, around string) uri.URI {
	u := Scheme + ":/session/" + sessionID
	if around != "" {
		u += "?around=" + around
	}
	return uri.URI(u)
}

// ParseTranscript reads a recall: URI, encoded or not (VS Code percent-
// encodes the query's = and &).
func ParseTranscript(s string) (Transcript, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w %q: %s; use recall:/session/<ses_id>?around=<msg_id>", errBadURI, echo(s), fmt.Sprintf(format, a...))
	}
	u, err := uri.Parse(s)
	if err != nil {
		return Transcript{}, bad("%v", err)
	}
	if u.Scheme() != Scheme {
		return Transcript{}, bad("the scheme is not %s", Scheme)
	}
	id, ok := strings.CutPrefix(u.Path(), "/session/")
	id, display, titled := strings.Cut(id, "/")
	if !ok || !strings.HasPrefix(id, "ses_") || (titled && strings.TrimSpace(display) == "") {
		return Transcript{}, bad("the path is not /session/<ses_id> or /session/<ses_id>/<title>.md")
	}
	q, err := url.ParseQuery(u.Query())
	if err != nil {
		return Transcript{}, bad("%v", err)
	}
	t := Transcript{SessionID: id, Around: q.Get("around"), Mode: q.Get("mode"), Format: q.Get("format")}
	for k := range q {
		switch k {
		case "around", "mode", "format", "limit":
		default:
			return Transcript{}, bad("unknown query field %q (around, mode, limit, format)", k)
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
