package redact

import (
	"strings"
	"testing"
)

func TestBuiltin(t *testing.T) {
	cases := []struct{ in, secret, kind string }{
		{"key AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE", "aws-key"},
		{"ghp_FAKE0fake1FAKE2fake3FAKE4fake5FAKE6f", "ghp_FAKE0fake1FAKE2fake3FAKE4fake5FAKE6f", "github-token"},
		{"github_pat_11FAKE0000TESTONLY0000_FakeFixtureValueNotARealToken0123456789abcdef", "github_pat_11FAKE", "github-token"},
		{"OPENAI_API_KEY=sk-proj-FAKEfake0123456789FAKEfake0123456789", "sk-proj-FAKE", "api-key"},
		{"use sk-ant-api03-FAKEfake0123456789FAKEfake0123456789FAKE-ABCDEFAA now", "sk-ant-api03", "api-key"},
		{"SLACK=xoxb-123456789012-1234567890123-FAKEfakeFAKEfake12345678", "xoxb-1234", "slack-token"},
		{"jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJmaXh0dXJlIn0.RkFLRS1zaWduYXR1cmU", "eyJhbGci", "jwt"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIEogIBAAKCAQEAFAKE\nabc==\n-----END RSA PRIVATE KEY-----", "MIIEogIBAAKCAQEAFAKE", "private-key"},
		{"1: -----BEGIN OPENSSH PRIVATE KEY-----\n2: b3BlbnNzaC1rZXktdjEAAAAA\n3: QUFBQUFBQUFBQUFBQUFB", "b3BlbnNzaC1rZXktdjEAAAAA", "private-key"},
		{`curl -H "Authorization: Bearer fake-bearer-7Qx9TestOnly-4b1d2c3e"`, "fake-bearer-7Qx9", "bearer"},
		{"database password=hunter2-FAKE-pw-0001.", "hunter2-FAKE-pw-0001", "password"},
		{"webhook:\n  secret: fake-webhook-secret-7f3a9c\n", "fake-webhook-secret-7f3a9c", "secret"},
		{"token=fake-deploy-token-55aa66bb", "fake-deploy-token-55aa66bb", "token"},
		{"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI", "secret"},
		{`{"apiKey": "abcd1234efgh5678"}`, "abcd1234efgh5678", "api-key"},
		{"postgres://deployer:s3cretpw@db:5432/x", "s3cretpw", "url-password"},
	}
	for _, c := range cases {
		out, n := Default.String(c.in)
		if n == 0 || strings.Contains(out, c.secret) {
			t.Errorf("%q: secret %q left in %q", c.in, c.secret, out)
		}
		if !strings.Contains(out, Mark(c.kind)) {
			t.Errorf("%q: want %s in %q", c.in, Mark(c.kind), out)
		}
	}
}

func TestKeepsWhatIsNotSecret(t *testing.T) {
	for _, s := range []string{
		"password: string", "token = None", "API_KEY=$OPENAI_API_KEY", "secret: ${{ secrets.DEPLOY }}",
		"apiKey: process.env.API_KEY", "the tokenizer splits words", "skip the sk- prefix", "ask-me-anything",
		"DATABASE_URL=postgres://deployer@db.staging.internal:5432/shop", "see https://example.com/a:b@c",
	} {
		if out, n := Default.String(s); n != 0 {
			t.Errorf("%q was redacted: %q", s, out)
		}
	}
	// The words around a secret stay.
	out := Default.Redact("The new AWS key is AKIAIOSFODNN7EXAMPLE for the deploy pipeline")
	if out != "The new AWS key is [redacted:aws-key] for the deploy pipeline" {
		t.Errorf("got %q", out)
	}
}

func TestExtraPatterns(t *testing.T) {
	r, err := New(map[string]string{"internal-token": `itk_[a-z0-9]{8}`})
	if err != nil {
		t.Fatal(err)
	}
	if out := r.Redact("x itk_abcd1234 y"); out != "x [redacted:internal-token] y" {
		t.Errorf("got %q", out)
	}
	if _, err := New(map[string]string{"bad": "("}); err == nil || !strings.Contains(err.Error(), "bad") {
		t.Errorf("bad pattern: %v", err)
	}
}
