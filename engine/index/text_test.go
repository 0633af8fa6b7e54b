package index

import (
	"strings"
	"testing"

	"github.com/recallhq/recall/engine/redact"
)

// A long text is cut to its head and tail before it is stored, and outputs
// redact the stored copy: a cut inside a secret would keep a piece no rule
// recognises. The cut moves out of the secret instead.
func TestBoundNeverCutsASecret(t *testing.T) {
	ix := &Index{redactor: redact.Default()}
	secret := "ok harbor-quokka-5512-amber"
	line := func(n int) string { return strings.Repeat("log line of the deploy job\n", n/27+1)[:n] }
	cases := []struct {
		name       string
		text       string
		head, tail int
	}{
		{"first prompt", line(375) + `DB_PASSWORD="` + secret + `" and more words after it`, FirstPromptBytes, 0},
		{"head cut", line(OutputHead-15-len(`api_token="`)) + `api_token="` + secret + "\"\n" + line(30000), OutputHead, OutputTail},
		{"tail cut", line(OutputHead+OutputTail) + `webhook_secret: "` + secret + "\"\n" + line(OutputTail+10-len(secret)-2), OutputHead, OutputTail},
		{"key longer than a stretch", line(300) + "-----BEGIN RSA PRIVATE KEY-----\n" +
			strings.Repeat("MIIEpAIBAAKCAQEAFAKEfake0123456789abcdefFAKEfake0123456789abcdef\n", 100) +
			"-----END RSA PRIVATE KEY-----\n" + line(200), FirstPromptBytes, 0},
	}
	for _, c := range cases {
		kept := ix.bound(c.text, c.head, c.tail)
		if len(kept) >= len(c.text) {
			t.Errorf("%s: nothing was cut", c.name)
		}
		shown := redact.Default().Redact(kept)
		for _, piece := range []string{secret[:12], secret[len(secret)-12:], "MIIEpAIBAAKC", "FAKEfake0123456789"} {
			if strings.Contains(shown, piece) {
				t.Errorf("%s: %q survives in the redacted stored text %q", c.name, piece, shown[max(0, strings.Index(shown, piece)-60):])
			}
		}
		plain, _ := Bound(c.text, c.head, c.tail)
		if p := redact.Default().Redact(plain); c.name != "key longer than a stretch" && !strings.Contains(p, secret[:12]) && !strings.Contains(p, secret[len(secret)-12:]) {
			t.Errorf("%s: the plain cut does not split the secret; the case tests nothing", c.name)
		}
	}
	// Without a redactor the cut is Bound's.
	plain, _ := Bound(cases[1].text, OutputHead, OutputTail)
	if got := (&Index{}).bound(cases[1].text, OutputHead, OutputTail); got != plain {
		t.Error("bound without a redactor differs from Bound")
	}
}
