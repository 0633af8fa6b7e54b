package redact

import (
	"strings"
	"testing"
)

// secretCases are secrets in the shapes people paste: in, the secret
// values that must not survive (nor any 12-character run of one), and the
// kind the first of them is marked with.
var secretCases = []struct {
	in      string
	secrets []string
	kind    string
}{
	// Kinds Recall has always covered.
	{"key AKIAIOSFODNN7EXAMPLE here", []string{"AKIAIOSFODNN7EXAMPLE"}, "aws-key"},
	{"ghp_FAKE0fake1FAKE2fake3FAKE4fake5FAKE6f", []string{"ghp_FAKE0fake1FAKE2fake3FAKE4fake5FAKE6f"}, "github-token"},
	{"github_pat_11FAKE0000TESTONLY0000_FakeFixtureValueNotARealToken0123456789abcdef", []string{"github_pat_11FAKE0000TESTONLY0000_FakeFixtureValueNotARealToken0123456789abcdef"}, "github-token"},
	{"OPENAI_API_KEY=sk-proj-FAKEfake0123456789FAKEfake0123456789", []string{"sk-proj-FAKEfake0123456789FAKEfake0123456789"}, "api-key"},
	{"use sk-ant-api03-FAKEfake0123456789FAKEfake0123456789FAKE-ABCDEFAA now", []string{"sk-ant-api03-FAKEfake0123456789FAKEfake0123456789FAKE-ABCDEFAA"}, "api-key"},
	{"SLACK=xoxb-123456789012-1234567890123-FAKEfakeFAKEfake12345678", []string{"xoxb-123456789012-1234567890123-FAKEfakeFAKEfake12345678"}, "slack-token"},
	{"jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJmaXh0dXJlIn0.RkFLRS1zaWduYXR1cmU", []string{"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJmaXh0dXJlIn0.RkFLRS1zaWduYXR1cmU"}, "jwt"},
	{"-----BEGIN RSA PRIVATE KEY-----\nMIIEogIBAAKCAQEAFAKE0123456789abcdef\nabc0123456789==\n-----END RSA PRIVATE KEY-----", []string{"MIIEogIBAAKCAQEAFAKE0123456789abcdef", "abc0123456789=="}, "private-key"},
	{"1: -----BEGIN OPENSSH PRIVATE KEY-----\n2: b3BlbnNzaC1rZXktdjEAAAAA\n3: QUFBQUFBQUFBQUFBQUFB", []string{"b3BlbnNzaC1rZXktdjEAAAAA", "QUFBQUFBQUFBQUFBQUFB"}, "private-key"},
	{`curl -H "Authorization: Bearer fake-bearer-7Qx9TestOnly-4b1d2c3e"`, []string{"fake-bearer-7Qx9TestOnly-4b1d2c3e"}, "bearer"},
	{"database password=hunter2-FAKE-pw-0001.", []string{"hunter2-FAKE-pw-0001"}, "password"},
	{"webhook:\n  secret: fake-webhook-secret-7f3a9c\n", []string{"fake-webhook-secret-7f3a9c"}, "secret"},
	{"token=fake-deploy-token-55aa66bb", []string{"fake-deploy-token-55aa66bb"}, "token"},
	{"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", []string{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}, "secret"},
	{`{"apiKey": "abcd1234efgh5678"}`, []string{"abcd1234efgh5678"}, "api-key"},
	{"postgres://deployer:s3cretpw@db:5432/x", []string{"s3cretpw"}, "url-password"},

	// Shapes of those kinds that used to leak (issue 9).
	{"REDIS_URL=redis://:FAKEredisPW0001@cache.internal:6379/0", []string{"FAKEredisPW0001"}, "url-password"},
	{"amqp://deploy:FAKE/mq/pw0001@mq.internal:5672/vhost", []string{"FAKE/mq/pw0001"}, "url-password"},
	{"postgres://app:FAKE@pg@pw0001@db.internal:5432/app", []string{"FAKE@pg@pw0001"}, "url-password"},
	{"mongodb+srv://svc:FAKEmongoPW0001@cluster0.example.mongodb.net/app", []string{"FAKEmongoPW0001"}, "url-password"},
	{`PASSWORD = "correct horse battery staple"`, []string{"correct horse battery staple", "horse battery staple"}, "password"},
	{`{"command":"export DB_PASSWORD=\"correct horse battery staple\" && ./run"}`, []string{"correct horse battery staple"}, "password"},
	{"password: correct horse battery staple\nuser: bob", []string{"correct horse battery staple"}, "password"},
	{`db.connect(host="db", password=pw1, port=5432)`, []string{"password=pw1"}, "password"},
	{`{"user": "bob", "password": "pw1", "port": 5432}`, []string{`"pw1"`}, "password"},
	{`{"key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAFAKEfake0123456789abcdef\nFAKEfakeFAKEfake0123456789abcdefABCDEF==\n-----END RSA PRIVATE KEY-----\n"}`, []string{"MIIEowIBAAKCAQEAFAKEfake0123456789abcdef", "FAKEfakeFAKEfake0123456789abcdefABCDEF=="}, "private-key"},
	{`{"key": "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIFAKEfake0123456789abcdefFAKEfake01\noAoGCCqGSM49AwEHoUQDQgAEFAKEfake0123456789"}`, []string{"MHcCAQEEIFAKEfake0123456789abcdefFAKEfake01", "oAoGCCqGSM49AwEHoUQDQgAEFAKEfake0123456789"}, "private-key"},
	{"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwFAKE01\nFAKEfakeFAKEfake0123456789abcdefABCDEFGH\nFAKEfakeFAKE01", []string{"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwFAKE01", "FAKEfakeFAKEfake0123456789abcdefABCDEFGH", "FAKEfakeFAKE01"}, "private-key"},
	{"-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\nlQOYBGFAKEFAKEBCADFAKEfakeFAKEfakeFAKEfake01\nFAKEfakeFAKEfake0123456789abcdefghijklmnop\n=AbCd\n-----END PGP PRIVATE KEY BLOCK-----", []string{"lQOYBGFAKEFAKEBCADFAKEfakeFAKEfakeFAKEfake01", "FAKEfakeFAKEfake0123456789abcdefghijklmnop"}, "private-key"},

	// Kinds gitleaks' rules bring.
	{"stripe: sk_live_51HFAKEfakeFAKEfake0123456789abcdefABCDEF", []string{"sk_live_51HFAKEfakeFAKEfake0123456789abcdefABCDEF"}, "stripe-access-token"},
	{"restricted rk_live_51HFAKEfake0123456789abcdEF.", []string{"rk_live_51HFAKEfake0123456789abcdEF"}, "stripe-access-token"},
	{"maps key AIzaSyDFAKEfakeFAKEfake0123456789abcdeF, in the page", []string{"AIzaSyDFAKEfakeFAKEfake0123456789abcdeF"}, "gcp-api-key"},
	{"https://maps.googleapis.com/maps/api/js?key=AIzaSyDFAKEfakeFAKEfake0123456789abcdeF&callback=init", []string{"AIzaSyDFAKEfakeFAKEfake0123456789abcdeF"}, "gcp-api-key"},
	{"AIzaSyDFAKEfakeFAKEfake0123456789abc (one short)", []string{"AIzaSyDFAKEfakeFAKEfake0123456789abc"}, "gcp-api-key"},
	{"npm_FAKEfakeFAKEfake0123456789abcdefghij", []string{"npm_FAKEfakeFAKEfake0123456789abcdefghij"}, "npm-access-token"},
	{"//registry.npmjs.org/:_authToken=npm_FAKEfakeFAKEfake0123456789abcdefghij", []string{"npm_FAKEfakeFAKEfake0123456789abcdefghij"}, ""},
	{"https://hooks.slack.com/services/T0FAKE0001/B0FAKE0002/FAKEfakeFAKEfake01234567", []string{"T0FAKE0001/B0FAKE0002/FAKEfakeFAKEfake01234567"}, "slack-webhook-url"},
	{"SENDGRID=SG.FAKEfakeFAKEfake012345.FAKEfakeFAKEfake0123456789abcdefghijklmnopq", []string{"SG.FAKEfakeFAKEfake012345.FAKEfakeFAKEfake0123456789abcdefghijklmnopq"}, ""},
	{"glpat-FAKEfakeFAKEfake0123 for the runner", []string{"glpat-FAKEfakeFAKEfake0123"}, "gitlab-pat"},
	{"hf_FAKEfakeFAKEfakeFAKEfakeFAKEfakeFA", []string{"hf_FAKEfakeFAKEfakeFAKEfakeFAKEfakeFA"}, "huggingface-access-token"},
	{"dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", []string{"dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}, "digitalocean-pat"},
	{"AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ", []string{"AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ"}, "age-secret-key"},

	// Shapes gitleaks misses, Recall's own rules.
	{"DefaultEndpointsProtocol=https;AccountName=fakeacct;AccountKey=FAKEfakeFAKEfake0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV==;EndpointSuffix=core.windows.net", []string{"FAKEfakeFAKEfake0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV=="}, "azure-key"},
	{`{"type": "service_account", "private_key_id": "0123456789abcdef0123456789abcdef01234567", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCFAKE0123\nFAKEfakeFAKEfake0123456789abcdefABCDEF\n-----END PRIVATE KEY-----\n"}`, []string{"0123456789abcdef0123456789abcdef01234567", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCFAKE0123", "FAKEfakeFAKEfake0123456789abcdefABCDEF"}, ""},
	{"Authorization: Basic ZGVwbG95OmZha2UtYmFzaWMtcHctMDAx", []string{"ZGVwbG95OmZha2UtYmFzaWMtcHctMDAx"}, "basic-auth"},
	{"Authorization: token FAKEtokenValue0123456789", []string{"FAKEtokenValue0123456789"}, "authorization"},
	{"curl -u deployer:FAKE-curl-pw-0001 https://api.example.com", []string{"deployer:FAKE-curl-pw-0001"}, "curl-auth-user"},
	{"mysql -u root -pFAKEmysqlPW0001 shop", []string{"FAKEmysqlPW0001"}, "password"},
	{"docker login -u bot -p FAKE-docker-pw-0001 registry.example.com", []string{"FAKE-docker-pw-0001"}, "password"},
	{"deploy --password FAKE-flag-pw-0001 --api-key FAKEapikey0001xyz --token=FAKEtoken0001xyz", []string{"FAKE-flag-pw-0001", "FAKEapikey0001xyz", "FAKEtoken0001xyz"}, "password"},
	{"gh secret set DEPLOY --body x --token \\\n  FAKEcontinued0001xyz", []string{"FAKEcontinued0001xyz"}, "token"},
	{"wget --user=bob --password=FAKEwget0001 https://x", []string{"FAKEwget0001"}, "password"},
	{"machine api.example.com login bob password FAKEnetrc0001", []string{"FAKEnetrc0001"}, "password"},
	{"openssl pkcs12 -export -passout pass:FAKEp12pass0001 -out x.p12", []string{"FAKEp12pass0001"}, "password"},
	{"sshpass -p 'FAKE ssh pw 0001' ssh host", []string{"FAKE ssh pw 0001"}, "password"},
	{"redis-cli -h cache -a FAKEredis0001 ping", []string{"FAKEredis0001"}, "password"},
	{"Set-Cookie: session=FAKEsessionCookie0123456789; HttpOnly", []string{"FAKEsessionCookie0123456789"}, "cookie"},
	{`{"auths": {"registry.example.com": {"auth": "Ym90OkZBS0UtZG9ja2VyLWNmZy0wMDAx"}}}`, []string{"Ym90OkZBS0UtZG9ja2VyLWNmZy0wMDAx"}, "basic-auth"},
	{"x-api-key: FAKEheaderKey0123456789", []string{"FAKEheaderKey0123456789"}, "api-key"},
	{"Server=db;Database=shop;User Id=sa;Password=FAKE-mssql-pw-0001;", []string{"FAKE-mssql-pw-0001"}, "password"},
	{"jdbc:mysql://db/shop?user=app&password=FAKEjdbc0001&ssl=true", []string{"FAKEjdbc0001"}, "password"},
	{"the password is Tr0ub4dor&3-FAKE for staging", []string{"Tr0ub4dor&3-FAKE"}, "password"},
	{"password:\n  FAKE-next-line-pw-0001", []string{"FAKE-next-line-pw-0001"}, "password"},
	{"export OPENAI_API_KEY=\\\n  FAKEvalue0123456789", []string{"FAKEvalue0123456789"}, "api-key"},
	{"the service account (private_key_id 9808ba98679868c37ce64daca8d359250c7f9c6d) deploys", []string{"9808ba98679868c37ce64daca8d359250c7f9c6d"}, ""},
	{"rotate the API key AbCdEf0123456789GhIj today", []string{"AbCdEf0123456789GhIj"}, ""},
	{"5:   smtp_password: violet tangerine ocelot 42\n6:   relay_password:\n7:     FAKE-next-line-pw-0018\n8:   tls: true", []string{"violet tangerine ocelot 42", "FAKE-next-line-pw-0018"}, "password"},
	{"PGPASSWORD=FAKEpgPW0009 psql -h db", []string{"FAKEpgPW0009"}, "password"},
	{"<password>FAKExmlPW0001</password>", []string{"FAKExmlPW0001"}, "password"},
	{`<add key="ApiKey" value="FAKEnugetKey0001" />`, []string{"FAKEnugetKey0001"}, "api-key"},
	{"+DB_PASSWORD=two words here\n", []string{"two words here"}, "password"},
	{"https://discord.com/api/webhooks/123456789012345678/FAKEfakeFAKEfake0123456789abcdefghijklmnopqrstuvwxyz", []string{"FAKEfakeFAKEfake0123456789abcdefghijklmnopqrstuvwxyz"}, "webhook-url"},
	{"bot token 7012345678:AAFAKEfake0123456789abcdefGHIJKLMNO", []string{"7012345678:AAFAKEfake0123456789abcdefGHIJKLMNO"}, "telegram-bot-token"},
	{"mailgun key-0123456789abcdef0123456789abcdef", []string{"key-0123456789abcdef0123456789abcdef"}, "mailgun-key"},
	{"GOCSPX-FAKEfake0123456789abcdefgh and ya29.a0AfH6SMFAKEfake0123456789abcdefghijklmnopqrstuv", []string{"GOCSPX-FAKEfake0123456789abcdefgh", "ya29.a0AfH6SMFAKEfake0123456789abcdefghijklmnopqrstuv"}, "google-oauth"},
	{"AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", []string{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}, "aws-key"},
	{"ssh -i key user@host and password Tr0ub4dor&3", []string{"Tr0ub4dor&3"}, "password"},
	{"kubectl create secret generic db --from-literal=password=FAKEk8sLiteral0001", []string{"FAKEk8sLiteral0001"}, "password"},
	{"> -----BEGIN RSA PRIVATE KEY-----\n> MIIEpAIBAAKCAQEAFAKEfake0123456789abcdefFAKEfake01\n> FAKEfakeFAKEfake0123456789abcdef", []string{"MIIEpAIBAAKCAQEAFAKEfake0123456789abcdefFAKEfake01", "FAKEfakeFAKEfake0123456789abcdef"}, "private-key"},
	{"git clone https://x-access-token:FAKEcloneToken0123456789@github.com/o/r.git", []string{"FAKEcloneToken0123456789"}, "url-password"},
}

// leaked reports a secret, or a 12-character run of one, left in out.
func leaked(out, secret string) string {
	if len(secret) <= 12 {
		if strings.Contains(out, secret) {
			return secret
		}
		return ""
	}
	for i := 0; i+12 <= len(secret); i++ {
		if strings.Contains(out, secret[i:i+12]) {
			return secret[i : i+12]
		}
	}
	return ""
}

func TestSecretShapes(t *testing.T) {
	for _, c := range secretCases {
		out, n := Default().String(c.in)
		if n == 0 {
			t.Errorf("%q: nothing redacted", c.in)
			continue
		}
		for _, s := range c.secrets {
			if l := leaked(out, s); l != "" {
				t.Errorf("%q: %q left in %q", c.in, l, out)
			}
		}
		if c.kind != "" && !strings.Contains(out, Mark(c.kind)) {
			t.Errorf("%q: want %s in %q", c.in, Mark(c.kind), out)
		}
	}
}

// Code, placeholders and ids are not secrets: redacting them would hide
// what a search should find.
func TestKeepsWhatIsNotSecret(t *testing.T) {
	for _, s := range []string{
		// Code that reads a secret from somewhere.
		`secret_key_base = System.get_env("SECRET_KEY_BASE")`,
		`config :app, MyApp.Endpoint, secret_key_base: System.get_env("SECRET_KEY_BASE")`,
		`token := os.Getenv("GITHUB_TOKEN")`,
		`apiKey: process.env.API_KEY,`,
		`const key = import.meta.env.VITE_API_KEY`,
		`password = os.environ["DB_PASSWORD"]`,
		`password = ENV.fetch("DB_PASSWORD")`,
		`api_key = settings.OPENAI_API_KEY`,
		`self.password = password`,
		`password = getpass.getpass()`,
		`token = response.json()["access_token"]`,
		`password := cfg.Database.Password`,
		`if (!token) return res.status(401)`,
		// Placeholders.
		"password: string", "token = None", "API_KEY=$OPENAI_API_KEY", "secret: ${{ secrets.DEPLOY }}",
		`token = "<your-token>"`, `password: ""`, "password=****", "api_key: [REDACTED]", `"password": "{{ .Values.db.password }}"`,
		"DB_PASSWORD=${DB_PASSWORD:-}", "postgres://app:${DB_PASS}@db/app", "token: YOUR_TOKEN_HERE",
		// Names of secrets, not values.
		"password_file: /run/secrets/db", "docker login --password-stdin registry.example.com",
		"aws secretsmanager get-secret-value --secret-id prod/api/db", `"token_type": "Bearer"`,
		"max_tokens: 4096, input_tokens=12", `STORAGE_KEY = "pulse.theme"`, "primary_key=True", "foreign_key: user_id",
		`"cache_key": "v1-deps-{{ checksum }}"`, "password:\n  min_length: 12\n  require_digit: true",
		// Prose and words.
		"the tokenizer splits words", "skip the sk- prefix", "ask-me-anything", "the password is required",
		"Reset your password in settings.", "Basic usage: run the tool", "keyboard shortcut key: ctrl+k",
		"Use Authorization headers for auth.", "npm_package_version and npm_config_user_agent",
		// URLs that hold no password.
		"DATABASE_URL=postgres://deployer@db.staging.internal:5432/shop", "see https://example.com/a:b@c",
		"https://host:8443/users/@alice", "git@github.com:recallhq/recall.git",
		// Ids and hashes: a git SHA, a UUID, a digest, a checksum line.
		"commit 3f2c1e0b9a8d7c6b5a4f3e2d1c0b9a8d7c6b5a4f", "id 550e8400-e29b-41d4-a716-446655440000",
		"image@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		`"integrity": "sha512-FAKE0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH=="`,
		"h1:FAKE0123456789abcdefghijklmnopqrstuvwxyzAB=",
	} {
		if out, n := Default().String(s); n != 0 {
			t.Errorf("%q was redacted: %q", s, out)
		}
	}
	// The words around a secret stay.
	out := Default().Redact("The new AWS key is AKIAIOSFODNN7EXAMPLE for the deploy pipeline")
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

// Every rule compiles (they compile lazily, so a broken one would only
// show on the text that needs it).
func TestEveryRuleCompiles(t *testing.T) {
	for _, ru := range Default().rules {
		func() {
			defer func() {
				if e := recover(); e != nil {
					t.Errorf("rule %s: %v", ru.kind, e)
				}
			}()
			ru.regexp()
		}()
	}
	if n := len(gitleaksRules); n < 200 {
		t.Errorf("%d gitleaks rules: the generated table is incomplete", n)
	}
}

// Redacting a redacted text changes nothing.
func TestRedactionIsIdempotent(t *testing.T) {
	for _, c := range secretCases {
		once := Default().Redact(c.in)
		if twice := Default().Redact(once); twice != once {
			t.Errorf("%q: redacted again: %q -> %q", c.in, once, twice)
		}
	}
}

// One redactor serves the LSP server's concurrent requests: rules compile
// lazily, once, under any number of callers (run with -race).
func TestConcurrentRedaction(t *testing.T) {
	r := build(append(ownRules(), gitleaksRuleSet()...), true)
	done := make(chan bool)
	for g := 0; g < 8; g++ {
		go func() {
			for _, c := range secretCases {
				if out := r.Redact(c.in); leaked(out, c.secrets[0]) != "" {
					t.Errorf("%q leaked under concurrency", c.in)
				}
			}
			done <- true
		}()
	}
	for g := 0; g < 8; g++ {
		<-done
	}
}

// loosenEnd changes the ending of a rule of a token with its own prefix
// only, with or without (?i).
func TestLoosenEnd(t *testing.T) {
	for re, want := range map[string]string{
		`\b(npm_[a-z0-9]{36})` + gitleaksEnd:                `\b(npm_[a-z0-9]{36})` + tokenEnd,
		`(?i)\b(AIza[\w-]{35})` + gitleaksEnd:               `(?i)\b(AIza[\w-]{35})` + tokenEnd,
		`(?i)[\w.-]{0,50}?(?:key)(?:\s)(\w+)` + gitleaksEnd: `(?i)[\w.-]{0,50}?(?:key)(?:\s)(\w+)` + gitleaksEnd,
		`\b(npm_[a-z0-9]{36})`:                              `\b(npm_[a-z0-9]{36})`,
		`(?i)x\b(abc)` + gitleaksEnd:                        `(?i)x\b(abc)` + gitleaksEnd,
	} {
		if got := loosenEnd(re); got != want {
			t.Errorf("loosenEnd(%q) = %q, want %q", re, got, want)
		}
	}
}
