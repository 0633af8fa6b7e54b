-- What the client does on its own: client-side commands, server
-- notifications, and per-buffer setup when it attaches.
local config = require("recall.config")

local M = {}

local has010 = vim.fn.has("nvim-0.10") == 1

local function attached(bufnr)
  local c = require("recall.client").current()
  return c ~= nil and c.initialized and vim.lsp.buf_is_attached(bufnr, c.id)
end

-- refresh_codelens asks for the lenses of bufnr (the current buffer on
-- Neovim < 0.10, whose refresh() only knows the current one). Only once the
-- client is attached and initialized: 0.7 never clears its "refresh in
-- flight" flag for a buffer with no client to answer.
function M.refresh_codelens(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if not config.options.codelens or not attached(bufnr) then
    return
  end
  if has010 then
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
}

M.lsp_handlers = {
  -- This server has something to say only on ids; with other servers
  -- attached too, its empty answer must not pop "No information available"
  -- (Neovim 0.8-0.10 handle each client's hover answer on its own).
  ["textDocument/hover"] = function(err, result, ctx, conf)
    if err or not (result and result.contents) then
      return
    end
    return vim.lsp.handlers["textDocument/hover"](err, result, ctx, conf)
  end,
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
  if config.options.codelens and bufnr then
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
