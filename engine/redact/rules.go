package redact

import (
	"encoding/base64"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// Pieces of Recall's own patterns.
const (
	// sep is a line break as history holds it: a real one, or the `\n`
	// escape of text inside JSON (tool inputs, API payloads).
	sep = `(?:\s|\\[nrt])`
	// lineNo is the line-number prefix of read-tool output and `cat -n`.
	// A markdown quote or a comment marker may stand in its place.
	lineNo = `(?:[ \t]*\d{1,6}(?::[ \t]|\||\t|\\t)|[ \t]*[>#]+[ \t]?)?`
	// b64Line is one line of a key body.
	b64Line = `[A-Za-z0-9+/=]{16,}`
	// pemBegin opens a PEM or PGP private key block.
	pemBegin = `-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`
	// quoted is a quoted value, also with JSON-escaped quotes; unquoted
	// stops where a value in code, a URL query or a connection string ends.
	quoted   = `\\"[^"\n]*?\\"|"[^"\n]*"|'[^'\n]*'|` + "`[^`\\n]*`"
	unquoted = `[^\s"'` + "`" + `<>,;&|)}\]\\]+`
	// nextLine lets a value start on the next line (YAML, a shell line
	// continuation, pretty-printed JSON).
	nextLine = `(?:(?:\\?\r?\n|\\n)` + lineNo + `[ \t]*)?`
)

// secretWords are the words that make an assignment's key, a flag or a
// header name secret (matched as whole words of the name).
var secretWords = map[string]bool{
	"password": true, "passwd": true, "passphrase": true, "passcode": true, "pwd": true, "pass": true, "pw": true,
	"secret": true, "secrets": true, "token": true, "apikey": true, "credential": true, "credentials": true,
	"creds": true, "storepass": true, "keypass": true, "privatekey": true, "accountkey": true,
}

// keyQualifiers make a name ending in "key" secret (api_key, AccountKey);
// a bare "key" (a map key, a keyboard key) is not.
var keyQualifiers = map[string]bool{
	"api": true, "access": true, "secret": true, "private": true, "account": true, "client": true, "auth": true,
	"signing": true, "encryption": true, "master": true, "shared": true, "license": true, "app": true,
	"service": true, "subscription": true, "session": true, "deploy": true, "webhook": true, "admin": true,
	"primary": true, "secondary": true, "consumer": true, "hmac": true, "jwt": true, "ssh": true,
}

// notSecretSuffixes end names whose value describes a secret without
// being one: password_file, token_url, max_tokens' siblings, secret_name.
var notSecretSuffixes = map[string]bool{
	"file": true, "path": true, "dir": true, "name": true, "names": true, "length": true, "len": true,
	"type": true, "count": true, "env": true, "var": true, "header": true, "field": true, "policy": true,
	"endpoint": true, "url": true, "uri": true, "expiry": true, "expires": true, "expiration": true, "ttl": true,
	"timeout": true, "prefix": true, "format": true, "size": true, "min": true, "max": true, "required": true,
	"enabled": true, "regex": true, "pattern": true, "strength": true, "at": true, "error": true,
	"message": true, "label": true, "placeholder": true, "hint": true, "input": true, "column": true,
	"version": true, "mode": true, "manager": true, "store": true, "provider": true, "backend": true,
	"ref": true, "rotation": true, "stdin": true, "limit": true, "usage": true, "budget": true, "index": true,
	"location": true, "source": true, "kind": true, "scope": true, "scopes": true, "helper": true, "flag": true,
	"option": true, "id": true, "ids": true, "arn": true, "changed": true, "valid": true, "invalid": true, "visible": true,
}

// secretName reports whether an assignment key, flag or header name names
// a secret.
func secretName(name string) bool {
	words := nameWords(name)
	if len(words) == 0 {
		return false
	}
	last := words[len(words)-1]
	if last == "id" && len(words) > 2 && words[len(words)-3] == "private" && words[len(words)-2] == "key" {
		return true // a service account's private_key_id travels with its key
	}
	if notSecretSuffixes[last] {
		return false
	}
	if secretWords[last] {
		return true
	}
	if last == "key" || last == "keys" {
		for _, w := range words[:len(words)-1] {
			if keyQualifiers[w] {
				return true
			}
		}
	}
	for _, w := range words {
		// Also run-together names: PGPASSWORD, dbpassword, clientsecret.
		for _, sw := range []string{"password", "passwd", "secret", "privatekey"} {
			if strings.HasSuffix(w, sw) || w == sw {
				return true
			}
		}
	}
	// secret_key_base, private_key_id, api_key_v2: a qualified key inside.
	for i := 1; i < len(words); i++ {
		if words[i] == "key" && keyQualifiers[words[i-1]] {
			return true
		}
	}
	return false
}

// nameWords splits a name into lowercase words at separators and
// camelCase humps: "X-Auth-Token" -> x auth token, "apiKey" -> api key.
func nameWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, c := range rs {
		switch {
		case c == '_' || c == '-' || c == '.' || c == ' ' || c == ':' || c == '$' || c == '@':
			flush()
		case unicode.IsUpper(c) && len(cur) > 0 && (unicode.IsLower(cur[len(cur)-1]) ||
			(i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(cur[len(cur)-1]))):
			flush()
			cur = append(cur, c)
		default:
			cur = append(cur, c)
		}
	}
	flush()
	return words
}

// ownRules are Recall's rules, listed before gitleaks' so their kind names
// win where both find the same secret.
func ownRules() []*rule {
	return []*rule{
		// PEM and PGP private keys, whole block, also with JSON-escaped
		// line breaks and line-numbered file reads.
		{kind: "private-key", keywords: []string{"private key"},
			pattern: pemBegin + `[\s\S]*?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`},
		// A BEGIN with no END in reach (a cut output, a paste of half a
		// key): armor headers and the base64 body, to where it stops.
		{kind: "private-key", keywords: []string{"private key"},
			pattern: pemBegin + `(?:` + sep + `+` + lineNo + `(?:[A-Za-z-]+: [^\n\\]*|` + b64Line + `|[A-Za-z0-9+/]{2,}={1,2}))*` +
				`(?:` + sep + `+` + lineNo + `[A-Za-z0-9+/]{1,15}$)?`},
		// PuTTY private key files.
		{kind: "private-key", keywords: []string{"private-lines"},
			pattern: `Private-Lines:\s*\d+(?:` + sep + `+` + lineNo + `[A-Za-z0-9+/=]{4,})+`},
		// AWS access key ids.
		{kind: "aws-key", keywords: []string{"akia", "asia", "aida", "aroa", "a3t", "abia", "acca"},
			pattern: `\b(?:A3T[A-Z0-9]|AKIA|ASIA|AIDA|AROA|ABIA|ACCA)[0-9A-Z]{16}\b`},
		// GitHub tokens: classic ghp_/gho_/ghu_/ghs_/ghr_ and fine-grained.
		{kind: "github-token", keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
			pattern: `\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})\b`},
		// OpenAI / Anthropic style keys: sk-..., sk-proj-..., sk-ant-...
		{kind: "api-key", keywords: []string{"sk-"},
			pattern: `\bsk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_\-]{20,}`},
		// Slack tokens.
		{kind: "slack-token", keywords: []string{"xox"},
			pattern: `\bxox[abposre]-[A-Za-z0-9-]{10,}`},
		// JWTs: three base64url segments, the first a JSON header.
		{kind: "jwt", keywords: []string{"eyj"},
			pattern: `\beyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}`},
		// HTTP Basic credentials: base64 of user:password, after "Basic".
		{kind: "basic-auth", keywords: []string{"basic"}, back: letters, group: 1, vet: vetBasic,
			pattern: `(?i)basic[ \t]+([A-Za-z0-9+/]{6,}={0,2})`},
		// An AWS secret access key right after its key id (CSV exports,
		// "id:secret" pairs).
		{kind: "aws-secret-key", keywords: []string{"akia", "asia"}, group: 1,
			pattern: `\b(?:AKIA|ASIA)[0-9A-Z]{16}[\s:,;=|"']+([A-Za-z0-9/+]{40})\b`},
		// Tokens of formats gitleaks has no rule for, or only after a
		// vendor's name: Google OAuth client secrets and tokens, Telegram
		// bot tokens, Mailgun keys.
		{kind: "google-oauth", keywords: []string{"gocspx-", "ya29.", "1//0"},
			pattern: `(?:\bGOCSPX-[A-Za-z0-9_-]{20,}|\bya29\.[A-Za-z0-9_-]{20,}|\b1//0[A-Za-z0-9_-]{30,})`},
		{kind: "telegram-bot-token", keywords: []string{":aa"},
			pattern: `\b\d{8,10}:AA[A-Za-z0-9_-]{30,}`},
		{kind: "mailgun-key", keywords: []string{"key-"},
			pattern: `\bkey-[a-f0-9]{32}\b`},
		// Chat and Teams webhook URLs (gitleaks knows Slack's).
		{kind: "webhook-url", keywords: []string{"/api/webhooks/", "webhook.office.com", "outlook.office.com"},
			pattern: `(?:https?://)?(?:(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}|[A-Za-z0-9.-]*(?:webhook\.office\.com/webhookb2|outlook\.office\.com/webhook)/[A-Za-z0-9@/_.-]{20,})`},
		// XML: <password>x</password>, <add key="ApiKey" value="x"/>.
		{kind: "secret", keywords: flagKeywords, back: nameChars, next: afterName(">"), group: 2, kindFrom: 1, vet: vetXMLElement,
			pattern: `([A-Za-z_][A-Za-z0-9_.:-]*)>([^<\n]{1,500})</`},
		{kind: "secret", keywords: flagKeywords, back: nameChars, next: afterName(`"\`), group: 2, kindFrom: 1, vet: vetXMLKeyValue,
			pattern: `([A-Za-z_][A-Za-z0-9_.:-]*)\\?"[ \t]+value=\\?"([^"\\\n]+)\\?"`},
		// Docker's config.json: "auth" is base64 of user:password.
		{kind: "basic-auth", keywords: []string{`"auth`}, group: 1, vet: vetBasic,
			pattern: `\\?"auth\\?"[ \t]*:[ \t]*\\?"([A-Za-z0-9+/]{6,}={0,2})\\?"`},
		// Bearer tokens (the scheme word is kept).
		{kind: "bearer", keywords: []string{"bearer"}, back: letters, group: 1, vet: vetValue,
			pattern: `(?i)bearer\s+([A-Za-z0-9\-._~+/]{12,}=*)`},
		// Any other Authorization header value (Token x, a raw key).
		{kind: "authorization", keywords: []string{"authorization"}, back: headerChars, group: 1, vet: vetValue,
			pattern: `(?i)(?:proxy-)?authorization\\?["']?[ \t]*[:=][ \t]*\\?["']?(?:(?:token|digest|apikey|api-key|key|sso-key|hmac|otp)[ \t]+)?([^\s"'\\,;]{8,})`},
		// Cookies, as headers carry them.
		{kind: "cookie", keywords: []string{"cookie"}, back: headerChars, group: 1, vet: vetValue,
			pattern: `(?i)(?:set-)?cookie\\?["']?[ \t]*:[ \t]*\\?["']?([^\r\n"\\]{8,})`},
		// Passwords in URLs: scheme://user:password@host. The user may be
		// empty and the password hold / or @ (the last @ before the host
		// ends it).
		{kind: "url-password", keywords: []string{"://"}, back: schemeChars, group: 1, vet: vetURLPassword,
			pattern: `[a-zA-Z][a-zA-Z0-9+.-]{0,30}://[^\s:/@"'<>` + "`" + `]*:([^\s"'<>` + "`" + `]+)@[A-Za-z0-9\[_-][^\s"'<>@/` + "`" + `]*`},
		// Azure connection strings and SAS URLs.
		{kind: "azure-key", keywords: []string{"accountkey", "sharedaccesskey", "sharedaccesssignature", "sig="}, back: letters, group: 1, vet: vetValue,
			pattern: `(?i)(?:AccountKey|SharedAccessKey|SharedAccessSignature|sig)=([^;"'\s&<>\\]{8,})`},
		// Command lines: mysql -pSECRET, docker login -p X, sshpass -p X,
		// redis-cli -a X, openssl -passin pass:X, .netrc lines.
		{kind: "password", keywords: []string{"mysql", "mariadb"}, back: letters, group: 1, vet: vetValue,
			pattern: `(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlsh|mariadb(?:-dump|-admin)?)\b[^\n|;&]*?[ \t]-p([^\s"'|;&\\]+)`},
		{kind: "password", keywords: []string{"login"}, back: letters, group: 1, vet: vetValue,
			pattern: `login\b[^\n|;&]*?[ \t]-p(?:[ \t]+|=)(` + quoted + `|` + unquoted + `)`},
		{kind: "password", keywords: []string{"sshpass"}, back: letters, group: 1, vet: vetValue,
			pattern: `sshpass[ \t]+-p[ \t]*(` + quoted + `|` + unquoted + `)`},
		{kind: "password", keywords: []string{"redis-cli"}, back: letters, group: 1, vet: vetValue,
			pattern: `redis-cli\b[^\n|;&]*?[ \t]-a[ \t]+(` + quoted + `|` + unquoted + `)`},
		{kind: "password", keywords: []string{"pass:"}, back: letters, group: 1, vet: vetOpenSSLPass,
			pattern: `pass:(` + quoted + `|` + unquoted + `)`},
		{kind: "password", keywords: []string{"machine"}, back: letters, group: 1, vet: vetValue,
			pattern: `machine[ \t]+\S+[ \t]+login[ \t]+\S+[ \t]+password[ \t]+(\S+)`},
		// Flags: --password X, --token=X, --api-key X, -storepass X.
		{kind: "secret", keywords: flagKeywords, back: nameChars, next: afterName("= \t"), group: 2, kindFrom: 1, vet: vetFlag,
			pattern: `--?([A-Za-z][A-Za-z0-9_-]*)(?:=|[ \t]+(?:\\\r?\n[ \t]*)?)(` + quoted + `|` + unquoted + `)`},
		// Assignments: password=..., secret: ..., API_TOKEN="...",
		// "apiKey": "...", :password => '...'.
		{kind: "secret", keywords: flagKeywords, back: nameChars, next: operatorAfterName, group: 3, kindFrom: 1, vet: vetAssignment, extend: extendLine,
			pattern: `([A-Za-z_$@][A-Za-z0-9_.$@-]*)(\\?["']?[ \t]*(?::=|=>|\?=|\+=|=|:)[ \t]*` + nextLine + `)(` + quoted + `|` + unquoted + `)`},
		// Prose: a secret's name and then a key-like value ("the deploy
		// token 9f8e7d6c5b4a…", "private_key_id 0123abcd…").
		{kind: "secret", keywords: flagKeywords, back: nameChars, next: afterName(" \t"), group: 2, kindFrom: 1, vet: vetNamedValue,
			pattern: `([A-Za-z0-9_.$@-]+)[ \t]+(?:(?:is|was|of)[ \t]+)?([A-Za-z0-9_\-+/=.]{16,})`},
		// Prose: "the password is hunter2", "password for the db is X".
		{kind: "password", keywords: []string{"pass", "pwd"}, back: letters, group: 1, vet: vetProse,
			pattern: `(?i)(?:password|passphrase|passcode|passwd|pwd)(?:[ \t]+(?:for|of|to)[ \t]+\S+(?:[ \t]+\S+)?)?[ \t]+(?:is|was|=|:)[ \t]+(` + quoted + `|[^\s"'` + "`" + `]+)`},
		// Prose without a verb: "ssh in with password Tr0ub4dor&3".
		{kind: "password", keywords: []string{"pass", "pwd"}, back: letters, group: 1, vet: vetProseBare,
			pattern: `(?i)(?:password|passphrase|passcode|passwd|pwd)[ \t]+([^\s"'` + "`" + `]{6,})`},
	}
}

// flagKeywords prefilter the flag and assignment rules: a name that is
// secret holds one of them.
var flagKeywords = []string{"pass", "pwd", "pw", "secret", "token", "key", "cred"}

// afterName is a rule's next test: the name around the keyword is
// followed by one of the bytes in follow.
func afterName(follow string) func(string, int) bool {
	return func(s string, end int) bool {
		i := nameEnd(s, end)
		return i < len(s) && strings.IndexByte(follow, s[i]) >= 0
	}
}

// operatorAfterName is the assignment rule's next test: after the name,
// an optional closing quote and blanks, an operator (= : := => ?= +=).
func operatorAfterName(s string, end int) bool {
	i := nameEnd(s, end)
	if i < len(s) && s[i] == '\\' {
		i++
	}
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		i++
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i < len(s) && strings.IndexByte(":=?+", s[i]) >= 0
}

// nameEnd is where the name that runs through end stops.
func nameEnd(s string, end int) int {
	i := end
	for i < len(s) && i-end < maxNameLen && nameChars[s[i]] {
		i++
	}
	return i
}

// Byte sets anchored rules scan back over from a keyword.
var (
	letters     = bytesOf("A-Za-z")
	headerChars = bytesOf("A-Za-z-")
	schemeChars = bytesOf("A-Za-z0-9+.-")
	nameChars   = bytesOf("A-Za-z0-9_.$@-")
)

// unquote strips a value's quotes (also JSON-escaped ones).
func unquote(v string) string {
	for _, q := range []string{`\"`, `"`, `'`, "`"} {
		if len(v) >= 2*len(q) && strings.HasPrefix(v, q) && strings.HasSuffix(v, q) {
			return v[len(q) : len(v)-len(q)]
		}
	}
	return v
}

func isQuoted(v string) bool { return unquote(v) != v }

// placeholderRes are values that stand for a secret without being one.
var placeholderRes = lazyRegexp(`^(?:` + strings.Join([]string{
	`\$\{?[A-Za-z_][A-Za-z0-9_]*\}?`, // $VAR, ${VAR}
	`\$\{[^}]*\}`,                    // ${VAR:-x}
	`\$\{\{.*\}\}`,                   // ${{ secrets.X }}
	`\$\(.*\)`,                       // $(cat file)
	`\{\{.*\}\}`,                     // {{ .Values.x }}
	`%[A-Za-z_][A-Za-z0-9_]*%`,       // %VAR%
	`<[^<>]*>`,                       // <your-token>
	`\[[^\[\]]*\]`,                   // [REDACTED], [your key]
	`(?i:your[_-][\w-]*)`,            // your_api_key_here
	`[*xX.•…-]+`,                     // ****, xxxx, ...
	`(?i:string|str|int|integer|bool|boolean|number|null|none|nil|true|false|undefined|optional|required|redacted|secret|password|token|empty|any|object|bytes)`,
}, "|") + `)$`)

// codeRoots begin values that read a secret from somewhere rather than
// hold it: process.env.X, os.environ[...], settings.SECRET_KEY.
var codeRoots = lazyRegexp(`(?i)^(?:process\.env|import\.meta\.env|os\.environ|os\.getenv|env|deno\.env|system\.get_?env|secrets|vars|self|this|settings|config|cfg|conf|params|props|options|opts|args|req|request|ctx|context|app|rails|credentials)\b`)

// callRe is the start of a call: getpass.getpass(), response.json()[…].
var callRe = lazyRegexp(`^[A-Za-z_$][A-Za-z0-9_$.]*\(`)

// identChain is a dotted chain of identifiers with no digit (user.password,
// form.cleaned_data): a reference in code.
var identChain = lazyRegexp(`^[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z_]*)+$`)

// isPlaceholder reports whether an assignment's value is not a secret:
// a type name, an empty marker, a reference to the environment or code.
// after is the text that follows the value.
func isPlaceholder(v, after string) bool {
	quotedValue := isQuoted(v)
	u := strings.TrimSpace(unquote(v))
	if u == "" || placeholderRes().MatchString(u) {
		return true
	}
	if quotedValue {
		return false // a string literal is a value, whatever it looks like
	}
	// A call or an index: System.get_env("X"), os.Getenv("X"), ENV["X"].
	if a := strings.TrimLeft(after, " \t"); a != "" && (a[0] == '(' || a[0] == '[') {
		return true
	}
	if callRe().MatchString(u) {
		return true
	}
	return codeRoots().MatchString(u) || identChain().MatchString(u)
}

// vetValue rejects placeholders.
func vetValue(s string, _ []int, start, end int) bool {
	return !isPlaceholder(s[start:end], s[end:])
}

// vetBasic keeps a Basic credential that decodes to user:password, or
// that follows an Authorization header.
func vetBasic(s string, m []int, start, end int) bool {
	v := s[start:end]
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
		if raw, err := enc.DecodeString(v); err == nil && strings.Contains(string(raw), ":") {
			return true
		}
	}
	return strings.Contains(strings.ToLower(s[max(0, m[0]-40):m[0]]), "authorization")
}

// vetURLPassword rejects placeholders and a port followed by a path
// (https://host:8443/users/@alice).
func vetURLPassword(s string, m []int, start, end int) bool {
	v := s[start:end]
	digits := 0
	for digits < len(v) && v[digits] >= '0' && v[digits] <= '9' {
		digits++
	}
	if digits > 0 && (digits == len(v) || v[digits] == '/') {
		return false
	}
	return !isPlaceholder(v, "")
}

// vetOpenSSLPass keeps pass:X after openssl's -passin/-passout/-pass.
func vetOpenSSLPass(s string, m []int, start, end int) bool {
	before := strings.TrimRight(s[:m[0]], " \t")
	return (strings.HasSuffix(before, "-passin") || strings.HasSuffix(before, "-passout") || strings.HasSuffix(before, "-pass")) &&
		vetValue(s, m, start, end)
}

// vetFlag keeps a flag whose name is secret and whose value is not
// another flag, a path or a placeholder.
func vetFlag(s string, m []int, start, end int) bool {
	if m[0] > 0 && !strings.ContainsRune(" \t\n\"'(=", rune(s[m[0]-1])) {
		return false
	}
	if !secretName(s[m[2]:m[3]]) {
		return false
	}
	v := s[start:end]
	if strings.HasPrefix(v, "-") || isPath(v) {
		return false
	}
	return !isPlaceholder(v, s[end:])
}

// isPath reports whether v is a file path (--password-file's siblings
// that name no file in their flag: --token ~/.config/tok).
func isPath(v string) bool {
	u := unquote(v)
	return strings.HasPrefix(u, "/") || strings.HasPrefix(u, "~/") || strings.HasPrefix(u, "./") || strings.HasPrefix(u, "../")
}

// vetAssignment keeps an assignment whose key is secret and whose value
// is a value (not code, not a placeholder). An unquoted value of a key
// that starts a line (.env, YAML) runs to the end of the line: a
// password may have spaces.
func vetAssignment(s string, m []int, start, end int) bool {
	key := s[m[2]:m[3]]
	if !secretName(key) {
		return false
	}
	if strings.HasSuffix(s[:m[2]], "://") {
		return false // a URL's user: the url-password rule's
	}
	v := s[start:end]
	if isPlaceholder(v, s[end:]) || isPath(v) {
		return false
	}
	if isQuoted(v) {
		return true
	}
	if len(v) < 2 {
		return false
	}
	// On the next line only a lone value counts: not a nested key
	// (`password:\n  min_length: 8`), a list or a comment.
	if sep := s[m[4]:m[5]]; strings.Contains(sep, "\n") || strings.Contains(sep, `\n`) {
		return !strings.ContainsAny(v, ":=") && strings.IndexByte("-#{[", v[0]) < 0
	}
	return true
}

// extendLine runs an unquoted value on to the end of its line when its key
// starts the line (.env, YAML, INI): there a password may hold spaces,
// `&` or `)`. A trailing ` # comment` stays.
func extendLine(s string, m []int, start, end int) int {
	if isQuoted(s[start:end]) || isPlaceholder(s[start:end], s[end:]) {
		return end
	}
	ls := m[2]
	for ls > 0 && (s[ls-1] == ' ' || s[ls-1] == '\t') {
		ls--
	}
	lead := s[:ls]
	for _, w := range []string{"export", "set", "-", "+"} {
		if t := strings.TrimRight(strings.TrimSuffix(lead, w), " \t"); t != lead && atLineStart(t) {
			lead = t
			break
		}
	}
	if !atLineStart(lead) {
		return end
	}
	e := end
	for e < len(s) && s[e] != '\n' && s[e] != '\r' && !(s[e] == '\\' && e+1 < len(s) && strings.IndexByte(`nr"`, s[e+1]) >= 0) {
		if s[e] == '#' && (s[e-1] == ' ' || s[e-1] == '\t') {
			break
		}
		e++
	}
	for e > end && (s[e-1] == ' ' || s[e-1] == '\t') {
		e--
	}
	return e
}

// trimLineNumber drops the line number a read tool or cat -n puts before
// a line ("12: ", "00012| ", "    12\t") from the end of prefix.
func trimLineNumber(prefix string) string {
	p := strings.TrimRight(prefix, " \t")
	switch {
	case strings.HasSuffix(p, `\t`):
		p = p[:len(p)-2]
	case strings.HasSuffix(p, ":") || strings.HasSuffix(p, "|"):
		p = p[:len(p)-1]
	case len(p) < len(prefix) && strings.ContainsRune(prefix[len(p):], '\t'):
	default:
		return prefix
	}
	d := len(p)
	for d > 0 && p[d-1] >= '0' && p[d-1] <= '9' {
		d--
	}
	if d == len(p) || len(p)-d > 6 {
		return prefix
	}
	return strings.TrimRight(p[:d], " \t")
}

// atLineStart reports whether prefix ends where a line starts: at the
// start of the text, after a line break or after a JSON-escaped one.
func atLineStart(prefix string) bool {
	prefix = trimLineNumber(prefix)
	return prefix == "" || strings.HasSuffix(prefix, "\n") || strings.HasSuffix(prefix, "\r") ||
		strings.HasSuffix(prefix, `\n`) || strings.HasSuffix(prefix, `\r`)
}

// vetXMLElement keeps the text of an element whose name is secret.
func vetXMLElement(s string, m []int, start, end int) bool {
	return m[0] > 0 && s[m[0]-1] == '<' && secretName(s[m[2]:m[3]]) && vetValue(s, m, start, end)
}

// vetXMLKeyValue keeps value="…" after key="<a secret name>".
func vetXMLKeyValue(s string, m []int, start, end int) bool {
	before := strings.TrimSuffix(s[:m[0]], `\`)
	return strings.HasSuffix(strings.ToLower(before), `key="`) && secretName(s[m[2]:m[3]]) && vetValue(s, m, start, end)
}

// vetNamedValue keeps a value after a secret's name in prose when it
// looks generated: letters and digits, not a repeated character.
func vetNamedValue(s string, m []int, start, end int) bool {
	name := s[m[2]:m[3]]
	if !secretName(name) {
		prev := strings.Fields(s[max(0, m[0]-24):m[0]])
		if len(prev) == 0 || !secretName(prev[len(prev)-1]+"_"+name) {
			return false
		}
	}
	v := strings.TrimRight(s[start:end], ".")
	return strings.ContainsAny(v, "0123456789") && strings.IndexFunc(v, unicode.IsLetter) >= 0 && entropy(v) >= 3
}

// vetProseBare keeps a word after "password" that mixes letters and
// digits, as passwords do and the words of a sentence do not.
func vetProseBare(s string, m []int, start, end int) bool {
	v := strings.TrimRight(s[start:end], ".,;:!?)")
	return len(v) >= 6 && strings.ContainsAny(v, "0123456789") && strings.IndexFunc(v, unicode.IsLetter) >= 0 && !isPlaceholder(v, "")
}

// vetProse keeps a prose password that looks like one: not a plain
// lowercase word ("the password is required").
func vetProse(s string, _ []int, start, end int) bool {
	v := s[start:end]
	if isQuoted(v) {
		return !isPlaceholder(v, "")
	}
	v = strings.TrimRight(v, ".,;:!?)")
	if len(v) < 3 || isPlaceholder(v, "") {
		return false
	}
	for _, c := range v {
		if !unicode.IsLower(c) {
			return true
		}
	}
	return false
}

// keyKind names an assignment's secret after its key.
func keyKind(key string) string {
	k := strings.ToLower(key)
	switch {
	case strings.Contains(k, "pass") || strings.Contains(k, "pwd") || strings.HasSuffix(k, "pw"):
		return "password"
	case strings.Contains(k, "private"):
		return "private-key"
	case strings.Contains(k, "token"):
		return "token"
	case strings.Contains(k, "secret"):
		return "secret"
	case strings.Contains(k, "key"):
		return "api-key"
	case strings.Contains(k, "cred"):
		return "credentials"
	}
	return "secret"
}

// lazyRegexp compiles pattern on first use, not at start: a process that
// never weighs a candidate secret's value never compiles it, and the
// regexps compiled at init were most of this package's 0.85 ms of a CLI
// command's start (GODEBUG=inittrace=1).
func lazyRegexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
