-- Recall for Neovim: search and read past OpenCode sessions through the
-- `recall lsp` server (see lsp/README.md for the wire contract).
--
--   require("recall").setup{ db = "~/.local/share/opencode/opencode.db" }
--
-- Commands (plugin/recall.lua): :RecallSearch [query], :RecallSessions
-- [filter], :RecallRead <cursor> [mode], :RecallFiles [path].
local config = require("recall.config")
local client = require("recall.client")
local picker = require("recall.picker")
local transcript = require("recall.transcript")

local M = {}

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO)
end

local function fail(err)
  if err then
    vim.schedule(function()
      notify(err, vim.log.levels.ERROR)
    end)
  end
end

local function one_line(s, width)
  s = tostring(s or ""):gsub("%s+", " "):gsub("^ ", "")
  if vim.fn.strchars(s) > width then
    s = vim.fn.strcharpart(s, 0, width - 1) .. "…"
  end
  return s
end

-- "2026-11-29T18:54:47.735Z" -> "2026-11-29 18:54"
local function short_time(t)
  if type(t) ~= "string" then
    return ""
  end
  local d, hm = t:match("^(%d%d%d%d%-%d%d%-%d%d)T(%d%d:%d%d)")
  return d and (d .. " " .. hm) or t
end

local function short_dir(dir)
  if type(dir) ~= "string" or dir == "" then
    return ""
  end
  return vim.fn.fnamemodify(dir, ":~")
end

-- Labels (also what the tests assert on) --------------------------------

function M.hit_label(hit)
  local what = hit.tool and hit.tool ~= "" and (hit.tool .. " " .. (hit.kind or "")) or (hit.role or hit.kind or "")
  return string.format("%s · %s · %s — %s", one_line(hit.title, 60), vim.trim(what), short_time(hit.time), one_line(hit.snippet, 140))
end

function M.session_label(s)
  local counts = string.format("%d msgs", tonumber(s.messages) or 0)
  if s.archived then
    counts = counts .. ", archived"
  end
  return string.format("%s  (%s · %s · %s)", one_line(s.title ~= "" and s.title or s.id, 70), counts, short_time(s.updated), short_dir(s.directory))
end

local function hit_preview(hit)
  local lines = { "# " .. (hit.title or hit.sessionId), "", "`" .. hit.sessionId .. "` · " .. short_dir(hit.directory) .. " · " .. short_time(hit.time), "" }
  vim.list_extend(lines, vim.split(hit.snippet or "", "\n", { plain = true }))
  return lines
end

local function session_preview(s)
  local lines = { "# " .. (s.title or s.id), "", "`" .. s.id .. "` · " .. short_dir(s.directory), "" }
  table.insert(lines, string.format("%s messages, %s turns, %s tool calls; updated %s", s.messages or 0, s.turns or 0, s.toolCalls or 0, short_time(s.updated)))
  if s.firstPrompt then
    vim.list_extend(lines, { "", "> " .. one_line(s.firstPrompt, 500) })
  end
  for _, child in ipairs(s.children or {}) do
    table.insert(lines, "- subagent: " .. (child.title or child.id))
  end
  return lines
end

-- The text a hit matched, to put the cursor on in the transcript: the
-- longest highlight (rune offsets into the snippet), else the query.
local function hit_focus(hit, query)
  local best = ""
  for _, r in ipairs(hit.highlights or {}) do
    local piece = vim.fn.strcharpart(hit.snippet or "", r[1], r[2] - r[1])
    if #piece > #best then
      best = piece
    end
  end
  if best ~= "" then
    return best
  end
  return (query or ""):match("[%w_%.%-/]+")
end

-- Opening ------------------------------------------------------------------

function M.open_hit(hit, query)
  local name = hit.messageId and hit.messageId ~= "" and transcript.session_name(hit.sessionId, hit.messageId)
    or transcript.read_name(hit.cursor)
  return transcript.open(name, { jump = hit_focus(hit, query) })
end

function M.open_session(s)
  return transcript.open(transcript.session_name(s.id))
end

-- Commands -----------------------------------------------------------------

-- search runs `query` (asks for it when nil) and shows the hits in a picker.
-- opts: limit, and any recall/search param (directory, role, tool, mode, …).
function M.search(query, opts)
  if query == nil then
    vim.ui.input({ prompt = "Recall search: " }, function(input)
      if input ~= nil then
        M.search(input, opts)
      end
    end)
    return
  end
  local params = vim.tbl_extend("force", { query = query, limit = config.options.search_limit }, opts or {})
  client.request("recall/search", params, function(err, res)
    if err then
      return fail(err)
    end
    for _, n in ipairs(res.notices or {}) do
      notify("Recall: " .. tostring(type(n) == "table" and (n.message or vim.inspect(n)) or n))
    end
    local hits = res.hits or {}
    if #hits == 0 then
      notify(string.format("Recall: no hits for %q", query), vim.log.levels.WARN)
      return
    end
    picker.pick(hits, {
      prompt = query == "" and string.format("Recall: recent activity (%d)", #hits)
        or string.format("Recall: %d hit%s for %q (%s)", #hits, #hits == 1 and "" or "s", query, res.mode or "?"),
      kind = "recall.hit",
      format_item = M.hit_label,
      preview = hit_preview,
    }, function(hit)
      M.open_hit(hit, query)
    end)
  end)
end

-- sessions lists sessions (titles fuzzy-filtered by `filter`), newest first;
-- a last "more…" item fetches the next page.
function M.sessions(filter, opts)
  local params = vim.tbl_extend("force", { limit = config.options.sessions_limit }, opts or {})
  if filter and filter ~= "" then
    params.filter = filter
  end
  client.request("recall/sessions", params, function(err, res)
    if err then
      return fail(err)
    end
    local items = vim.deepcopy(res.sessions or {})
    if #items == 0 then
      notify("Recall: no sessions" .. (filter and filter ~= "" and (" match " .. filter) or ""), vim.log.levels.WARN)
      return
    end
    if res.next then
      table.insert(items, { more = res.next })
    end
    picker.pick(items, {
      prompt = "Recall sessions" .. (filter and filter ~= "" and (": " .. filter) or ""),
      kind = "recall.session",
      format_item = function(s)
        return s.more and "more sessions…" or M.session_label(s)
      end,
      preview = function(s)
        return s.more and { "(next page)" } or session_preview(s)
      end,
    }, function(s)
      if s.more then
        M.sessions(filter, vim.tbl_extend("force", opts or {}, { cursor = s.more }))
      else
        M.open_session(s)
      end
    end)
  end)
end

-- read opens the window a cursor names (every hit and session has one);
-- mode: around|next|prev|head|tail|full, limit: messages in the window.
function M.read(cursor, mode, limit)
  if not cursor or cursor == "" then
    notify("Recall: :RecallRead needs a cursor (from a search hit, a session or a transcript's nav)", vim.log.levels.ERROR)
    return
  end
  -- Also a session id (from a hover) or a recall: URI.
  if cursor:match("^ses_[%w_]+$") then
    return transcript.open(transcript.session_name(cursor))
  end
  local rest = cursor:match("^recall:/+(.+)$")
  if rest then
    return transcript.open("recall://" .. rest)
  end
  return transcript.open(transcript.read_name(cursor, mode, limit))
end

-- file_sessions shows the past sessions that touched `path` (the current
-- file by default). lens: the code lens argument {path, total, sessionIds},
-- used as the list when recall/files fails.
function M.file_sessions(path, lens)
  path = path and path ~= "" and path or vim.api.nvim_buf_get_name(0)
  path = vim.fn.fnamemodify(path, ":p")
  local limit = math.min(math.max(lens and tonumber(lens.total) or config.options.sessions_limit, 1), 200)
  client.request("recall/files", { path = path, limit = limit }, function(err, res)
    local items = res and res.sessions or {}
    if err then
      if not (lens and lens.sessionIds) then
        return fail(err)
      end
      items = {}
      for _, id in ipairs(lens.sessionIds) do
        table.insert(items, { id = id, title = id })
      end
    end
    if #items == 0 then
      notify("Recall: no past session touched " .. path, vim.log.levels.WARN)
      return
    end
    picker.pick(items, {
      prompt = string.format("Recall: %d sessions touched %s", res and res.total or #items, vim.fn.fnamemodify(path, ":~:.")),
      kind = "recall.session",
      format_item = M.session_label,
      preview = session_preview,
    }, M.open_session)
  end)
end

-- Attaching ----------------------------------------------------------------

local function wants(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return false
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return false
  end
  local fts = config.options.filetypes
  return fts == nil or vim.tbl_contains(fts, vim.bo[bufnr].filetype)
end

-- attach starts the server if needed and attaches it to bufnr (default: the
-- current buffer), so hover and code lenses work there.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local c, err = client.attach(bufnr)
  if not c and not M._start_failed then
    M._start_failed = true -- say it once, not on every buffer
    fail(err)
  end
  return c
end

function M.setup(opts)
  config.set(opts)
  local group = vim.api.nvim_create_augroup("RecallAttach", { clear = true })
  if config.options.autostart then
    vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "FileType" }, {
      group = group,
      callback = function(args)
        if wants(args.buf) then
          M.attach(args.buf)
        end
      end,
    })
    -- Buffers opened before setup ran (lazy loading).
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(b) and wants(b) then
        M.attach(b)
      end
    end
  end
  return M
end

M.client = client
M.transcript = transcript
M.config = config

return M
