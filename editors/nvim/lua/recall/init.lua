-- Recall for Neovim: search and read past OpenCode sessions through the
-- `recall lsp` server (see lsp/README.md for the wire contract).
--
--   require("recall").setup{ db = "~/.local/share/opencode/opencode.db" }
--
-- Commands (plugin/recall.lua): :RecallSearch [query], :RecallSessions
-- [filter], :RecallRead <cursor> [mode], :RecallFiles [path], :RecallBlame,
-- :RecallBlameOpen, :RecallCite [target], :RecallResume [target],
-- :RecallNext / :RecallPrev.
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

-- progress shows what is under way ("Recall: searching …") in the command
-- line without adding to :messages, and in g:recall_status for statuslines;
-- nil clears it.
local function progress(msg)
  vim.g.recall_status = msg or ""
  if msg then
    vim.api.nvim_echo({ { msg, "Comment" } }, false, {})
  elseif vim.fn.mode() == "n" then
    vim.api.nvim_echo({ { "" } }, false, {})
  end
end
M._progress = progress


-- clip cuts s to at most width display cells, marking the cut with "…".
local function clip(s, width)
  if vim.fn.strdisplaywidth(s) <= width then
    return s
  end
  local n = width - 1
  local cut = vim.fn.strcharpart(s, 0, n)
  while n > 0 and vim.fn.strdisplaywidth(cut) > width - 1 do
    n = n - 1
    cut = vim.fn.strcharpart(s, 0, n)
  end
  return cut .. "…"
end

-- one_line squeezes s to one line of at most width display cells.
local function one_line(s, width)
  s = tostring(s or ""):gsub("%s+", " "):gsub("^ ", "")
  return clip(s, width)
end

-- The server repeats its notices (e.g. "no embedding model") on every
-- search; each is said once per session, not once per search, and after
-- the picker: Neovim's own vim.notify echoes, and a message wider than the
-- command line, or one below the picker's rows, stops the screen at "Press
-- ENTER". There it is one line after a redraw (:checkhealth recall has the
-- full text).
local said = {}
local function notices(list)
  for _, n in ipairs(list or {}) do
    local msg = "Recall: " .. tostring(type(n) == "table" and (n.message or vim.inspect(n)) or n)
    if not said[msg] then
      said[msg] = true
      local info = debug.getinfo(vim.notify, "S")
      local src = info and info.source or ""
      -- vim/_editor.lua up to 0.11; 0.12 compiles it in without a source
      -- name ("?"). A notification plugin's vim.notify is a Lua file.
      local builtin = src == "?" or src:find("vim/_editor.lua", 1, true) or src:find("vim/_core/editor.lua", 1, true)
      local room = math.max((vim.v.echospace or vim.o.columns) - 1, 20)
      if builtin then
        -- After Neovim's own picker (an inputlist) its rows are still on
        -- the screen; a message below them would ask for Enter.
        vim.cmd("redraw")
        vim.api.nvim_echo({ { clip(msg, room) } }, true, {})
      else
        notify(msg)
      end
    end
  end
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

-- hit_kind says what matched: "title", "user"/"assistant" for prose, the
-- tool and its side ("bash output", "edit tool"), or the part's kind.
function M.hit_kind(hit)
  local kind = hit.kind or ""
  local tool = hit.tool or ""
  if kind == "title" then
    return "title"
  elseif tool ~= "" then
    return vim.trim(tool .. " " .. kind)
  elseif kind == "text" and (hit.role or "") ~= "" then
    return hit.role
  end
  return kind ~= "" and kind or (hit.role or "")
end

-- snippet_for is the snippet from a little before its longest highlight
-- (the best match; shorter ones are often near-misses such as ERROR for
-- ERR_QUOTA_7731), so that it shows when only part of the snippet fits.
local function snippet_for(hit, room)
  local snip = tostring(hit.snippet or "")
  local first, longest = nil, -1
  for _, r in ipairs(hit.highlights or {}) do
    local a, b = tonumber(r[1]), tonumber(r[2])
    if a and b and b - a > longest then
      first, longest = a, b - a
    end
  end
  local lead = math.floor(room / 4)
  if first and first > lead then
    snip = "…" .. vim.fn.strcharpart(snip, first - lead):gsub("^…", "")
  end
  return one_line(snip, room)
end

-- hit_label is one line: title · kind · time · snippet, clipped to width
-- (default: the editor's width less what a picker puts before a row).
function M.hit_label(hit, width)
  width = width or math.max(vim.o.columns - 6, 40)
  local head = string.format("%s · %s · %s · ", one_line(hit.title, math.min(60, math.floor(width * 0.4))), M.hit_kind(hit), short_time(hit.time))
  local room = width - vim.fn.strdisplaywidth(head)
  return clip(head .. snippet_for(hit, math.max(room, 10)), width)
end

-- dedupe drops hits a picker would show twice: the same cursor (a tool
-- call and its output are one part) or the same one-line label.
function M.dedupe(hits)
  local seen, out = {}, {}
  for _, h in ipairs(hits) do
    local key = h.cursor or (tostring(h.sessionId) .. "/" .. tostring(h.partId) .. "/" .. tostring(h.kind))
    local label = M.hit_label(h)
    if not seen[key] and not seen[label] then
      seen[key], seen[label] = true, true
      table.insert(out, h)
    end
  end
  return out
end

function M.session_label(s)
  local counts = string.format("%d msgs", tonumber(s.messages) or 0)
  if s.archived then
    counts = counts .. ", archived"
  end
  local width = math.max(vim.o.columns - 6, 40)
  local label = string.format("%s  (%s · %s · %s)", one_line(s.title ~= "" and s.title or s.id, math.min(70, math.floor(width * 0.5))), counts, short_time(s.updated), short_dir(s.directory))
  return clip(label, width)
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
  require("recall.blame").last_hit = hit
  local bufnr = transcript.open(name, { jump = hit_focus(hit, query) })
  -- ]h / [h (:RecallNext / :RecallPrev) jump between the query's hits.
  if query and query ~= "" then
    transcript.on_loaded(bufnr, function()
      require("recall.blame").set_query(bufnr, query)
    end)
  end
  return bufnr
end

function M.open_session(s)
  require("recall.blame").last_hit = s
  return transcript.open(transcript.session_name(s.id))
end

-- blame shows which past session wrote each line of the buffer (toggle).
function M.blame(bufnr, cb)
  return require("recall.blame").toggle(bufnr, cb)
end

-- cite copies a one-line citation (target: a ses_/msg_ id, cursor or
-- recall: URI; default the transcript's message under the cursor, else the
-- hit last picked).
function M.cite(target, done)
  return require("recall.blame").copy_citation(target, done)
end

-- resume continues a session in OpenCode in a terminal (same targets).
function M.resume(target, done)
  return require("recall.blame").resume(target, done)
end

-- Commands -----------------------------------------------------------------

-- The search in flight; a newer one cancels it (its answer would arrive
-- late and open a stale picker).
local searching

-- search runs `query` (asks for it when nil) and shows the hits in a picker.
-- opts: limit, and any recall/search param (directory, role, tool, mode, …).
-- It returns at once; the picker opens when the answer comes.
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
  if searching then
    searching.handle.cancel()
  end
  local token = {}
  searching = token
  progress(query == "" and "Recall: listing recent activity…" or string.format("Recall: searching %q…", query))
  token.handle = client.request("recall/search", params, function(err, res)
    if searching ~= token then
      return -- superseded
    end
    searching = nil
    progress(nil)
    if err then
      return fail(err)
    end
    local hits = M.dedupe(res.hits or {})
    if #hits == 0 then
      notify(string.format("Recall: no hits for %q", query), vim.log.levels.WARN)
      return notices(res.notices)
    end
    picker.pick(hits, {
      prompt = query == "" and string.format("Recall: recent activity (%d)", #hits)
        or string.format("Recall: %d hit%s for %q (%s)", #hits, #hits == 1 and "" or "s", query, res.mode or "?"),
      kind = "recall.hit",
      format_item = function(hit)
        return M.hit_label(hit)
      end,
      preview = hit_preview,
    }, function(hit)
      M.open_hit(hit, query)
    end)
    notices(res.notices)
  end)
end

-- sessions lists sessions (titles fuzzy-filtered by `filter`), newest first;
-- a last "more…" item fetches the next page.
function M.sessions(filter, opts)
  local params = vim.tbl_extend("force", { limit = config.options.sessions_limit }, opts or {})
  if filter and filter ~= "" then
    params.filter = filter
  end
  progress("Recall: listing sessions…")
  client.request("recall/sessions", params, function(err, res)
    progress(nil)
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
-- A session id or a recall: URI works too, with the same mode and limit.
function M.read(cursor, mode, limit)
  if not cursor or cursor == "" then
    notify("Recall: :RecallRead needs a cursor (from a search hit, a session or a transcript's nav)", vim.log.levels.ERROR)
    return
  end
  if limit ~= nil and limit ~= "" and not tonumber(limit) then
    notify(string.format("Recall: :RecallRead limit must be a number of messages, got %q", tostring(limit)), vim.log.levels.ERROR)
    return
  end
  if cursor:match("^ses_[%w_]+$") then
    return transcript.open(transcript.session_name(cursor, nil, mode, limit))
  end
  local rest = cursor:match("^recall:/+(.+)$")
  if rest then
    local name = "recall://" .. rest
    local extra = transcript.query(nil, mode, limit)
    if extra ~= "" then
      name = name .. (name:find("?", 1, true) and ("&" .. extra:sub(2)) or extra)
    end
    return transcript.open(name)
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
  progress("Recall: finding the sessions that touched " .. vim.fn.fnamemodify(path, ":t") .. "…")
  client.request("recall/files", { path = path, limit = limit }, function(err, res)
    progress(nil)
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

-- restart stops the server and starts it again (after a failed start, or
-- to pick up a new binary), attaching the buffers setup attaches.
function M.restart()
  client.stop()
  client.reset()
  M._start_failed = nil
  vim.defer_fn(function()
    local any = false
    if config.options.autostart and M._setup_done then
      for _, b in ipairs(vim.api.nvim_list_bufs()) do
        if vim.api.nvim_buf_is_loaded(b) and wants(b) then
          any = M.attach(b) ~= nil or any
        end
      end
    end
    if not any then
      client.when_ready(function(_, err)
        if err then
          fail(err)
        else
          notify("Recall: the server is running")
        end
      end)
    end
  end, 100)
end

function M.setup(opts)
  config.set(opts)
  client.reset()
  M._start_failed = nil
  M._setup_done = true
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
