-- recall:// buffers: read-only markdown transcripts served by the server.
--
--   recall://session/<ses_id>[?around=<msg_id>][&mode=…][&limit=N]
--       -> recall/transcript {uri = "recall:/session/…"} (lsp/README.md)
--   recall://read/<cursor>[?mode=…][&limit=N]
--       -> recall/read {cursor, mode, limit, format = "markdown"}
--
-- recall:/session/… (the server's own URIs, e.g. from workspace/symbol or a
-- hover link) load the same way.
local client = require("recall.client")
local config = require("recall.config")

local M = {}

-- query is "?around=…&mode=…&limit=N" with the parts given, or "".
function M.query(around, mode, limit)
  local q = {}
  if around and around ~= "" then
    table.insert(q, "around=" .. around)
  end
  if mode and mode ~= "" then
    table.insert(q, "mode=" .. mode)
  end
  if tonumber(limit) then
    table.insert(q, "limit=" .. tonumber(limit))
  end
  return #q > 0 and ("?" .. table.concat(q, "&")) or ""
end

-- session_name is the buffer name of a session's transcript; around (a
-- msg_ id), mode and limit are optional.
function M.session_name(session_id, around, mode, limit)
  return "recall://session/" .. session_id .. M.query(around, mode, limit)
end

function M.read_name(cursor, mode, limit)
  return "recall://read/" .. cursor .. M.query(nil, mode, limit)
end

local function parse_query(q)
  local out = {}
  for pair in (q or ""):gmatch("[^&]+") do
    local k, v = pair:match("^([^=]+)=(.*)$")
    if k then
      out[k] = v
    end
  end
  return out
end

-- request_for maps a buffer name to the request that fills it.
function M.request_for(name)
  -- A recall:/… name may have been made absolute by Neovim (/cwd/recall:/…).
  local rest = name:match("recall:/+(.*)$")
  if not rest then
    return nil, "not a recall: name: " .. name
  end
  local kind, tail = rest:match("^(%a+)/(.+)$")
  if kind == "session" then
    return "recall/transcript", { uri = "recall:/session/" .. tail }
  elseif kind == "read" then
    local cursor, query = tail:match("^([^?]+)%??(.*)$")
    local q = parse_query(query)
    return "recall/read", {
      cursor = cursor,
      mode = q.mode,
      limit = tonumber(q.limit),
      format = "markdown",
    }
  end
  return nil, "unknown recall: name " .. name .. " (use recall://session/<ses_id> or recall://read/<cursor>)"
end

local function set_lines(bufnr, lines)
  vim.bo[bufnr].modifiable = true
  vim.bo[bufnr].readonly = false
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modified = false
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].readonly = true
end

local function nav_keymaps(bufnr)
  local function go(which)
    return function()
      local ok, info = pcall(vim.api.nvim_buf_get_var, bufnr, "recall")
      local cursor = ok and info.nav and info.nav[which]
      if not cursor or cursor == "" then
        vim.notify("Recall: no " .. which .. " window", vim.log.levels.INFO)
        return
      end
      -- Same window size as this buffer's (a limit in its name).
      local limit = vim.api.nvim_buf_get_name(bufnr):match("[?&]limit=(%d+)")
      M.open(M.read_name(cursor, nil, limit), { cmd = "edit" })
    end
  end
  local opts = { buffer = bufnr, silent = true }
  local function map(lhs, which, desc)
    vim.keymap.set("n", lhs, go(which), vim.tbl_extend("force", opts, { desc = desc }))
  end
  map("]r", "next", "Recall: next messages")
  map("[r", "prev", "Recall: previous messages")
  map("[R", "head", "Recall: first messages")
  map("]R", "tail", "Recall: last messages")
  -- ]r/[r page the window; ]h/[h move between the search query's hits.
  vim.keymap.set("n", "]h", function()
    require("recall.blame").jump(1)
  end, vim.tbl_extend("force", opts, { desc = "Recall: next hit of the query" }))
  vim.keymap.set("n", "[h", function()
    require("recall.blame").jump(-1)
  end, vim.tbl_extend("force", opts, { desc = "Recall: previous hit of the query" }))
  vim.keymap.set("n", "q", "<cmd>bdelete<cr>", vim.tbl_extend("force", opts, { desc = "Recall: close" }))
end

-- after_load[bufnr]: what to do once the buffer's text arrived (put the
-- cursor on a hit).
local after_load = {}

local function loaded(bufnr)
  local fns = after_load[bufnr] or {}
  after_load[bufnr] = nil
  for _, f in ipairs(fns) do
    f()
  end
  vim.api.nvim_exec_autocmds("User", { pattern = "RecallTranscriptLoaded", modeline = false })
end

-- load fills bufnr from the server (the BufReadCmd of recall: names). It
-- does not wait: the buffer says "loading" until the answer comes, and
-- b:recall is set when it did ({ error = … } when it failed).
function M.load(bufnr, name)
  local bo = function(k, v)
    vim.bo[bufnr][k] = v
  end
  bo("buftype", "nofile")
  bo("swapfile", false)
  bo("bufhidden", "hide")
  bo("filetype", "markdown")
  nav_keymaps(bufnr)
  vim.b[bufnr].recall = nil
  local method, params = M.request_for(name)
  local function show_error(err)
    set_lines(bufnr, { "Recall could not open " .. name, "", err })
    vim.b[bufnr].recall = { error = err }
    vim.notify(err, vim.log.levels.ERROR)
    loaded(bufnr)
  end
  if not method then
    return show_error("Recall: " .. params)
  end
  set_lines(bufnr, { "Recall: loading " .. name .. "…" })
  client.request(method, params, function(err, result)
    if not vim.api.nvim_buf_is_valid(bufnr) then
      return
    end
    if err or not result then
      return show_error(err or ("Recall: " .. method .. ": no answer"))
    end
    set_lines(bufnr, vim.split(result.text or "", "\n", { plain = true }))
    local s = result.session or {}
    vim.api.nvim_buf_set_var(bufnr, "recall", {
      session = s.id,
      title = s.title,
      directory = s.directory,
      range = result.range,
      anchor = result.anchor,
      nav = result.nav,
    })
    -- Attached, the server knows the text: hover works on the ids in it.
    require("recall.client").attach(bufnr)
    loaded(bufnr)
  end)
end

-- on_loaded runs fn once bufnr's text is there (at once if it is).
function M.on_loaded(bufnr, fn)
  local info = vim.b[bufnr].recall
  if info ~= nil then
    return fn()
  end
  after_load[bufnr] = after_load[bufnr] or {}
  table.insert(after_load[bufnr], fn)
end

local function jump_to(bufnr, text)
  local pattern = "\\V\\c" .. vim.fn.escape(text, "\\")
  for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
    vim.api.nvim_win_call(win, function()
      vim.fn.cursor(1, 1)
      if vim.fn.search(pattern, "cW") > 0 then
        vim.cmd("normal! zz")
      end
    end)
    return
  end
end

-- open shows a recall: buffer. opts.cmd: edit|split|vsplit|tabedit (default
-- the open option; split when the current buffer has unsaved changes);
-- opts.jump: literal text to put the cursor on.
function M.open(name, opts)
  opts = opts or {}
  local cmd = opts.cmd or config.options.open
  if cmd == "edit" and vim.bo.modified and not vim.o.hidden then
    cmd = "split"
  end
  local existing
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b) == name and vim.api.nvim_buf_is_loaded(b) then
      existing = b
    end
  end
  if existing then
    -- Show it again with fresh text (the history may have grown).
    local show = { edit = "buffer", split = "sbuffer", vsplit = "vertical sbuffer", tabedit = "tab sbuffer" }
    vim.cmd((show[cmd] or "buffer") .. " " .. existing)
    M.load(existing, name)
  else
    vim.cmd(cmd .. " " .. vim.fn.fnameescape(name))
  end
  local bufnr = vim.api.nvim_get_current_buf()
  if opts.jump and opts.jump ~= "" then
    M.on_loaded(bufnr, function()
      jump_to(bufnr, opts.jump)
    end)
  end
  return bufnr
end

return M
