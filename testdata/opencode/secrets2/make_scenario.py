#!/usr/bin/env python3
"""Writes scenario.json (the ocgen script) and secrets.json (every planted
value, by kind) for the secrets2 fixture: secrets in the shapes people paste
that the first fixture lacks. All values are fake.

    python3 make_scenario.py    # from this directory
"""
import base64
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

planted = {}   # kind -> [values]; every 12-char run of a value must stay hidden
short = {}     # kind -> [texts]: a short secret in its context


def plant(kind, value):
    planted.setdefault(kind, []).append(value)
    return value


def b64(s):
    return base64.b64encode(s.encode()).decode()


def body(seed, n=64, alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"):
    """A fake base64 line of n characters."""
    out, x = [], seed
    for _ in range(n):
        x = (x * 1103515245 + 12345) % (1 << 31)
        out.append(alphabet[(x >> 8) % 64])
    return "".join(out)


def pem(label, seed, lines=3, end=True, tag="PRIVATE KEY"):
    rows = ["FAKE" + body(seed + i, 60) for i in range(lines)]
    for r in rows:
        plant(label, r)
    text = "-----BEGIN %s-----\n" % tag + "\n".join(rows) + "\n"
    if end:
        text += "-----END %s-----\n" % tag
    return text


def hexs(seed, n):
    """A fake lowercase hex string of n characters."""
    out, x = [], seed * 7919
    for _ in range(n):
        x = (x * 1103515245 + 12345) % (1 << 31)
        out.append("0123456789abcdef"[(x >> 8) % 16])
    return "".join(out)


# ---- the values ---------------------------------------------------------

stripe_live = plant("stripe-secret-key", "sk_live_51HFAKEfake0123456789abcdefABCDEF0123456789xyz")
stripe_rk = plant("stripe-restricted-key", "rk_live_51HFAKEfake9876543210ZYXWVUabcdefghij")
google = plant("google-api-key", "AIzaSyA-FAKEfake0123456789_abcdefGHIJKL")
assert len(google) == 39
google_cut = plant("google-api-key", "AIzaSyB-FAKEfake9876543210_zyxwvuTSRQPO")
assert len(google_cut) == 39
npm = plant("npm-token", "npm_FAKEfake0123456789abcdefghijklmnopqr")
assert len(npm) == 40
slack_hook = plant("slack-webhook", "T0FAKE0001/B0FAKE0002/FAKEfakeFAKEfake01234567")
sendgrid = plant("sendgrid-key", "SG.FAKEfake0123456789abcd.FAKEfake0123456789abcdefghijklmnopqrstuvwxy")
assert len(sendgrid) == 69
azure_key = plant("azure-account-key", "FAKE" + body(11, 82) + "==")
gcp_key_id = plant("gcp-private-key-id", hexs(3, 40))
basic_raw = "ci-bot:FAKE-basic-pw-0001"
basic = plant("basic-auth-header", b64(basic_raw))
curl_pw = plant("curl-user-password", "FAKE-curl-pw-0002")
mysql_pw = plant("mysql-p-password", "FAKEmysqlPW0003")
docker_pw = plant("docker-login-password", "FAKE-docker-pw-0004")
flag_token = plant("flag-token", "FAKEflagToken0005xyz")
flag_pw = plant("flag-password", "FAKE-flag-pw-0006")
flag_api = plant("flag-api-key", "FAKEflagApiKey0007xyz")
aws_id = plant("aws-access-key-id", "AKIAFAKE2222TEST5678")
aws_secret = plant("aws-secret-access-key", "FAKEsecretAccessKey0123456789abcdefGHIJK")
ghp_url = plant("github-token-in-url", "ghp_FAKEfake0123456789abcdefGHIJKLMNOPQR")
assert len(ghp_url) == 40
glpat = plant("gitlab-pat", "glpat-FAKEfake0123456789ab")
hf = plant("huggingface-token", "hf_FAKEfakeFAKEfakeFAKEfakeFAKEfakeFA")
twilio_sk = plant("twilio-api-key", "SK" + hexs(5, 32))
twilio_auth = plant("twilio-auth-token", hexs(6, 32))
shopify = plant("shopify-token", "shpat_" + hexs(7, 32))
digitalocean = plant("digitalocean-token", "dop_v1_" + hexs(8, 64))
telegram = plant("telegram-bot-token", "7012345678:AAFAKEfake0123456789abcdefGHIJKLMNO")
mailgun = plant("mailgun-key", "key-" + hexs(9, 32))
datadog = plant("datadog-api-key", hexs(10, 32))
jwt = plant("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjaS1ib3QtZmFrZSIsImV4cCI6MTk5OTk5OTk5OX0.FAKEsig0123456789abcdefGHIJKLMN")
age = plant("age-secret-key", "AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE")
assert len(age) == 16 + 58
URLSAFE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
vault = plant("vault-token", "hvs.CAESIFAKE" + body(21, 96, URLSAFE))
pypi = plant("pypi-token", "pypi-AgEIcHlwaS5vcmcCJFAKE" + body(22, 60, URLSAFE))
netrc_pw = plant("netrc-password", "FAKEnetrcPW0008")
pg_pw = plant("pgpassword-env", "FAKEpgPW0009")
openai = plant("openai-key", "sk-proj-FAKEfake9876543210FAKEfake9876543210xyz")
anthropic = plant("anthropic-key", "sk-ant-api03-FAKEfake0123456789FAKEfake0123456789-FAKEfakeAA")
k8s_pw = plant("k8s-secret-data", b64("FAKE-k8s-pw-0010"))
cookie = plant("session-cookie", "FAKEsessionCookie0011abcdef")
docker_cfg = plant("docker-config-auth", b64("bot:FAKE-docker-cfg-0012"))
sshpass_pw = plant("sshpass-password", "FAKE-sshpass-0013")
openssl_pw = plant("openssl-pass", "FAKEp12pass0014")
redis_pw = plant("redis-cli-password", "FAKEredisCli0015")
prose_pw = plant("prose-password", "Tr0ub4dor&3-FAKE-0016")
title_pw = plant("password-in-title", "FAKEtitlePW0017")
multiword = plant("quoted-multi-word-password", "correct horse battery staple")
yaml_multi = plant("yaml-multi-word-password", "violet tangerine ocelot 42")
next_line_pw = plant("password-on-next-line", "FAKE-next-line-pw-0018")
url_empty = plant("url-password-empty-user", "FAKEredisPW0001xyz")
url_slash = plant("url-password-with-slash", "FAKE/mq/pw0019")
url_at = plant("url-password-with-at", "FAKE@pg@pw0020")
url_srv = plant("url-password-mongodb-srv", "FAKEmongoPW0021")
heroku = plant("heroku-api-key", "01234567-89ab-4def-8123-fakefake0022")
short.setdefault("short-password-before-comma", []).append("password=Zq9,")
short.setdefault("short-password-in-json", []).append('"password": "k9!"')

gcp_pem = pem("gcp-service-account-private-key", 31, lines=3)
ec_pem = pem("pem-in-tool-input", 41, lines=2, tag="EC PRIVATE KEY")
ed_no_end = pem("pem-without-end", 51, lines=3, end=False, tag="OPENSSH PRIVATE KEY")
pgp_rows = ["lQOYBF" + body(61, 58), body(62, 64), body(63, 40)]
for r in pgp_rows:
    plant("pgp-private-key", r)
pgp = ("-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\nComment: release signing key (FAKE)\n\n"
       + "\n".join(pgp_rows) + "\n=FAKE\n-----END PGP PRIVATE KEY BLOCK-----\n")
first_prompt_rows = ["b3BlbnNzaC1rZXktdjEAAAAAFAKE" + body(71, 36), body(72, 64), body(73, 30)]
for r in first_prompt_rows:
    plant("pem-in-first-prompt", r)
rsa_rows = ["MIIEpAIBAAKCAQEAFAKE" + body(81, 44), body(82, 64), body(83, 50)]
for r in rsa_rows:
    plant("pem-attached-file", r)

gcp_sa = json.dumps({
    "type": "service_account",
    "project_id": "orders-api-staging",
    "private_key_id": gcp_key_id,
    "private_key": gcp_pem,
    "client_email": "deployer@orders-api-staging.iam.gserviceaccount.com",
    "client_id": "100000000000000000001",
    "token_uri": "https://oauth2.googleapis.com/token",
}, indent=2) + "\n"

files = {
    "README.md": "# paydesk\n\nCheckout and billing service (payments outage runbooks live in docs/).\n",
    ".env.production": (
        "# production settings for paydesk\n"
        "APP_ENV=production\n"
        "STRIPE_RESTRICTED_KEY=" + stripe_rk + "\n"
        "SENDGRID_API_KEY=" + sendgrid + "\n"
        "MAILGUN_API_KEY=" + mailgun + "\n"
        "DD_API_KEY=" + datadog + "\n"
        "TWILIO_API_KEY=" + twilio_sk + "\n"
        "TWILIO_AUTH_TOKEN=" + twilio_auth + "\n"
        "TELEGRAM_BOT_TOKEN=" + telegram + "\n"
        "HEROKU_API_KEY=" + heroku + "\n"
        "ANTHROPIC_API_KEY=" + anthropic + "\n"
        "LOG_FORMAT=json\n"),
    "config/gcp-sa.json": gcp_sa,
    "config/appsettings.json": json.dumps({
        "Logging": {"LogLevel": {"Default": "Information"}},
        "ConnectionStrings": {
            "Blobs": "DefaultEndpointsProtocol=https;AccountName=paydeskblobs;AccountKey=" + azure_key + ";EndpointSuffix=core.windows.net",
        },
        "Smtp": {"user": "paydesk-mailer", "password": "k9!"},
    }, indent=2) + "\n",
    "config/db.py": (
        "# database settings for the reconciliation job\n"
        "import psycopg2\n\n"
        'DB_PASSWORD = "' + multiword + '"\n\n'
        "def connect_replica():\n"
        '    return psycopg2.connect(host="replica.internal", user="recon", password=Zq9, port=5432)\n\n'
        'openai_api_key = "' + openai + '"\n'),
    "config/smtp.yaml": (
        "# outbound mail relay\n"
        "smtp:\n"
        "  host: smtp.internal\n"
        "  username: paydesk-mailer\n"
        "  smtp_password: " + yaml_multi + "\n"
        "  relay_password:\n"
        "    " + next_line_pw + "\n"
        "  tls: true\n"),
    "config/runtime.exs": (
        "import Config\n\n"
        "config :paydesk, PaydeskWeb.Endpoint,\n"
        '  secret_key_base: System.get_env("SECRET_KEY_BASE"),\n'
        '  live_view: [signing_salt: System.get_env("LIVE_VIEW_SALT")]\n'),
    "deploy/k8s-secret.yaml": (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: paydesk-db\ntype: Opaque\ndata:\n"
        "  password: " + k8s_pw + "\n"),
    "deploy/netrc": "machine artifacts.example.invalid login paydesk password " + netrc_pw + "\n",
    "deploy/aws-credentials": (
        "[paydesk-deploy]\naws_access_key_id = " + aws_id + "\naws_secret_access_key = " + aws_secret + "\nregion = eu-west-1\n"),
    "deploy/npmrc": "//registry.npmjs.org/:_authToken=" + npm + "\nalways-auth=true\n",
    "deploy/docker-config.json": json.dumps({"auths": {"registry.example.invalid": {"auth": docker_cfg}}}, indent=2) + "\n",
    "web/maps.js": ("// map widget on the checkout page\n"
                    "export const mapsConfig = { key: '" + google + "', region: 'EU' };\n"),
    "keys/ci_ed25519": ed_no_end + ("\n".join("FAKE" + body(90 + i, 60) for i in range(3))) + "\n-----END OPENSSH PRIVATE KEY-----\n",
    "keys/release-signing.asc": pgp,
    "keys/id_rsa": "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(rsa_rows) + "\n-----END RSA PRIVATE KEY-----\n",
}
# The ed25519 file's later lines are shown by no tool (head -n 4 only).

# Recall keeps the first 12 KB and the last 4 KB of a long tool output: a
# secret across either cut.
HEAD, TAIL = 12 << 10, 4 << 10
cut_head = plant("quoted-password-across-output-head-cut", "ok harbor-quokka-5512-amber")
cut_tail = plant("quoted-secret-across-output-tail-cut", "xy cobalt-heron-8812-ridge")
log_lines = ["%05d deploy step %d: synced shard %d of the ledger" % (i, i, i % 97) for i in range(600)]
log = "\n".join(log_lines) + "\n"
a = 'api_token="' + cut_head + '"\n'
i = HEAD - 15 - len('api_token="')  # 15 characters of the value before the cut
log = log[:i] + a + log[i:]
log = log[:HEAD + 4000] + "\n".join(log_lines[:200]) + "\n"
b = 'webhook_secret: "' + cut_tail + '"\n'
value_at = len(log) + len('webhook_secret: "')
log += b
# The kept tail starts 10 characters into the value.
trailer = "".join("%05d post-deploy check %d ok\n" % (j, j) for j in range(400))
need = value_at + 10 + TAIL - len(log)
log += trailer[:need - 1] + "\n"
assert len(log) - TAIL == value_at + 10
files["logs/deploy.log"] = log


# ---- sessions -------------------------------------------------------------

def turn(prompt, *steps, files=None):
    t = {"prompt": prompt, "steps": list(steps)}
    if files:
        t["files"] = files
    return t


def bash(command, description):
    return {"name": "bash", "args": {"command": command, "description": description}}


def read(path):
    return {"name": "read", "args": {"filePath": "{{dir}}/" + path}}


filler = ("Context for the on-call engineer: checkout has been flaky since the certificate rotation on Monday, "
          "and the runbook for the paydesk deploy host is out of date. I copied the key the old host used so "
          "you can compare fingerprints with what the deploy host has now, and please keep the rest of this "
          "session about the host key only. ")
first_prompt_key = filler + "Here it is:\n-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(first_prompt_rows) + "\n-----END OPENSSH PRIVATE KEY-----\nWhich host still has it?"
assert first_prompt_key.index("b3Blbn") < 400 < first_prompt_key.index("b3Blbn") + 64, first_prompt_key.index("b3Blbn")

filler2 = ("The maps widget on the checkout page stopped rendering for customers in the EU region after the CDN "
           "migration, and support has a queue of tickets about the blank map. The browser console says the key "
           "is rejected for the referrer. Our project uses one browser key for both staging and production; the "
           "old one I found in a support ticket from last week, pasted by a customer, is ")
first_prompt_google = filler2 + google_cut + " and I think it was revoked. What does web/maps.js use?"
i = first_prompt_google.index(google_cut)
assert i < 400 - 12 and i + len(google_cut) > 400, i

filler3 = ("The reconciliation job has been failing every night since the replica moved to the new subnet, and "
           "the on-call notes say the job reads its database password from the environment of the cron host. "
           "I checked the cron host early this morning and the job's environment file has exactly one line in it, "
           "which I am pasting here so you can compare it with config/db.py: ")
cut_prompt = plant("quoted-password-across-first-prompt-cut", "ok plum-orchard-lantern-7731")
first_prompt_cut = filler3 + 'DB_PASSWORD="' + cut_prompt + '" and nothing else. Why would the job fail?'
j = first_prompt_cut.index(cut_prompt)
assert j + 12 < 400 < j + len(cut_prompt), j

sessions = [
    {"key": "P1", "project": "paydesk",
     "title": "Payments outage after rotating " + stripe_live,
     "turns": [
         turn("Payments are failing in production since this morning. I rotated the Stripe secret key to "
              + stripe_live + " in the dashboard; does .env.production still hold the old restricted key?",
              {"reasoning": "The pasted live key " + stripe_live + " must not go in a file; check .env.production for STRIPE_RESTRICTED_KEY.",
               "tools": [bash("cat .env.production", "Show the production environment file")]},
              {"text": "The production env file keeps STRIPE_RESTRICTED_KEY=" + stripe_rk + " and the SendGrid, Mailgun, Datadog, Twilio, Telegram and Heroku keys inline. The payments outage comes from the restricted key: rotate it as well, and move every key to the secret manager."}),
     ]},
    {"key": "P2", "project": "paydesk",
     "title": "Service account and blob storage settings",
     "turns": [
         turn("Check the GCP service account file and the blob storage connection string in appsettings.json; which client_email do we deploy with?",
              {"tools": [read("config/gcp-sa.json")]},
              {"tools": [read("config/appsettings.json")]},
              {"reasoning": "The blob connection string carries AccountKey=" + azure_key + " for AccountName=paydeskblobs.",
               "text": "The service account is deployer@orders-api-staging.iam.gserviceaccount.com (private_key_id " + gcp_key_id + "). The blob storage connection string embeds the storage AccountKey; use a managed identity instead."}),
     ]},
    {"key": "P3", "project": "paydesk",
     "title": "Deploy host command lines",
     "turns": [
         turn("Run the deploy host checks: the artifact upload with curl, the database ping and the registry login.",
              {"tools": [bash("curl -sS -u ci-deployer:" + curl_pw + " https://artifacts.example.invalid/api/ping", "Ping the artifact store"),
                         bash("curl -sS -H 'Authorization: Basic " + basic + "' https://artifacts.example.invalid/api/upload", "Upload with a Basic header")]},
              {"tools": [bash("mysql -h db.internal -u recon -p" + mysql_pw + " paydesk -e 'select 1'", "Ping the database"),
                         bash("docker login -u paydesk-bot -p " + docker_pw + " registry.example.invalid", "Log in to the registry")]},
              {"tools": [bash("gh release upload v2.4.1 dist/paydesk.tgz --token " + flag_token, "Upload the release"),
                         bash("./deploy.sh --env production --password " + flag_pw + " --api-key " + flag_api, "Run the deploy script"),
                         bash("PGPASSWORD=" + pg_pw + " psql -h db.internal -U recon -c 'select 1'", "Ping postgres")]},
              {"tools": [bash("sshpass -p '" + sshpass_pw + "' ssh deploy@host.internal uptime", "Check the deploy host"),
                         bash("redis-cli -h cache.internal -a " + redis_pw + " ping", "Ping the cache"),
                         bash("curl -sS -X POST -d '{\"text\":\"deploy started\"}' https://hooks.slack.com/services/" + slack_hook, "Announce the deploy in Slack"),
                         bash("openssl pkcs12 -export -in cert.pem -inkey key.pem -passout pass:" + openssl_pw + " -out bundle.p12", "Bundle the certificate")]},
              {"text": "None of the deploy host tools (mysql, docker, gh, sshpass, redis-cli) are installed here, and the artifact store does not resolve from this machine. Run the checks on the deploy host itself."}),
     ]},
    {"key": "P4", "project": "paydesk",
     "title": "Broker and cache URLs",
     "turns": [
         turn("Our workers connect with redis://:" + url_empty + "@cache.internal:6379/0 and amqp://orders:" + url_slash
              + "@mq.internal:5672/orders, the ledger uses postgres://ledger:" + url_at + "@db.internal:5432/ledger and the archive mongodb+srv://archiver:"
              + url_srv + "@cluster0.example.mongodb.net/archive. Add the git remote with the CI token and list remotes.",
              {"tools": [bash("git remote add origin https://x-access-token:" + ghp_url + "@github.com/acme/paydesk.git && git remote -v", "Add the origin remote")]},
              {"text": "The origin remote now embeds the CI token in its URL; prefer a credential helper. The broker and cache URLs carry passwords too: keep them in the secret manager."}),
     ]},
    {"key": "P5", "project": "paydesk",
     "title": "Signing keys on the build host",
     "turns": [
         turn("Write the CI signing key I give you to keys/ci_ec.pem, then show the first lines of keys/ci_ed25519 and the release signing key.",
              {"tools": [{"name": "write", "args": {"filePath": "{{dir}}/keys/ci_ec.pem", "content": ec_pem}}]},
              {"tools": [bash("head -n 4 keys/ci_ed25519", "Show the start of the ed25519 key")]},
              {"tools": [bash("cat keys/release-signing.asc", "Show the release signing key")]},
              {"text": "keys/ci_ec.pem is written. keys/ci_ed25519 is an OpenSSH private key and keys/release-signing.asc a PGP private key block; neither belongs in the repository."}),
         turn("Here is the old deploy key as a file; is it the same as keys/id_rsa?",
              {"tools": [read("keys/id_rsa")]},
              {"text": "The attached deploy key and keys/id_rsa hold the same RSA private key."},
              files=["keys/id_rsa"]),
     ]},
    {"key": "P6", "project": "paydesk",
     "title": "Old deploy host key",
     "turns": [
         turn(first_prompt_key,
              {"text": "That OpenSSH key is not on the deploy host any more: its fingerprint differs from the host's current key."}),
     ]},
    {"key": "P7", "project": "paydesk",
     "title": "Blank map on the checkout page",
     "turns": [
         turn(first_prompt_google,
              {"tools": [read("web/maps.js")]},
              {"text": "web/maps.js uses a different browser key than the revoked one from the ticket; check its HTTP referrer restrictions for the new CDN domain."}),
     ]},
    {"key": "P8", "project": "paydesk",
     "title": "Credentials in config files",
     "turns": [
         turn("Audit the config files for inline credentials: config/db.py, config/smtp.yaml, config/runtime.exs and deploy/k8s-secret.yaml.",
              {"tools": [read("config/db.py"), read("config/smtp.yaml")]},
              {"tools": [read("config/runtime.exs"), read("deploy/k8s-secret.yaml")]},
              {"tools": [bash("cat deploy/netrc deploy/aws-credentials deploy/npmrc deploy/docker-config.json", "Show the deploy credential files")]},
              {"text": "config/db.py hardcodes DB_PASSWORD and the replica password (password=Zq9, before the port), config/smtp.yaml the relay passwords, the k8s Secret a base64 password, and the deploy files a netrc password, AWS keys, an npm token and a registry auth. config/runtime.exs is fine: secret_key_base comes from System.get_env."}),
     ]},
    {"key": "P9", "project": "paydesk",
     "title": "Model download token audit",
     "turns": [
         turn("Use a subagent to find where the Hugging Face token for the fraud model is configured.",
              {"tools": [{"name": "task", "args": {"description": "Find the model token", "prompt": "Find where the fraud model download token is configured in {{dir}} and report it.", "subagent_type": "explore"},
                          "steps": [{"tools": [{"name": "grep", "args": {"pattern": "token", "path": "{{dir}}/deploy"}}]},
                                    {"text": "The fraud model is pulled with the Hugging Face token " + hf + " (pasted in the runbook, not in the repo); the npm token lives in deploy/npmrc."}]}]},
              {"text": "The subagent found the Hugging Face token only in the runbook, not in the repository."}),
     ]},
    {"key": "P10", "project": "paydesk",
     "title": "Replica database check",
     "turns": [
         {"shell": "mysql -h replica.internal -u recon -p" + mysql_pw + " -e 'show slave status'"},
         turn("The GitLab mirror token is on the next line, is it still valid?\n" + glpat + "\nAlso the DigitalOcean token " + digitalocean + " and the Shopify one " + shopify + ".",
              {"text": "I can't validate tokens from here; revoke the GitLab, DigitalOcean and Shopify tokens you pasted and issue new ones."}),
     ]},
    {"key": "P11", "project": "paydesk",
     "title": "Staging login notes",
     "rename": "Staging login password=" + title_pw,
     "turns": [
         turn("For the record, the staging password is " + prose_pw + " and the admin console sends Cookie: session=" + cookie
              + "; the CI calls the API with Authorization: Bearer " + jwt + ". Where should these live?",
              {"reasoning": "Vault token hvs.* and age keys also go to the secret manager; the user has " + vault + " in the runbook and the backup age key " + age + ".",
               "text": "Put the staging password, the session cookie and the CI bearer token in the secret manager, and rotate them since they were shared in chat. The PyPI token " + pypi + " from the release notes should be rotated too."}),
     ]},
]

sessions.append(
    {"key": "P12", "project": "paydesk",
     "title": "Nightly reconciliation job",
     "turns": [
         turn(first_prompt_cut,
              {"tools": [bash("cat logs/deploy.log", "Show the deploy log")]},
              {"text": "The deploy log shows every shard synced; the job's environment holds a different DB_PASSWORD than config/db.py, which is why it fails to connect."}),
     ]})

scenario = {
    "name": "recall-secrets2",
    "root": "/tmp/ocgen/recall-secrets2",
    "projects": [{"name": "paydesk", "files": files}],
    "sessions": sessions,
}

searchable = [
    "payments outage", "restricted key", "STRIPE_RESTRICTED_KEY", "SENDGRID_API_KEY", "client_email",
    "AccountName", "paydeskblobs", "ci-deployer", "artifacts.example.invalid", "registry.example.invalid",
    "PGPASSWORD", "cache.internal", "mq.internal", "x-access-token", "github.com/acme/paydesk",
    "ci_ec.pem", "release-signing.asc", "fingerprints", "maps widget", "referrer", "DB_PASSWORD",
    "smtp_password", "relay_password", "secret_key_base", "SECRET_KEY_BASE", "System.get_env", "paydesk-db",
    "aws_secret_access_key", "_authToken", "Hugging Face", "GitLab mirror", "staging password", "Cookie",
    "Authorization", "Bearer", "secret manager", "reconciliation job", "post-deploy check", "api_token",
    "webhook_secret",
]

with open(os.path.join(HERE, "scenario.json"), "w") as f:
    json.dump(scenario, f, indent=1)
    f.write("\n")
with open(os.path.join(HERE, "secrets.json"), "w") as f:
    json.dump({
        "_note": "Every planted secret (all fake), by kind: no output may hold a value or any 12-character run of one. "
                 "'short' are secrets under 8 characters, listed in their context (that text must not appear). "
                 "'searchable' are the words around them, which must stay searchable.",
        "secrets": planted,
        "short": short,
        "searchable": searchable,
    }, f, indent=1)
    f.write("\n")
print(len(planted), "kinds,", sum(len(v) for v in planted.values()), "values")
