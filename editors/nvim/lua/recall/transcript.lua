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

function M.session_name(session_id, around)
  local name = "recall://session/" .. session_id
  if around and around ~= "" then
    name = name .. "?around=" .. around
  end
  return name
end

function M.read_name(cursor, mode, limit)
  local q = {}
  if mode and mode ~= "" then
    table.insert(q, "mode=" .. mode)
  end
  if tonumber(limit) then
    table.insert(q, "limit=" .. tonumber(limit))
  end
  return "recall://read/" .. cursor .. (#q > 0 and ("?" .. table.concat(q, "&")) or "")
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
  vim.keymap.set("n", "q", "<cmd>bdelete<cr>", vim.tbl_extend("force", opts, { desc = "Recall: close" }))
end

-- load fills bufnr from the server (the BufReadCmd of recall: names).
function M.load(bufnr, name)
  local bo = function(k, v)
    vim.bo[bufnr][k] = v
  end
  bo("buftype", "nofile")
  bo("swapfile", false)
  bo("bufhidden", "hide")
  local method, params = M.request_for(name)
  local result, err
  if method then
    result, err = client.request_sync(method, params, config.options.timeout_ms)
  else
    err = "Recall: " .. params
  end
  if not result then
    set_lines(bufnr, { "Recall could not open " .. name, "", err })
    vim.notify(err, vim.log.levels.ERROR)
  else
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
  end
  bo("filetype", "markdown")
  nav_keymaps(bufnr)
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
  if opts.jump and opts.jump ~= "" then
    local pattern = "\\V\\c" .. vim.fn.escape(opts.jump, "\\")
    vim.fn.cursor(1, 1)
    if vim.fn.search(pattern, "cW") > 0 then
      vim.cmd("normal! zz")
    end
  end
  return vim.api.nvim_get_current_buf()
end

return M
