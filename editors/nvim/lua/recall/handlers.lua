-- What the client does on its own: client-side commands, server
-- notifications, and per-buffer setup when it attaches.
local config = require("recall.config")

local M = {}

local has010 = vim.fn.has("nvim-0.10") == 1

local function attached(bufnr)
  local c = require("recall.client").current()
  return c ~= nil and c.initialized and vim.lsp.buf_is_attached(bufnr, c.id)
end

-- Transcripts are attached for hover only; their lenses would be empty.
local function is_transcript(bufnr)
  return vim.api.nvim_buf_get_name(bufnr):match("recall:/") ~= nil
end
M.is_transcript = is_transcript

-- refresh_codelens asks for the lenses of bufnr (the current buffer on
-- Neovim < 0.10, whose refresh() only knows the current one). Only once the
-- client is attached and initialized: 0.7 never clears its "refresh in
-- flight" flag for a buffer with no client to answer. Neovim 0.12 keeps
-- lenses fresh itself once enabled for a buffer (it asks again on edits
-- and on the server's workspace/codeLens/refresh) and deprecates refresh().
function M.refresh_codelens(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if not config.options.codelens or not attached(bufnr) or is_transcript(bufnr) then
    return
  end
  if vim.lsp.codelens.enable then
    if not vim.lsp.codelens.is_enabled({ bufnr = bufnr }) then
      vim.lsp.codelens.enable(true, { bufnr = bufnr })
    end
  elseif has010 then
    pcall(vim.lsp.codelens.refresh, { bufnr = bufnr })
  elseif bufnr == vim.api.nvim_get_current_buf() then
    pcall(vim.lsp.codelens.refresh)
  end
end

-- recall.showFileSessions is a client-side command (lsp/README.md): the lens
-- carries {path, total, sessionIds}; we list those sessions with titles.
M.commands = {
  ["recall.showFileSessions"] = function(command)
    local arg = (command.arguments or {})[1] or {}
    require("recall").file_sessions(arg.path, arg)
  end,
  -- The blame and pitfall lenses: {uri, sessionId, messageId}.
  ["recall.openTranscript"] = function(command)
    local arg = (command.arguments or {})[1] or {}
    require("recall.blame").open_uri(arg.uri)
  end,
}

M.lsp_handlers = {
  -- Errors and warnings (history unreadable, skipped rows) also reach
  -- :messages; everything still goes to the LSP log as usual.
  ["window/logMessage"] = function(err, result, ctx, conf)
    if result and result.type and result.type <= 2 then
      vim.schedule(function()
        vim.notify("Recall: " .. tostring(result.message), result.type == 1 and vim.log.levels.ERROR or vim.log.levels.WARN)
      end)
    end
    return vim.lsp.handlers["window/logMessage"](err, result, ctx, conf)
  end,
  -- A background sync changed the index: lenses may have new counts.
  ["recall/indexUpdated"] = function()
    vim.schedule(function()
      M.refresh_codelens()
    end)
  end,
}

-- This server has something to say only on ids; with other servers
-- attached too, its empty answer must not pop "No information available"
-- (Neovim 0.7-0.10 handle each client's hover answer on its own; 0.11+
-- merges the answers in vim.lsp.buf.hover and never calls this handler).
if vim.fn.has("nvim-0.11") == 0 then
  M.lsp_handlers["textDocument/hover"] = function(err, result, ctx, conf)
    if err or not (result and result.contents) then
      return
    end
    return vim.lsp.handlers["textDocument/hover"](err, result, ctx, conf)
  end
end

-- Following the "Open transcript" link of a hover: K shows the hover, K
-- again enters its float, and <CR> (or gx) there opens the recall: link
-- under the cursor, else the float's first one.
local LINK = "recall:/[^%s%)%]>\"'`]+"

function M.link_under_cursor()
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local line = vim.api.nvim_get_current_line()
  for s, link, e in line:gmatch("()(" .. LINK .. ")()") do
    if col + 1 >= s and col + 1 < e then
      return link
    end
  end
  local first = line:match(LINK)
  if first then
    return first
  end
  for i, l in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
    if i ~= row and l:match(LINK) then
      return l:match(LINK)
    end
  end
  return nil
end

function M.follow_link()
  local link = M.link_under_cursor()
  if not link then
    return false
  end
  local win = vim.api.nvim_get_current_win()
  if vim.api.nvim_win_get_config(win).relative ~= "" then
    vim.api.nvim_win_close(win, true) -- back to the window the hover came from
  end
  require("recall.transcript").open("recall://" .. link:gsub("^recall:/+", ""))
  return true
end

local function map_links(bufnr)
  if vim.b[bufnr].recall_links then
    return
  end
  vim.b[bufnr].recall_links = true
  for _, lhs in ipairs({ "<CR>", "gx" }) do
    vim.keymap.set("n", lhs, function()
      if not M.follow_link() then
        vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(lhs, true, false, true), "n", false)
      end
    end, { buffer = bufnr, desc = "Recall: open the transcript link" })
  end
end

vim.api.nvim_create_autocmd("WinEnter", {
  group = vim.api.nvim_create_augroup("RecallHoverLinks", { clear = true }),
  callback = function()
    local win = vim.api.nvim_get_current_win()
    if vim.api.nvim_win_get_config(win).relative == "" then
      return
    end
    local buf = vim.api.nvim_win_get_buf(win)
    for _, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, 50, false)) do
      if l:find("recall:/session/", 1, true) then
        return map_links(buf)
      end
    end
  end,
})

local group = vim.api.nvim_create_augroup("RecallCodeLens", { clear = true })

function M.on_attach(client, bufnr)
  if config.options.keymaps and not has010 and vim.fn.maparg("K", "n") == "" then
    -- Hover on ids only: elsewhere K keeps doing what 'keywordprg' says.
    vim.keymap.set("n", "K", function()
      local word = vim.fn.expand("<cword>")
      if word:match("^ses_%w") or word:match("^msg_%w") or word:match("^prt_%w") then
        vim.lsp.buf.hover()
      else
        vim.cmd("normal! " .. (vim.v.count > 0 and vim.v.count or "") .. "K")
      end
    end, { buffer = bufnr, desc = "Recall: hover on session/message ids, else keywordprg" })
  end
  if config.options.codelens and bufnr and not is_transcript(bufnr) then
    vim.api.nvim_clear_autocmds({ group = group, buffer = bufnr })
    vim.api.nvim_create_autocmd({ "BufEnter", "InsertLeave", "BufWritePost" }, {
      group = group,
      buffer = bufnr,
      callback = function(args)
        M.refresh_codelens(args.buf)
      end,
    })
    -- on_attach may run before the attach is recorded; refresh right after.
    vim.schedule(function()
      if vim.api.nvim_buf_is_valid(bufnr) then
        M.refresh_codelens(bufnr)
      end
    end)
  end
end

return M
