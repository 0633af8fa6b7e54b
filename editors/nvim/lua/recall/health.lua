-- :checkhealth recall: the binary, the history it reads, the index and the
-- daemon, each with what to do when it is wrong.
local config = require("recall.config")

local M = {}

-- Neovim 0.10 has vim.health.start/ok/…; 0.8-0.9 vim.health.report_*; 0.7
-- only the "health" module with report_*.
local function reporter()
  local h = vim.health
  if not (h and (h.start or h.report_start)) then
    h = require("health")
  end
  return {
    start = h.start or h.report_start,
    ok = h.ok or h.report_ok,
    warn = h.warn or h.report_warn,
    error = h.error or h.report_error,
    info = h.info or h.report_info,
  }
end

-- run executes argv and returns stdout, or nil and an error message.
local function run(argv)
  local out = vim.fn.system(argv)
  if vim.v.shell_error ~= 0 then
    return nil, vim.trim(out)
  end
  return out
end

-- status_args are the global flags that make `recall status` read what the
-- plugin's server reads.
local function status_args(exe)
  local argv = { exe, "status", "--json", "--no-sync", "--quiet" }
  local o = config.options
  local db = o.db or (o.init_options or {}).db
  local index = o.index or (o.init_options or {}).index
  if db then
    vim.list_extend(argv, { "--db", vim.fn.expand(db) })
  end
  if index then
    vim.list_extend(argv, { "--index", vim.fn.expand(index) })
  end
  return argv
end

-- The status JSON ends the output; anything before it is a notice line.
local function decode_status(out)
  local json = out:match("(%b{})%s*$")
  if not json then
    return nil
  end
  local ok, v = pcall(vim.json and vim.json.decode or vim.fn.json_decode, json)
  return ok and v or nil
end

local function age(iso)
  if type(iso) ~= "string" then
    return "never"
  end
  local y, mo, d, h, mi, s = iso:match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)")
  if not y then
    return iso
  end
  local utc = os.time({ year = y, month = mo, day = d, hour = h, min = mi, sec = s, isdst = false })
  local now = os.time(os.date("!*t"))
  local secs = math.max(now - utc, 0)
  if secs < 120 then
    return secs .. " s ago"
  elseif secs < 7200 then
    return math.floor(secs / 60) .. " min ago"
  elseif secs < 172800 then
    return math.floor(secs / 3600) .. " h ago"
  end
  return math.floor(secs / 86400) .. " days ago"
end

-- The daemon's sockets live in $XDG_RUNTIME_DIR/recall, else
-- $TMPDIR/recall-<uid> (lsp/daemon.go runtimeDir).
local function runtime_dir()
  local xdg = vim.env.XDG_RUNTIME_DIR
  if xdg and xdg ~= "" then
    return xdg .. "/recall"
  end
  local uid = (vim.loop.getuid and vim.loop.getuid()) or vim.fn.trim(vim.fn.system({ "id", "-u" }))
  return (vim.env.TMPDIR and vim.env.TMPDIR ~= "" and vim.env.TMPDIR:gsub("/$", "") or "/tmp") .. "/recall-" .. uid
end

function M.check()
  local r = reporter()
  r.start("recall: the server binary")
  local cmd = config.options.cmd
  local exe = type(cmd) == "table" and cmd[1] or nil
  if type(exe) ~= "string" or vim.fn.executable(exe) ~= 1 then
    r.error(string.format("%s is not an executable", vim.inspect(exe)), {
      "install recall (go install, or go build -o ~/bin/recall . in the repository) so it is on $PATH",
      "or point the plugin at it: require('recall').setup({ cmd = { '/path/to/recall', 'lsp' } })",
    })
    return
  end
  local path = vim.fn.exepath(exe)
  local version, verr = run({ exe, "version" })
  if not version then
    r.error(string.format("%s version failed: %s", path, verr), { "rebuild or reinstall recall" })
    return
  end
  r.ok(string.format("%s (%s)", path ~= "" and path or exe, vim.trim(version)))

  r.start("recall: history and index")
  local out, serr = run(status_args(exe))
  local st = out and decode_status(out)
  if not st then
    r.error("recall status failed: " .. tostring(serr or out), {
      "set setup({ db = '/path/to/opencode.db' }) to OpenCode's database (or its data dir)",
      "or run `recall status` in a terminal to see what it tries",
    })
    return
  end
  if st.demo then
    r.warn("no OpenCode history found: the server reads its bundled demo history (" .. tostring(st.source) .. ")", {
      "set setup({ db = '/path/to/opencode.db' }) or $OPENCODE_DB to read your own",
    })
  else
    r.ok("history: " .. tostring(st.source) .. (st.eras and (" (storage " .. table.concat(st.eras, ", ") .. ")") or ""))
  end
  local fresh = st.freshness or {}
  local counts = string.format("%s sessions, %s messages, %s parts", st.sessions or 0, st.messages or 0, st.parts or 0)
  if (st.sessions or 0) == 0 and not fresh.syncedAt then
    r.warn("index " .. tostring(st.index) .. " is empty: it is built on the first search (or run `recall sync`)")
  elseif fresh.stale then
    r.warn(string.format("index %s: %s, last synced %s; the history changed since (the server catches up by itself)", tostring(st.index), counts, age(fresh.syncedAt)))
  else
    r.ok(string.format("index %s: %s, synced %s", tostring(st.index), counts, age(fresh.syncedAt)))
  end
  if st.semantic and st.semantic.notice then
    r.info(st.semantic.notice)
  end

  r.start("recall: server and daemon")
  local c = require("recall.client").current()
  local failed = require("recall.client").failure_message()
  if failed then
    r.error(failed, { "fix the cause, then :RecallRestart" })
  elseif c and c.initialized then
    r.ok(string.format("the server is running (client %d, attached to %d buffers)", c.id, vim.tbl_count(c.attached_buffers or {})))
  elseif c then
    r.warn("the server is starting (it has not answered initialize yet)")
  else
    r.info("the server is not running yet; it starts on the first command or file buffer")
  end
  local no_daemon = vim.env.RECALL_NO_DAEMON
  if no_daemon and no_daemon ~= "" and no_daemon ~= "0" and no_daemon ~= "false" then
    r.info("RECALL_NO_DAEMON is set: each Neovim runs its own server")
    return
  end
  local dir = runtime_dir()
  local socks = vim.fn.glob(dir .. "/*.sock", false, true)
  if #socks > 0 then
    r.ok(string.format("%d daemon socket%s in %s (servers of all editors share one index writer)", #socks, #socks == 1 and "" or "s", dir))
  else
    r.info("no daemon socket in " .. dir .. ": `recall lsp` starts one on first use")
  end
end

return M
