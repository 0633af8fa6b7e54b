-- Session blame, citations and resume (issue 14 §3): which past OpenCode
-- session wrote each line of a buffer (recall/blame), a one-line citation
-- of a session or message, and continuing a session in OpenCode
-- (recall/cite's resume argv, run in a terminal). See lsp/README.md and
-- docs/wire.md for the wire shapes.
local client = require("recall.client")
local config = require("recall.config")

local M = {}

local ns = vim.api.nvim_create_namespace("recall_blame")
M.ns = ns

local has011 = vim.fn.has("nvim-0.11") == 1

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO)
end

-- "2026-11-29T18:54:47.735Z" -> "2026-11-29 18:54Z"
local function short_time(t)
  local d, hm = tostring(t or ""):match("^(%d%d%d%d%-%d%d%-%d%d)T(%d%d:%d%d)")
  return d and (d .. " " .. hm .. "Z") or tostring(t or "")
end

local function clip(s, n)
  s = tostring(s or ""):gsub("%s+", " ")
  if vim.fn.strchars(s) <= n then
    return s
  end
  return vim.fn.strcharpart(s, 0, n - 1) .. "…"
end

-- label is the virtual text of a blamed range.
function M.label(r)
  return string.format("%s · %s · %s", clip(r.title ~= "" and r.title or r.sessionId, 48), short_time(r.time), r.sessionId)
end

-- results[bufnr] is the last blame shown in that buffer.
M.results = {}

-- clear removes bufnr's blame annotations.
function M.clear(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  M.results[bufnr] = nil
end

-- show draws res in bufnr: at the end of each range's first line its
-- session, time (UTC) and id, in a highlight of its own; the file's newest
-- pitfall above line 1.
function M.show(bufnr, res)
  vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  M.results[bufnr] = res
  local count = vim.api.nvim_buf_line_count(bufnr)
  for _, r in ipairs(res.ranges or {}) do
    local row = (tonumber(r.startLine) or 1) - 1
    if row >= 0 and row < count then
      local span = r.endLine ~= r.startLine and string.format(" (%d-%d)", r.startLine, r.endLine) or ""
      vim.api.nvim_buf_set_extmark(bufnr, ns, row, 0, {
        virt_text = { { "  ◀ " .. M.label(r) .. span, "Comment" } },
        virt_text_pos = "eol",
      })
    end
  end
  local p = (res.pitfalls or {})[1]
  if p and count > 0 then
    vim.api.nvim_buf_set_extmark(bufnr, ns, 0, 0, {
      virt_lines = { { { "bit us before: " .. clip(p.error, 70) .. " (" .. clip(p.title, 40) .. ")", "WarningMsg" } } },
      virt_lines_above = true,
    })
    -- A virtual line above line 1 shows only as filler: scroll it into
    -- view in windows at the top.
    for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
      vim.api.nvim_win_call(win, function()
        if vim.fn.line("w0") == 1 then
          vim.fn.winrestview({ topline = 1, topfill = 1 })
        end
      end)
    end
  end
end

-- range_at is the blamed range holding line (1-based) in bufnr's last blame.
function M.range_at(bufnr, line)
  local res = M.results[bufnr]
  for _, r in ipairs(res and res.ranges or {}) do
    if r.startLine <= line and line <= r.endLine then
      return r
    end
  end
  return nil
end

-- blame asks the server who wrote bufnr's lines (the buffer's text, saved
-- or not) and shows it; :RecallBlame again clears it. cb(err, res) runs
-- after, for callers that want the result.
function M.toggle(bufnr, cb)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if M.results[bufnr] then
    M.clear(bufnr)
    return cb and cb(nil, nil)
  end
  return M.blame(bufnr, cb)
end

function M.blame(bufnr, cb)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local path = vim.api.nvim_buf_get_name(bufnr)
  if path == "" or path:match("^%a[%w+.-]*://") or vim.bo[bufnr].buftype ~= "" then
    notify("Recall: :RecallBlame works on a file buffer", vim.log.levels.WARN)
    return cb and cb("not a file buffer")
  end
  local text = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n") .. "\n"
  vim.api.nvim_echo({ { "Recall: blaming " .. vim.fn.fnamemodify(path, ":t") .. "…", "Comment" } }, false, {})
  client.request("recall/blame", { path = vim.fn.fnamemodify(path, ":p"), text = text }, function(err, res)
    if err then
      notify(err, vim.log.levels.ERROR)
      return cb and cb(err)
    end
    if not vim.api.nvim_buf_is_valid(bufnr) then
      return
    end
    M.show(bufnr, res)
    local sessions = {}
    for _, r in ipairs(res.ranges or {}) do
      sessions[r.sessionId] = true
    end
    local n = vim.tbl_count(sessions)
    vim.api.nvim_echo({ { string.format("Recall: %d of %d lines written by %d past session%s (:RecallBlameOpen on a line opens its message)",
      res.attributed or 0, res.lines or 0, n, n == 1 and "" or "s"), "Comment" } }, false, {})
    return cb and cb(nil, res)
  end)
end

-- open_line opens the transcript at the message that wrote the cursor's
-- line (blaming the buffer first when it was not).
function M.open_line()
  local bufnr = vim.api.nvim_get_current_buf()
  local line = vim.api.nvim_win_get_cursor(0)[1]
  local function go()
    local r = M.range_at(bufnr, line)
    if not r then
      notify(string.format("Recall: line %d was not written by a recorded session", line), vim.log.levels.WARN)
      return
    end
    M.open_uri(r.uri)
  end
  if M.results[bufnr] then
    return go()
  end
  M.blame(bufnr, function(err)
    if not err then
      go()
    end
  end)
end

-- open_uri opens a server recall: URI (a range's or a pitfall's) as a
-- transcript buffer.
function M.open_uri(uri)
  local rest = tostring(uri or ""):match("^recall:/+(.+)$")
  if not rest then
    notify("Recall: not a transcript URI: " .. tostring(uri), vim.log.levels.ERROR)
    return
  end
  return require("recall.transcript").open("recall://" .. rest)
end

-- Citations and resume --------------------------------------------------

-- M.last_hit is the hit (or session) last picked, for :RecallCite and
-- :RecallResume outside a transcript.
M.last_hit = nil

-- target is what to cite or resume from the current buffer: the msg_ id on
-- or above the cursor in a transcript, else its anchor or session; outside
-- one, the hit last picked.
function M.target()
  local bufnr = vim.api.nvim_get_current_buf()
  local info = vim.b[bufnr].recall
  if type(info) == "table" and info.session then
    local row = vim.api.nvim_win_get_cursor(0)[1]
    local lines = vim.api.nvim_buf_get_lines(bufnr, 0, row, false)
    for i = #lines, 1, -1 do
      local id = lines[i]:match("(msg_[%w]+)")
      if id then
        return id
      end
    end
    return info.anchor or info.session
  end
  local h = M.last_hit
  if h then
    return h.messageId ~= nil and h.messageId ~= "" and h.messageId or h.sessionId or h.id
  end
  return nil
end

local function cite(target, cb)
  target = target ~= nil and target ~= "" and target or M.target()
  if not target then
    notify("Recall: nothing to cite here; open a transcript (or pick a hit) first, or pass a ses_/msg_ id", vim.log.levels.WARN)
    return
  end
  client.request("recall/cite", { target = target }, function(err, res)
    if err then
      notify(err, vim.log.levels.ERROR)
      return
    end
    cb(res)
  end)
end

-- copy_citation copies the citation line of target (default: M.target())
-- to the unnamed and clipboard registers.
function M.copy_citation(target, done)
  cite(target, function(res)
    vim.fn.setreg('"', res.citation)
    -- No clipboard provider (a headless or remote Neovim) leaves "+" out.
    if vim.fn.has("clipboard") == 1 then
      pcall(vim.fn.setreg, "+", res.citation)
    end
    notify("Recall: copied " .. res.citation)
    if done then
      done(res)
    end
  end)
end

-- resume_argv is the resume argv with setup's resume_cmd (an opencode
-- executable) in place of "opencode".
function M.resume_argv(argv)
  argv = vim.deepcopy(argv or {})
  if config.options.resume_cmd and argv[1] == "opencode" then
    argv[1] = config.options.resume_cmd
  end
  return argv
end

-- resume opens a terminal running the command that continues target's
-- session in OpenCode, in the session's directory.
function M.resume(target, done)
  cite(target, function(res)
    local r = res.resume or {}
    local argv = M.resume_argv(r.argv)
    if r.cwd == nil or r.cwd == "" or vim.fn.isdirectory(r.cwd) == 0 then
      notify(string.format("Recall: the session's directory %s no longer exists; run %s where the project is now",
        tostring(r.cwd), table.concat(argv, " ")), vim.log.levels.ERROR)
      return
    end
    if vim.fn.executable(argv[1]) == 0 then
      notify(string.format("Recall: %s is not on the PATH; install OpenCode or set resume_cmd in setup()", argv[1]), vim.log.levels.ERROR)
      return
    end
    vim.cmd("botright split")
    vim.cmd("enew")
    local job
    if has011 then
      job = vim.fn.jobstart(argv, { term = true, cwd = r.cwd })
    else
      job = vim.fn.termopen(argv, { cwd = r.cwd })
    end
    vim.b.recall_resume = { argv = argv, cwd = r.cwd, job = job, session = res.sessionId }
    if done then
      done(res, job)
    end
  end)
end

-- Find in a transcript --------------------------------------------------

-- pattern is a case-insensitive, literal Vim pattern matching any term of
-- query (quotes dropped, -exclusions left out).
function M.pattern(query)
  local terms = {}
  for phrase in tostring(query or ""):gmatch('"([^"]+)"') do
    table.insert(terms, phrase)
  end
  local rest = tostring(query or ""):gsub('"[^"]*"', " ")
  for word in rest:gmatch("%S+") do
    if not word:match("^%-") and #word > 1 then
      table.insert(terms, word)
    end
  end
  if #terms == 0 then
    return nil
  end
  local escaped = vim.tbl_map(function(t)
    return vim.fn.escape(t, "\\")
  end, terms)
  return "\\V\\c\\(" .. table.concat(escaped, "\\|") .. "\\)"
end

-- highlight marks the query's hits in every window showing bufnr.
function M.highlight(bufnr)
  local pat = vim.b[bufnr].recall_query_pattern
  for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
    vim.api.nvim_win_call(win, function()
      if vim.w.recall_hit_match then
        pcall(vim.fn.matchdelete, vim.w.recall_hit_match)
        vim.w.recall_hit_match = nil
      end
      if pat then
        vim.w.recall_hit_match = vim.fn.matchadd("RecallHit", pat)
      end
    end)
  end
end

-- set_query makes query the one ]h/[h jump between in bufnr.
function M.set_query(bufnr, query)
  vim.b[bufnr].recall_query = query
  vim.b[bufnr].recall_query_pattern = M.pattern(query)
  M.highlight(bufnr)
end

-- jump moves to the next (dir 1) or previous (dir -1) hit of the
-- transcript's query, wrapping around.
function M.jump(dir)
  local pat = vim.b.recall_query_pattern
  if not pat then
    notify("Recall: no search query for this transcript; open it from :RecallSearch", vim.log.levels.WARN)
    return false
  end
  local flags = dir < 0 and "bw" or "w"
  if vim.fn.search(pat, flags) == 0 then
    notify("Recall: no hits of " .. tostring(vim.b.recall_query) .. " in this window", vim.log.levels.WARN)
    return false
  end
  return true
end

vim.cmd("highlight default link RecallHit Search")

return M
